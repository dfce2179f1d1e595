// The engine seam for Firefox: the same shape as cdp-chromium.js
// (attach/send/detach/onEvent/onDetach/attachedTabs), answering the subset of
// the DevTools Protocol that the companion's tool engine and live view use
// with WebExtension APIs, because Firefox has no chrome.debugger.
//
// This file is the core: the state every domain shares (attached tabs and
// their enabled domains, each tab's navigation, the event stream), the
// browser events that move it, and the method table the domains make
// together. One module per protocol domain holds the rest:
//
// - cdp-firefox-runtime.js: Runtime.* and the isolated worlds, through
//   scripting.executeScript (firefox-main.js runs in the page's MAIN world);
// - cdp-firefox-page.js: Page.* navigation, history and load events from
//   tabs and webNavigation;
// - cdp-firefox-capture.js: screenshots and the screencast (tabs.captureTab);
// - cdp-firefox-input.js: Input.* as DOM events synthesized in the isolated
//   world (firefox-input.js plans them, firefox-isolated.js fires them);
// - cdp-firefox-console.js: console capture and the Log domain;
// - cdp-firefox-network.js: Network.* events from webRequest;
// - cdp-firefox-downloads.js: Page.download* events from browser.downloads;
// - cdp-firefox-scripting.js: the injection every domain uses.
//
// Anything else fails with unknown_method naming the method. The methods and
// events the companion uses, and which of them Firefox answers, are listed in
// companion/wire/testdata/cdp_methods.json.

import { WireError, Codes } from './frames.js';
import { HistoryTracker } from './firefox-history.js';
import { errorPageText } from './firefox-runtime.js';
import { createScripting } from './cdp-firefox-scripting.js';
import { consoleCapture } from './cdp-firefox-console.js';
import { runtimeDomain } from './cdp-firefox-runtime.js';
import { pageDomain } from './cdp-firefox-page.js';
import { captureDomain } from './cdp-firefox-capture.js';
import { inputDomain } from './cdp-firefox-input.js';
import { networkDomain } from './cdp-firefox-network.js';
import { downloadsDomain } from './cdp-firefox-downloads.js';

export { ISOLATED_FILE } from './cdp-firefox-scripting.js';
export { TOOLS_HELPER_FILE } from './cdp-firefox-runtime.js';
export { CONSOLE_FILE } from './cdp-firefox-console.js';

const STATE_KEY = 'firefoxCdp';

/**
 * What the core hands every domain module.
 *
 * @typedef {object} FirefoxShared
 * @property {any} browser the WebExtension `browser` global
 * @property {{setTimeout:Function, clearTimeout:Function}} timers
 * @property {{warn:Function}} log
 * @property {() => number} now
 * @property {() => string} randomId
 * @property {typeof fetch} fetch
 * @property {(ms:number) => Promise<void>} sleep
 * @property {Map<number, TabState>} tabs attached tabs
 * @property {(tabId:number) => Nav} nav a tab's navigation, made on first use
 * @property {Map<number, Nav>} navs
 * @property {() => string} mint a new loader id
 * @property {(tabId:number) => string} frameIdOf the main frame's id
 * @property {() => void} persist saves the attached tabs for a background restart
 * @property {(tabId:number, method:string, params:object) => void} emit
 * @property {(tabId:number, domain:string, method:string, params:object) => void} emitIf emits if the domain is enabled
 * @property {(domain:string, on:boolean, then?:(tabId:number, on:boolean) => Promise<void>) => Method} domainSwitch
 * @property {(tabId:number, o:object) => Promise<any>} inject see cdp-firefox-scripting.js
 * @property {(tabId:number, op:string, args:any[], o?:object) => Promise<any>} isolated see cdp-firefox-scripting.js
 * @property {(tabId:number) => boolean} crashed whether the tab shows Firefox's crashed-tab page
 * @property {(tabId:number, ms:number) => Promise<boolean>} crashWithin whether the tab crashed or does so within ms
 * @property {(tabId:number) => string} errorPage the error (a net:: name) whose page the tab shows, or ''
 *
 * @typedef {{domains:Set<string>, lifecycle:boolean, screencast:any}} TabState
 * @typedef {{pending:string|null, loader:string|null, url:string|null, documentId:string|null, history:HistoryTracker}} Nav
 * @typedef {(tabId:number, params:any, st:TabState) => Promise<object>} Method
 *
 * A domain module returns {methods?, ...hooks}; the hooks are called in the
 * order the domains are listed in createFirefoxCdp, with the core's own
 * bookkeeping already done:
 * - beforeNavigate(d): a main-frame navigation starts (webNavigation details);
 * - committed(d, loaderId, st): a new document; st when the tab is attached;
 * - domContentLoaded(d), completed(d), navigationFailed(d): its progress;
 * - errorPage(d, errorText): the committed document is Firefox's error page
 *   for errorText (a net:: name); it loaded;
 * - sameDocument(d, navigationType): a fragment or history API move;
 * - createdNavigationTarget(d): a page opened a tab or window (d.sourceTabId,
 *   d.tabId), reported by the tab event and again by the navigation event;
 * - tabClosed(tabId): the tab is gone, attached or not;
 * - released(tabId, st): an attached tab was detached or closed.
 */

