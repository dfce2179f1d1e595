// Console capture for the Firefox adapter, which Runtime.enable and
// Log.enable both switch on: a MAIN-world hook (firefox-console.js) records
// console calls and uncaught exceptions, the isolated-world relay
// (firefox-isolated.js) sends them here, and they leave as
// Runtime.consoleAPICalled and Runtime.exceptionThrown. Also the Log
// domain's methods; Firefox has no source of Log.entryAdded.

import { unsupportedReason } from './urlrules.js';
import { exceptionDetails } from './firefox-runtime.js';
import { ISOLATED_FILE } from './cdp-firefox-scripting.js';

/** The MAIN-world console hook. */
export const CONSOLE_FILE = 'lib/firefox-console.js';
const CONSOLE_SCRIPT_IDS = ['reins-console-main', 'reins-console-isolated'];
// A console call's stack keeps at most this many frames (the page sends 8).
export const MAX_STACK_FRAMES = 8;

const captures = (st) => st.domains.has('Runtime') || st.domains.has('Log');

/** The match pattern of a page's origin (any port), for http(s) pages only. */
function originPattern(url) {
  try {
    const u = new URL(url);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') return null;
    return `${u.protocol}//${u.hostname}/*`;
  } catch {
    return null;
  }
}

/**
 * @param {import('./cdp-firefox.js').FirefoxShared} fx
 * @returns {{methods:object, consoleSwitch:Function} & object} the Log domain and the switch Runtime.enable shares
 */
export function consoleCapture(fx) {
  const { browser, log, tabs } = fx;

  async function install(tabId, opts = {}) {
    // The relay first, so the hook's records have somewhere to go.
    await fx.isolated(tabId, 'installRelay', [], opts);
    const r = await fx.inject(tabId, { world: 'MAIN', files: [CONSOLE_FILE], ...opts });
    if (r.error) log.warn('reins: console hook failed', r.error);
  }

  let registered = null;
  let syncing = Promise.resolve();

  /**
   * Registers the console hook to run at document_start on the origins of
   * the tabs whose console is captured, so a page's first messages are not
   * lost to the time an injection takes; every other site is left alone.
   */
  function sync() {
    syncing = syncing.then(async () => {
      const sc = browser.scripting;
      if (!sc || typeof sc.registerContentScripts !== 'function') return;
      const want = new Set();
      for (const [tabId, st] of tabs) {
        if (!captures(st)) continue;
        const p = originPattern(fx.navs.get(tabId)?.url);
        if (p) want.add(p);
      }
      const matches = [...want].sort();
      const key = matches.join(' ');
      if (key === registered) return;
      try {
        const existing = (await sc.getRegisteredContentScripts({ ids: CONSOLE_SCRIPT_IDS })).map((x) => x.id);
        if (existing.length > 0) await sc.unregisterContentScripts({ ids: existing });
        if (matches.length > 0) {
          await sc.registerContentScripts([
            { id: CONSOLE_SCRIPT_IDS[0], matches, js: [CONSOLE_FILE], runAt: 'document_start', world: 'MAIN', allFrames: false, persistAcrossSessions: false },
            { id: CONSOLE_SCRIPT_IDS[1], matches, js: [ISOLATED_FILE], runAt: 'document_start', allFrames: false, persistAcrossSessions: false },
          ]);
        }
        registered = key;
      } catch (err) {
        registered = null;
        log.warn('reins: cannot register console capture', err?.message ?? err);
      }
    });
    return syncing;
  }

  /** Runtime.enable/disable and Log.enable/disable: the domain, then the capture. */
  const consoleSwitch = (domain, on) =>
    fx.domainSwitch(domain, on, async (tabId, enabled) => {
      if (enabled) {
        const n = fx.nav(tabId);
        if (!n.url) n.url = (await browser.tabs.get(tabId)).url ?? null;
        // Console capture starts now; pages that cannot be scripted just
        // have none.
        await install(tabId).catch((err) => log.warn('reins: console capture unavailable', tabId, err?.message ?? err));
      }
      await sync();
    });

  // Console records from the isolated-world relay. The message has no
  // "type", so the service's own onMessage listener ignores it.
  browser.runtime.onMessage.addListener((msg, sender) => {
    const rec = msg && typeof msg === 'object' ? msg.reinsFirefoxPage : null;
    if (!rec || typeof rec !== 'object' || sender.id !== browser.runtime.id || !sender.tab || sender.frameId !== 0) return undefined;
    const tabId = sender.tab.id;
    if (rec.kind === 'console' && Array.isArray(rec.args)) {
      const params = { type: typeof rec.type === 'string' ? rec.type : 'log', args: rec.args, executionContextId: 1, timestamp: Number(rec.timestamp) || fx.now() };
      if (rec.loc && typeof rec.loc.url === 'string') {
        const frames = Array.isArray(rec.loc.frames) && rec.loc.frames.length ? rec.loc.frames.slice(0, MAX_STACK_FRAMES) : [rec.loc];
        params.stackTrace = {
          callFrames: frames.map((f) => ({
            functionName: typeof f?.functionName === 'string' ? f.functionName.slice(0, 200) : '',
            scriptId: '0',
            url: typeof f?.url === 'string' ? f.url.slice(0, 2000) : '',
            lineNumber: f?.lineNumber | 0,
            columnNumber: f?.columnNumber | 0,
          })),
        };
      }
      fx.emitIf(tabId, 'Runtime', 'Runtime.consoleAPICalled', params);
    } else if (rec.kind === 'exception') {
      const details = exceptionDetails(rec.thrown);
      if (rec.promise) details.text = 'Uncaught (in promise)';
      if (typeof rec.url === 'string' && rec.url !== '') details.url = rec.url;
      if (Number.isInteger(rec.line) && rec.line > 0) details.lineNumber = rec.line - 1;
      if (Number.isInteger(rec.col) && rec.col > 0) details.columnNumber = rec.col - 1;
      fx.emitIf(tabId, 'Runtime', 'Runtime.exceptionThrown', { timestamp: Number(rec.timestamp) || fx.now(), exceptionDetails: details });
    }
    return undefined;
  });

  return {
    consoleSwitch,
    methods: {
      'Log.clear': async () => ({}),
      'Log.disable': consoleSwitch('Log', false),
      'Log.enable': consoleSwitch('Log', true),
    },
    beforeNavigate(d) {
      // The page's origin may change: the hook follows it.
      if (tabs.has(d.tabId)) sync();
    },
    committed(d, _loaderId, st) {
      if (st && captures(st) && unsupportedReason(d.url, 'firefox') === '') {
        install(d.tabId, { documentId: d.documentId, immediately: true }).catch(() => {
          // The document may already be gone again.
        });
      }
    },
    released() {
      sync();
    },
  };
}
