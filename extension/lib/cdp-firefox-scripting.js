// Scripts in pages for the Firefox adapter: scripting.executeScript in a
// tab's document (the top one unless a frame or document is named), its
// failures as coded errors, and calls into the adapter's page side
// (firefox-isolated.js) in the isolated world. Every domain that touches a
// page goes through here.

import { WireError, Codes, crashedError } from './frames.js';
import { unsupportedReason } from './urlrules.js';

/** The page side of the adapter, injected into the isolated world on first use. */
export const ISOLATED_FILE = 'lib/firefox-isolated.js';

/** Runs in the isolated world: calls the adapter's page side if present. */
function isolatedCall(op, args) {
  const fx = globalThis.__reinsFx;
  if (!fx) return { missing: true };
  return Promise.resolve(fx[op](...args)).then((value) => ({ value }));
}

/**
 * How long a script that failed for no reason Firefox names waits to learn
 * whether the tab's content process crashed: a script running when it does
 * fails at once, a moment before the crashed-tab page reports its load.
 */
export const CRASH_REPORT_MS = 1000;

/** The coded error of a failed injection, or null when Firefox names no reason. */
function injectError(tabId, m) {
  if (/invalid documentid|no frame|document.*(gone|unload)|frame.*(removed|not found)/i.test(m)) {
    return new WireError(Codes.internal, 'Cannot find context with specified id');
  }
  if (/invalid tab id|no tab with id/i.test(m)) return new WireError(Codes.noSuchTab, `no tab with id ${tabId}`);
  if (/missing host permission|cannot access|not allowed|restricted|privileged|about:/i.test(m)) {
    return new WireError(Codes.restrictedUrl, `tab ${tabId} cannot be scripted: ${m}`);
  }
  return null;
}

/**
 * @param {Pick<import('./cdp-firefox.js').FirefoxShared, 'browser'|'crashed'|'crashWithin'|'errorPage'>} fx
 * @returns {{inject:Function, isolated:Function}}
 */
export function createScripting({ browser, crashed, crashWithin, errorPage }) {
  /** The error of a page Firefox keeps to itself (crashed, or its error page), or null. */
  function ownPageError(tabId) {
    if (crashed(tabId)) return crashedError();
    const shown = errorPage(tabId);
    if (shown !== '') return new WireError(Codes.navigationFailed, `tab ${tabId} shows Firefox's error page for ${shown}; navigate to load a page`);
    return null;
  }

  /** Runs a function or files in a document of the tab (by default its top one); returns the InjectionResult (error included). */
  async function inject(tabId, { func, args, files, world = 'ISOLATED', documentId, frameId = 0, immediately = false }) {
    const target = documentId ? { tabId, documentIds: [documentId] } : { tabId, frameIds: [frameId] };
    const details = { target, world };
    if (files) details.files = files;
    else {
      details.func = func;
      details.args = args ?? [];
    }
    if (immediately) details.injectImmediately = true;
    let results;
    try {
      results = await browser.scripting.executeScript(details);
    } catch (err) {
      const own = ownPageError(tabId);
      if (own) throw own;
      const m = err?.message ?? String(err);
      const e = injectError(tabId, m);
      if (!e) {
        if (await crashWithin(tabId, CRASH_REPORT_MS)) throw crashedError();
        throw new WireError(Codes.internal, `scripting tab ${tabId} failed: ${m}`);
      }
      if (e.code === Codes.restrictedUrl) {
        // Between two documents (a navigation under way) Firefox refuses
        // scripts as if the page were off limits; a tab whose URL is
        // allowed is only changing pages.
        const tab = await browser.tabs.get(tabId).catch(() => null);
        if (tab && typeof tab.url === 'string' && /^https?:/.test(tab.url) && unsupportedReason(tab.url, 'firefox') === '') {
          throw new WireError(Codes.internal, `Cannot find context with specified id: tab ${tabId} is between documents`);
        }
      }
      throw e;
    }
    const r = results?.[0];
    if (!r) {
      // The crashed-tab and error pages take scripts and run none.
      throw ownPageError(tabId) ?? new WireError(Codes.internal, `tab ${tabId}: the page did not run the script`);
    }
    return r;
  }

  /** Calls the adapter's page side (firefox-isolated.js), installing it first when the document lacks it. */
  async function isolated(tabId, op, args, opts = {}) {
    const call = async () => {
      const r = await inject(tabId, { func: isolatedCall, args: [op, args], ...opts });
      if (r.error !== undefined && r.error !== null) {
        throw new WireError(Codes.internal, `page script ${op} failed: ${r.error?.message ?? r.error}`);
      }
      return r.result;
    };
    let out = await call();
    if (out && out.missing) {
      const r = await inject(tabId, { files: [ISOLATED_FILE], ...opts });
      if (r.error !== undefined && r.error !== null) {
        throw new WireError(Codes.internal, `installing the page script failed: ${r.error?.message ?? r.error}`);
      }
      out = await call();
    }
    if (!out || out.missing) throw new WireError(Codes.internal, 'the page script did not install');
    return out.value;
  }

  return { inject, isolated };
}