/**
 * @param {any} browser the WebExtension `browser` global
 * @param {{timers?:{setTimeout:Function, clearTimeout:Function}, log?:{warn:Function},
 *   now?:() => number, randomId?:() => string, fetch?:typeof fetch}} [o]
 * @returns {import('./cdp-chromium.js').CdpAdapter & {methods:string[]}}
 */
export function createFirefoxCdp(browser, o = {}) {
  const timers = o.timers ?? globalThis;
  const log = o.log ?? console;
  const eventCbs = [];
  /** @type {Map<number, TabState>} */
  const tabs = new Map();
  /** @type {Map<number, Nav>} */
  const navs = new Map();
  // Tabs whose content process crashed, until their next document, and
  // the calls waiting to learn whether a failure was a crash.
  /** @type {Set<number>} */
  const crashed = new Set();
  /** @type {Map<number, Set<(crashed:boolean) => void>>} */
  const crashWaiters = new Map();
  // Tabs that show Firefox's error page for their document: the error.
  /** @type {Map<number, string>} */
  const errorPages = new Map();
  const randomId = o.randomId ?? (() => globalThis.crypto.randomUUID());
  const runId = randomId().slice(0, 8);
  let nextLoader = 1;

  /** @type {FirefoxShared} */
  const fx = {
    browser,
    timers,
    log,
    now: o.now ?? (() => Date.now()),
    randomId,
    fetch: o.fetch ?? ((...a) => globalThis.fetch(...a)),
    sleep: (ms) => new Promise((r) => timers.setTimeout(r, ms)),
    tabs,
    navs,
    nav(tabId) {
      let n = navs.get(tabId);
      if (!n) {
        n = { pending: null, loader: null, url: null, documentId: null, history: new HistoryTracker() };
        navs.set(tabId, n);
      }
      return n;
    },
    mint: () => `${runId}-${nextLoader++}`,
    frameIdOf: (tabId) => `main-${tabId}`,
    persist,
    emit,
    emitIf(tabId, domain, method, params) {
      const st = tabs.get(tabId);
      if (st && st.domains.has(domain)) emit(tabId, method, params);
    },
    crashed: (tabId) => crashed.has(tabId),
    errorPage: (tabId) => errorPages.get(tabId) ?? '',
    crashWithin(tabId, ms) {
      if (crashed.has(tabId)) return Promise.resolve(true);
      return new Promise((resolve) => {
        let set = crashWaiters.get(tabId);
        if (!set) crashWaiters.set(tabId, (set = new Set()));
        const done = (yes) => {
          timers.clearTimeout(timer);
          set.delete(done);
          if (set.size === 0 && crashWaiters.get(tabId) === set) crashWaiters.delete(tabId);
          resolve(yes);
        };
        const timer = timers.setTimeout(() => done(false), ms);
        set.add(done);
      });
    },
    domainSwitch: (domain, on, then) => async (tabId, _p, st) => {
      if (on) st.domains.add(domain);
      else st.domains.delete(domain);
      persist();
      if (then) await then(tabId, on);
      return {};
    },
  };
  Object.assign(fx, createScripting(fx));

  // The order of the hooks: a new document clears the worlds before the
  // page reports it, and the console hook is installed last.
  const logDomain = consoleCapture(fx);
  const domains = [runtimeDomain(fx, logDomain), pageDomain(fx), captureDomain(fx), inputDomain(fx), networkDomain(fx), downloadsDomain(fx), logDomain];
  const methods = {};
  for (const d of domains) {
    for (const [name, fn] of Object.entries(d.methods ?? {})) {
      if (Object.hasOwn(methods, name)) throw new Error(`Firefox adapter: two domains answer ${name}`);
      methods[name] = fn;
    }
  }
  const hook = (name, ...args) => {
    for (const d of domains) d[name]?.(...args);
  };

  function newState(saved) {
    return {
      domains: new Set(Array.isArray(saved?.domains) ? saved.domains : []),
      lifecycle: saved?.lifecycle === true,
      screencast: null,
    };
  }

  const ready = (async () => {
    try {
      const got = await browser.storage.session.get(STATE_KEY);
      const saved = got?.[STATE_KEY]?.tabs;
      if (saved && typeof saved === 'object') {
        for (const [id, s] of Object.entries(saved)) {
          const tabId = Number(id);
          if (Number.isSafeInteger(tabId)) tabs.set(tabId, newState(s));
        }
      }
    } catch (err) {
      log.warn('reins: cannot restore the Firefox adapter state', err);
    }
  })();

  function persist() {
    const out = {};
    for (const [id, st] of tabs) out[id] = { domains: [...st.domains], lifecycle: st.lifecycle };
    browser.storage.session.set({ [STATE_KEY]: { tabs: out } }).catch((err) => log.warn('reins: cannot save the Firefox adapter state', err));
  }

  function emit(tabId, method, params) {
    for (const cb of eventCbs) {
      try {
        cb(tabId, method, params);
      } catch (err) {
        log.warn('reins: event listener failed', err);
      }
    }
  }

  /** Ends an attached tab's session: detached, or the tab closed. */
  function release(tabId) {
    const st = tabs.get(tabId);
    if (!st) return;
    tabs.delete(tabId);
    persist();
    hook('released', tabId, st);
  }

  /** Settles the waiters of crashWithin for the tab. */
  function wakeCrashWaiters(tabId, yes) {
    for (const done of crashWaiters.get(tabId) ?? []) done(yes);
  }

  /**
   * The tab's content process crashed: Firefox shows its crashed-tab page in
   * the main frame (the tab keeps its URL). What waited on the page has
   * failed or will; Inspector.targetCrashed tells the debugger manager and
   * the companion, as Chromium's own report does, and the tab refuses page
   * calls until its next document.
   */
  function tabCrashed(tabId) {
    if (crashed.has(tabId)) return;
    crashed.add(tabId);
    wakeCrashWaiters(tabId, true);
    if (tabs.has(tabId)) emit(tabId, 'Inspector.targetCrashed', {});
  }

  // ---- browser events: every tab's main-frame navigation

  const wn = browser.webNavigation;
  if (wn) {
    // Firefox's own pages in a tab report their load (never a commit) like
    // any document. The crashed-tab page is no page of the tab's; an error
    // page (a refused port, a bad certificate) is the failure of the
    // document the tab committed, and its load is that document's.
    const main = (fn, onErrorPage) => (d) => {
      if (d.frameId !== 0) return;
      const url = typeof d.url === 'string' ? d.url : '';
      const errorText = errorPageText(url);
      if (url.startsWith('about:tabcrashed')) tabCrashed(d.tabId);
      else if (errorText !== '') onErrorPage?.(d, errorText);
      else fn(d);
    };
    wn.onBeforeNavigate.addListener(
      main((d) => {
        const n = fx.nav(d.tabId);
        if (!n.pending) n.pending = fx.mint();
        n.url = d.url;
        hook('beforeNavigate', d);
      }),
    );
    wn.onCommitted.addListener(
      main((d) => {
        const n = fx.nav(d.tabId);
        const loaderId = n.pending ?? fx.mint();
        n.pending = null;
        n.loader = loaderId;
        n.url = d.url;
        n.documentId = d.documentId ?? null;
        n.history.committed(d.url, d);
        crashed.delete(d.tabId);
        errorPages.delete(d.tabId);
        hook('committed', d, loaderId, tabs.get(d.tabId));
      }),
    );
    wn.onDOMContentLoaded.addListener(
      main(
        (d) => hook('domContentLoaded', d),
        (d, errorText) => {
          errorPages.set(d.tabId, errorText);
          hook('errorPage', d, errorText);
        },
      ),
    );
    wn.onCompleted.addListener(main((d) => hook('completed', d)));
    wn.onErrorOccurred.addListener(main((d) => hook('navigationFailed', d)));
    const sameDoc = (type) =>
      main((d) => {
        fx.nav(d.tabId).history.committed(d.url, d);
        hook('sameDocument', d, type);
      });
    wn.onReferenceFragmentUpdated.addListener(sameDoc('fragment'));
    wn.onHistoryStateUpdated.addListener(sameDoc('historyApi'));
    wn.onCreatedNavigationTarget?.addListener((d) => hook('createdNavigationTarget', d));
  }
  // The tab event usually comes first, and the action that opened the tab
  // waits for Page.windowOpen to name it; the navigation event adds the URL.
  browser.tabs.onCreated?.addListener((t) => {
    if (Number.isSafeInteger(t?.openerTabId)) hook('createdNavigationTarget', { sourceTabId: t.openerTabId, tabId: t.id, url: '' });
  });

  browser.tabs.onRemoved.addListener((tabId) => {
    crashed.delete(tabId);
    errorPages.delete(tabId);
    wakeCrashWaiters(tabId, false);
    hook('tabClosed', tabId);
    navs.delete(tabId);
    release(tabId);
  });

  return {
    engine: 'firefox',
    methods: Object.keys(methods).sort(),
    async attach(tabId) {
      await ready;
      await browser.tabs.get(tabId);
      if (!tabs.has(tabId)) {
        tabs.set(tabId, newState());
        persist();
      }
    },
    async send(tabId, method, params, sessionId) {
      await ready;
      if (sessionId) throw new WireError(Codes.badParams, 'Firefox adapter has no CDP sessions; sessionId is not supported');
      const st = tabs.get(tabId);
      if (!st) throw new Error(`Debugger is not attached to the tab with id: ${tabId}.`);
      const fn = Object.hasOwn(methods, method) ? methods[method] : null;
      if (!fn) throw new WireError(Codes.unknownMethod, `Firefox adapter does not support ${method}`);
      try {
        return (await fn(tabId, params ?? {}, st)) ?? {};
      } catch (err) {
        if (err instanceof WireError) throw err;
        // Plans refuse malformed params with TypeErrors.
        if (err instanceof TypeError) throw new WireError(Codes.badParams, `${method}: ${err.message}`);
        throw new WireError(Codes.internal, `${method}: ${err?.message ?? err}`);
      }
    },
    async detach(tabId) {
      await ready;
      if (!tabs.has(tabId)) throw new Error(`Debugger is not attached to the tab with id: ${tabId}.`);
      release(tabId);
    },
    onEvent(cb) {
      eventCbs.push(cb);
    },
    onDetach() {
      // Firefox never ends a session on its own: nothing like the debugger
      // infobar exists. Closed tabs reach the manager through tabs.onRemoved.
    },
    async attachedTabs() {
      await ready;
      return [...tabs.keys()];
    },
  };
}
