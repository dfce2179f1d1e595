// The Page domain of the Firefox adapter, but for screenshots and the
// screencast (cdp-firefox-capture.js) and isolated worlds
// (cdp-firefox-runtime.js): navigation through tabs.update and history moves,
// the load events from webNavigation, the frame tree, layout metrics and the
// session history Firefox does not let extensions read (firefox-history.js).

import { WireError, Codes, badParams } from './frames.js';
import { unsupportedReason } from './urlrules.js';
import { netErrorText, isAbortError } from './firefox-runtime.js';

const NAV_TIMEOUT_MS = 30_000;
// How long Page.navigate waits, after the commit or the failure, for the
// error page Firefox may show a moment later (see errorPageOf).
export const ERROR_PAGE_MS = 1000;
// Firefox aborts and restarts a navigation that moves to another content
// process; a commit normally follows an abort within this time.
const ABORT_GRACE_MS = 3_000;
// How many opened tabs the adapter remembers having reported.
const MAX_ANNOUNCED = 256;

/** Runs in the isolated world: what Page.getNavigationHistory needs. */
function pageHistory() {
  return { length: history.length, url: location.href, title: document.title };
}

/** Runs in the isolated world: a history move of more than one step. */
function historyGo(delta) {
  history.go(delta);
  return true;
}

function originOf(url) {
  try {
    const u = new URL(url);
    return u.origin === 'null' ? '://' : u.origin;
  } catch {
    return '://';
  }
}

function frame(id, loaderId, url) {
  return {
    id,
    loaderId,
    url,
    domainAndRegistry: '',
    securityOrigin: originOf(url),
    mimeType: 'text/html',
    secureContextType: 'Secure',
    crossOriginIsolatedContextType: 'NotIsolated',
    gatedAPIFeatures: [],
  };
}

