// The engine seam for Chromium: the DevTools Protocol through chrome.debugger.
// A Firefox adapter implements the same shape without chrome.debugger, so
// nothing outside this file touches that API.

export const CDP_VERSION = '1.3';

/**
 * @typedef {object} CdpAdapter
 * @property {'chromium'|'firefox'} engine
 * @property {(tabId:number) => Promise<void>} attach
 * @property {(tabId:number, method:string, params?:object, sessionId?:string) => Promise<object>} send
 * @property {(tabId:number) => Promise<void>} detach
 * @property {(cb:(tabId:number, method:string, params:any, sessionId?:string) => void) => void} onEvent
 * @property {(cb:(tabId:number, reason:string) => void) => void} onDetach
 * @property {() => Promise<number[]>} attachedTabs tabs with a debugger attached, ours or not
 */

/** @returns {CdpAdapter} */
export function createChromiumCdp(chrome) {
  return {
    engine: 'chromium',
    async attach(tabId) {
      await chrome.debugger.attach({ tabId }, CDP_VERSION);
    },
    async send(tabId, method, params, sessionId) {
      const target = sessionId ? { tabId, sessionId } : { tabId };
      const result = await chrome.debugger.sendCommand(target, method, params ?? {});
      return result ?? {};
    },
    async detach(tabId) {
      await chrome.debugger.detach({ tabId });
    },
    onEvent(cb) {
      chrome.debugger.onEvent.addListener((source, method, params) => {
        if (typeof source.tabId === 'number') cb(source.tabId, method, params, source.sessionId);
      });
    },
    onDetach(cb) {
      chrome.debugger.onDetach.addListener((source, reason) => {
        if (typeof source.tabId === 'number') cb(source.tabId, reason);
      });
    },
    async attachedTabs() {
      const targets = await chrome.debugger.getTargets();
      return targets.filter((t) => t.attached && typeof t.tabId === 'number').map((t) => t.tabId);
    },
  };
}

/**
 * chrome.debugger reports protocol errors as the JSON of the CDP error
 * object; the companion wants just its message.
 */
export function cdpErrorMessage(err) {
  const raw = err && typeof err.message === 'string' ? err.message : String(err);
  try {
    const parsed = JSON.parse(raw);
    if (parsed && typeof parsed.message === 'string') {
      return typeof parsed.data === 'string' && parsed.data !== ''
        ? `${parsed.message}: ${parsed.data}`
        : parsed.message;
    }
  } catch {
    // not JSON: already a plain message
  }
  return raw;
}