/** @param {import('./cdp-firefox.js').FirefoxShared} fx */
export function pageDomain(fx) {
  const { browser, timers, tabs } = fx;
  const waiters = new Map(); // tabId → Set of navigation listeners
  const announced = new Set(); // tabs opened by a page, reported once

  function lifecycle(tabId, name, loaderId) {
    const st = tabs.get(tabId);
    if (st && st.domains.has('Page') && st.lifecycle) {
      fx.emit(tabId, 'Page.lifecycleEvent', { frameId: fx.frameIdOf(tabId), loaderId: loaderId ?? '', name, timestamp: fx.now() / 1000 });
    }
  }

  function notify(tabId, ev) {
    const set = waiters.get(tabId);
    if (set) for (const fn of [...set]) fn(ev);
  }

  /** Waits for the tab's next main-frame commit, same-document move or failure. */
  function waitNavigation(tabId) {
    let done;
    let timer;
    let grace = null;
    let lastError = '';
    const promise = new Promise((resolve) => {
      done = (v) => {
        timers.clearTimeout(timer);
        if (grace !== null) timers.clearTimeout(grace);
        unlisten(tabId, listener);
        resolve(v);
      };
    });
    const listener = (ev) => {
      if (ev.kind === 'commit' || ev.kind === 'sameDoc' || ev.kind === 'closed') done(ev);
      else if (ev.kind === 'error') {
        lastError = ev.errorText;
        if (!isAbortError(ev.errorText)) done(ev);
        else if (grace === null) grace = timers.setTimeout(() => done({ kind: 'error', errorText: lastError }), ABORT_GRACE_MS);
      }
    };
    listen(tabId, listener);
    timer = timers.setTimeout(() => done({ kind: 'timeout' }), NAV_TIMEOUT_MS);
    return { promise, cancel: () => done({ kind: 'cancelled' }) };
  }

  function listen(tabId, listener) {
    if (!waiters.has(tabId)) waiters.set(tabId, new Set());
    waiters.get(tabId).add(listener);
  }

  function unlisten(tabId, listener) {
    const set = waiters.get(tabId);
    set?.delete(listener);
    if (set && set.size === 0) waiters.delete(tabId);
  }

  /**
   * Firefox shows an error page for a failed load a moment after it says
   * so: a load it refuses (a port) it commits and then shows its error page
   * for; one it fails (a certificate) it reports failed, and then commits
   * the error page. Either is part of the navigation, which must not end
   * before it, or the next one would take its events for its own. This
   * listens from now, so that no event is missed, and resolves with the
   * error page's event, or null once the committed document loads as
   * itself, the tab moves on, ERROR_PAGE_MS pass after the commit or the
   * failure, or cancel is called.
   */
  function errorPageOf(tabId) {
    let done;
    let timer = null;
    let committed = false;
    const promise = new Promise((resolve) => {
      done = (v) => {
        if (timer !== null) timers.clearTimeout(timer);
        unlisten(tabId, listener);
        resolve(v);
      };
    });
    const arm = () => {
      if (timer === null) timer = timers.setTimeout(() => done(null), ERROR_PAGE_MS);
    };
    const listener = (ev) => {
      switch (ev.kind) {
        case 'errorPage':
          done(ev);
          break;
        case 'error':
          if (!isAbortError(ev.errorText)) arm();
          break;
        case 'commit':
          if (committed) {
            done(null);
          } else {
            committed = true;
            arm();
          }
          break;
        case 'domContentLoaded':
          if (committed) done(null);
          break;
        case 'sameDoc':
        case 'closed':
          done(null);
          break;
      }
    };
    listen(tabId, listener);
    return { promise, cancel: () => done(null) };
  }

  function domContentLoaded(d) {
    fx.emitIf(d.tabId, 'Page', 'Page.domContentEventFired', { timestamp: fx.now() / 1000 });
    lifecycle(d.tabId, 'DOMContentLoaded', fx.navs.get(d.tabId)?.loader);
    notify(d.tabId, { kind: 'domContentLoaded' });
  }

  function completed(d) {
    const loaderId = fx.navs.get(d.tabId)?.loader;
    fx.emitIf(d.tabId, 'Page', 'Page.loadEventFired', { timestamp: fx.now() / 1000 });
    lifecycle(d.tabId, 'load', loaderId);
    fx.emitIf(d.tabId, 'Page', 'Page.frameStoppedLoading', { frameId: fx.frameIdOf(d.tabId) });
  }

  const methods = {
    async 'Page.bringToFront'(tabId) {
      const tab = await browser.tabs.update(tabId, { active: true });
      if (tab?.windowId !== undefined) await browser.windows.update(tab.windowId, { focused: true });
      return {};
    },

    'Page.disable': fx.domainSwitch('Page', false),
    'Page.enable': fx.domainSwitch('Page', true),

    async 'Page.getFrameTree'(tabId) {
      const tab = await browser.tabs.get(tabId);
      const n = fx.nav(tabId);
      if (!n.loader) n.loader = fx.mint();
      return { frameTree: { frame: frame(fx.frameIdOf(tabId), n.loader, tab.url ?? '') } };
    },

    async 'Page.getLayoutMetrics'(tabId) {
      const m = await fx.isolated(tabId, 'layout', []);
      const r = m.dpr;
      const layout = { pageX: m.sx, pageY: m.sy, clientWidth: m.cw, clientHeight: m.ch };
      const visual = { offsetX: m.vv.x, offsetY: m.vv.y, pageX: m.vv.px, pageY: m.vv.py, clientWidth: m.vv.w, clientHeight: m.vv.h, scale: m.vv.scale, zoom: 1 };
      const content = { x: 0, y: 0, width: m.contentW, height: m.contentH };
      return {
        // The unprefixed, deprecated fields are in device pixels.
        layoutViewport: { pageX: layout.pageX, pageY: layout.pageY, clientWidth: Math.round(layout.clientWidth * r), clientHeight: Math.round(layout.clientHeight * r) },
        visualViewport: { ...visual, clientWidth: visual.clientWidth * r, clientHeight: visual.clientHeight * r },
        contentSize: { ...content, width: content.width * r, height: content.height * r },
        cssLayoutViewport: layout,
        cssVisualViewport: visual,
        cssContentSize: content,
      };
    },

    async 'Page.getNavigationHistory'(tabId) {
      const tab = await browser.tabs.get(tabId);
      let info = { length: 1, url: tab.url ?? '', title: tab.title ?? '' };
      try {
        const r = await fx.inject(tabId, { func: pageHistory });
        if (r.result && Number.isInteger(r.result.length)) info = r.result;
      } catch {
        // about:blank and error pages may refuse scripts; the tab's URL will do.
      }
      const view = fx.nav(tabId).history.view(info.length, info.url);
      // Only the current entry's title is known, as Chromium reports it.
      const current = view.entries[view.currentIndex];
      if (current && typeof info.title === 'string') current.title = info.title;
      return view;
    },

    async 'Page.navigate'(tabId, p) {
      if (typeof p.url !== 'string' || p.url === '') throw badParams('url must be a non-empty string');
      const reason = unsupportedReason(p.url, 'firefox');
      if (reason !== '') throw new WireError(Codes.restrictedUrl, `cannot open ${p.url}: ${reason}`);
      const n = fx.nav(tabId);
      const loaderId = fx.mint();
      n.pending = loaderId;
      const wait = waitNavigation(tabId);
      const errorPage = errorPageOf(tabId);
      try {
        await browser.tabs.update(tabId, { url: p.url });
      } catch (err) {
        wait.cancel();
        errorPage.cancel();
        throw new WireError(Codes.internal, `cannot navigate tab ${tabId}: ${err?.message ?? err}`);
      }
      const ev = await wait.promise;
      if (ev.kind !== 'commit' && ev.kind !== 'error') errorPage.cancel();
      const frameId = fx.frameIdOf(tabId);
      switch (ev.kind) {
        case 'sameDoc':
          return { frameId };
        case 'error':
          await errorPage.promise;
          return { frameId, loaderId, errorText: ev.errorText };
        case 'closed':
          throw new WireError(Codes.noSuchTab, `tab ${tabId} closed while navigating`);
        case 'commit': {
          const failed = await errorPage.promise;
          return failed ? { frameId, loaderId: ev.loaderId, errorText: failed.errorText } : { frameId, loaderId: ev.loaderId };
        }
        default:
          // Still loading: the caller waits for the load events itself.
          return { frameId, loaderId: n.pending ?? n.loader ?? loaderId };
      }
    },

    async 'Page.navigateToHistoryEntry'(tabId, p) {
      const h = fx.nav(tabId).history;
      const i = h.indexOf(p.entryId);
      if (i < 0) throw badParams('No entry with passed id');
      const delta = i - h.index;
      if (delta === 0) return {};
      const url = h.entries[i].url;
      if (url !== '' && unsupportedReason(url, 'firefox') !== '') {
        throw new WireError(Codes.restrictedUrl, `history entry ${url}: ${unsupportedReason(url, 'firefox')}`);
      }
      h.pendingIndex = i;
      fx.nav(tabId).pending = fx.mint();
      if (delta === -1) await browser.tabs.goBack(tabId);
      else if (delta === 1) await browser.tabs.goForward(tabId);
      else await fx.inject(tabId, { func: historyGo, args: [delta] });
      return {};
    },

    async 'Page.reload'(tabId, p) {
      fx.nav(tabId).pending = fx.mint();
      await browser.tabs.reload(tabId, { bypassCache: p.ignoreCache === true });
      return {};
    },

    async 'Page.setLifecycleEventsEnabled'(tabId, p, st) {
      st.lifecycle = p.enabled === true;
      fx.persist();
      return {};
    },
  };

  return {
    methods,
    beforeNavigate(d) {
      fx.emitIf(d.tabId, 'Page', 'Page.frameStartedLoading', { frameId: fx.frameIdOf(d.tabId) });
    },
    committed(d, loaderId, st) {
      if (st) {
        fx.emitIf(d.tabId, 'Page', 'Page.frameNavigated', { frame: frame(fx.frameIdOf(d.tabId), loaderId, d.url), type: 'Navigation' });
        lifecycle(d.tabId, 'init', loaderId);
        lifecycle(d.tabId, 'commit', loaderId);
      }
      notify(d.tabId, { kind: 'commit', loaderId });
    },
    domContentLoaded,
    completed,
    errorPage(d, errorText) {
      notify(d.tabId, { kind: 'errorPage', errorText });
      // The error page loads as the document did: what waits for a load
      // (a click, a reload) ends, and Firefox reports no other.
      domContentLoaded(d);
      completed(d);
    },
    navigationFailed(d) {
      notify(d.tabId, { kind: 'error', errorText: netErrorText(d.error) });
    },
    sameDocument(d, navigationType) {
      fx.emitIf(d.tabId, 'Page', 'Page.navigatedWithinDocument', { frameId: fx.frameIdOf(d.tabId), url: d.url, navigationType });
      notify(d.tabId, { kind: 'sameDoc' });
    },
    tabClosed(tabId) {
      notify(tabId, { kind: 'closed' });
    },
    createdNavigationTarget(d) {
      // Once per tab: the engine counts them against the tabs that appear.
      if (!tabs.get(d.sourceTabId)?.domains.has('Page') || announced.has(d.tabId)) return;
      announced.add(d.tabId);
      if (announced.size > MAX_ANNOUNCED) announced.delete(announced.values().next().value);
      // Whether a person's gesture opened it is not reported; the engine
      // reads only the URL.
      fx.emit(d.sourceTabId, 'Page.windowOpen', { url: d.url ?? '', windowName: '', windowFeatures: [], userGesture: false });
    },
  };
}
