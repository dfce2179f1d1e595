// The engine seam for Firefox: the same shape as cdp-chromium.js
// (attach/send/detach/onEvent/onDetach/attachedTabs), answering the subset of
// the DevTools Protocol that the companion's tool engine and live view use
// with WebExtension APIs, because Firefox has no chrome.debugger:
//
// - Runtime.* through scripting.executeScript: the page's MAIN world for
//   expressions (eval there obeys the page's CSP), and the content-script
//   world for the tool engine's isolated world, where eval is forbidden, so
//   its helper ships as a file (lib/tools-page.js, copied at build time from
//   companion/tools/page.js) and its calls are recognised by shape;
// - Page.* navigation and load events from tabs and webNavigation;
// - screenshots and the screencast from tabs.captureTab;
// - Input.* as DOM events synthesized in the isolated world
//   (firefox-input.js plans them, firefox-isolated.js fires them);
// - console and network capture from a MAIN-world console hook and webRequest.
//
// Anything else fails with unknown_method naming the method.

import { WireError, Codes, badParams } from './frames.js';
import { unsupportedReason } from './urlrules.js';
import { mousePlan, afterRelease, keyPlan } from './firefox-input.js';
import { exceptionDetails, helperCallName, argumentValues, explainEvalBlocked, netErrorText, isAbortError } from './firefox-runtime.js';
import { captureOptions, dataURLPayload, cropRect, screencastScale, ScreencastPacer } from './firefox-capture.js';
import { HistoryTracker } from './firefox-history.js';
import * as net from './firefox-network.js';
import { mainWorld } from './firefox-main.js';

/** The page side of the adapter, injected into the isolated world on first use. */
export const ISOLATED_FILE = 'lib/firefox-isolated.js';
/** The tool engine's page helper (companion/tools/page.js), copied in by `make extension-firefox`. */
export const TOOLS_HELPER_FILE = 'lib/tools-page.js';
/** The MAIN-world console hook. */
export const CONSOLE_FILE = 'lib/firefox-console.js';
const CONSOLE_SCRIPT_IDS = ['reins-console-main', 'reins-console-isolated'];

const STATE_KEY = 'firefoxCdp';
const NAV_TIMEOUT_MS = 30_000;
// Firefox aborts and restarts a navigation that moves to another content
// process; a commit normally follows an abort within this time.
const ABORT_GRACE_MS = 3_000;
const ACK_TIMEOUT_MS = 1_000;
// Like Chromium, a couple of frames may await their ack: the next capture
// overlaps the trip to the viewer, and a slow viewer still slows the
// capture instead of piling frames up.
const SCREENCAST_IN_FLIGHT = 2;
const LAYOUT_REFRESH_MS = 250;

/** Runs in the isolated world: calls the adapter's page side if present. */
function isolatedCall(op, args) {
  const fx = globalThis.__reinsFx;
  if (!fx) return { missing: true };
  return Promise.resolve(fx[op](...args)).then((value) => ({ value }));
}

/** Runs in the isolated world: the tool engine's helper call. */
function helperInvoke(fn, args) {
  const h = globalThis.__reins;
  if (!h) throw new ReferenceError('globalThis.__reins is undefined: the page helper is not installed in this document');
  return h.call(fn, args);
}

/** Runs in the isolated world: what Page.getNavigationHistory needs. */
function pageHistory() {
  return { length: history.length, url: location.href };
}

/** Runs in the isolated world: a history move of more than one step. */
function historyGo(delta) {
  history.go(delta);
  return true;
}

function errorThrown(e) {
  if (e && typeof e === 'object' && typeof e.message === 'string') {
    return {
      isError: true,
      name: typeof e.name === 'string' ? e.name : 'Error',
      message: e.message,
      stack: typeof e.stack === 'string' ? e.stack : '',
      fileName: typeof e.fileName === 'string' ? e.fileName : '',
      lineNumber: typeof e.lineNumber === 'number' ? e.lineNumber : 0,
      columnNumber: typeof e.columnNumber === 'number' ? e.columnNumber : 0,
    };
  }
  return { type: typeof e, value: e === undefined ? 'undefined' : String(e) };
}

function withExplanation(details) {
  if (details.exception && typeof details.exception.description === 'string') {
    details.exception.description = explainEvalBlocked(details.exception.description);
  }
  return details;
}

function runtimeAnswer(thrown) {
  const details = withExplanation(exceptionDetails(thrown));
  return { result: details.exception, exceptionDetails: details };
}

function originOf(url) {
  try {
    const u = new URL(url);
    return u.origin === 'null' ? '://' : u.origin;
  } catch {
    return '://';
  }
}

/**
 * @param {any} browser the WebExtension `browser` global
 * @param {{timers?:{setTimeout:Function, clearTimeout:Function}, log?:{warn:Function},
 *   now?:() => number, randomId?:() => string, fetch?:typeof fetch}} [o]
 * @returns {import('./cdp-chromium.js').CdpAdapter}
 */
export function createFirefoxCdp(browser, o = {}) {
  const timers = o.timers ?? globalThis;
  const log = o.log ?? console;
  const now = o.now ?? (() => Date.now());
  const randomId = o.randomId ?? (() => globalThis.crypto.randomUUID());
  const doFetch = o.fetch ?? ((...a) => globalThis.fetch(...a));

  const eventCbs = [];
  const detachCbs = [];
  /** attached tabs: enabled domains and screencast */
  const tabs = new Map();
  /** every tab's navigation: loader ids, document, history */
  const navs = new Map();
  /** isolated worlds: executionContextId → {tabId, documentId} */
  const contexts = new Map();
  const waiters = new Map(); // tabId → Set of navigation listeners
  const redirects = new Map(); // webRequest requestId → redirect details
  const runId = randomId().slice(0, 8);
  // A random store key per run: pages cannot guess it.
  const storeKey = '__reinsObjects_' + randomId().replace(/-/g, '');
  let nextContext = 1;
  let nextLoader = 1;
  let helperText;

  const sleep = (ms) => new Promise((r) => timers.setTimeout(r, ms));
  const mint = () => `${runId}-${nextLoader++}`;
  const frameIdOf = (tabId) => `main-${tabId}`;

  function nav(tabId) {
    let n = navs.get(tabId);
    if (!n) {
      n = { pending: null, loader: null, url: null, documentId: null, history: new HistoryTracker() };
      navs.set(tabId, n);
    }
    return n;
  }

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

  function emitIf(tabId, domain, method, params) {
    const st = tabs.get(tabId);
    if (st && st.domains.has(domain)) emit(tabId, method, params);
  }

  function lifecycle(tabId, name, loaderId) {
    const st = tabs.get(tabId);
    if (st && st.domains.has('Page') && st.lifecycle) {
      emit(tabId, 'Page.lifecycleEvent', { frameId: frameIdOf(tabId), loaderId: loaderId ?? '', name, timestamp: now() / 1000 });
    }
  }

  function notify(tabId, ev) {
    const set = waiters.get(tabId);
    if (set) for (const fn of [...set]) fn(ev);
  }

  // ---- scripting

  function injectError(tabId, err) {
    const m = err?.message ?? String(err);
    if (/invalid documentid|no frame|document.*(gone|unload)|frame.*(removed|not found)/i.test(m)) {
      return new WireError(Codes.internal, 'Cannot find context with specified id');
    }
    if (/invalid tab id|no tab with id/i.test(m)) return new WireError(Codes.noSuchTab, `no tab with id ${tabId}`);
    if (/missing host permission|cannot access|not allowed|restricted|privileged|about:/i.test(m)) {
      return new WireError(Codes.restrictedUrl, `tab ${tabId} cannot be scripted: ${m}`);
    }
    return new WireError(Codes.internal, `scripting tab ${tabId} failed: ${m}`);
  }

  /** Runs a function or files in the tab's top document; returns the InjectionResult (error included). */
  async function inject(tabId, { func, args, files, world = 'ISOLATED', documentId, immediately = false }) {
    const target = documentId ? { tabId, documentIds: [documentId] } : { tabId, frameIds: [0] };
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
      const e = injectError(tabId, err);
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
    if (!r) throw new WireError(Codes.internal, `tab ${tabId}: the page did not run the script`);
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

  async function toolsHelperText() {
    if (helperText === undefined) {
      try {
        const res = await doFetch(browser.runtime.getURL(TOOLS_HELPER_FILE));
        helperText = res.ok ? await res.text() : null;
      } catch {
        helperText = null;
      }
    }
    return helperText;
  }

  async function installConsole(tabId, opts = {}) {
    // The relay first, so the hook's records have somewhere to go.
    await isolated(tabId, 'installRelay', [], opts);
    const r = await inject(tabId, { world: 'MAIN', files: [CONSOLE_FILE], ...opts });
    if (r.error) log.warn('reins: console hook failed', r.error);
  }

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

  let consolePatterns = null;
  let consoleSync = Promise.resolve();

  /**
   * Registers the console hook to run at document_start on the origins of
   * the tabs whose console is captured, so a page's first messages are not
   * lost to the time an injection takes; every other site is left alone.
   */
  function syncConsoleScripts() {
    consoleSync = consoleSync.then(async () => {
      const sc = browser.scripting;
      if (!sc || typeof sc.registerContentScripts !== 'function') return;
      const want = new Set();
      for (const [tabId, st] of tabs) {
        if (!st.domains.has('Runtime') && !st.domains.has('Log')) continue;
        const p = originPattern(navs.get(tabId)?.url);
        if (p) want.add(p);
      }
      const matches = [...want].sort();
      const key = matches.join(' ');
      if (key === consolePatterns) return;
      try {
        const existing = (await sc.getRegisteredContentScripts({ ids: CONSOLE_SCRIPT_IDS })).map((x) => x.id);
        if (existing.length > 0) await sc.unregisterContentScripts({ ids: existing });
        if (matches.length > 0) {
          await sc.registerContentScripts([
            { id: CONSOLE_SCRIPT_IDS[0], matches, js: [CONSOLE_FILE], runAt: 'document_start', world: 'MAIN', allFrames: false, persistAcrossSessions: false },
            { id: CONSOLE_SCRIPT_IDS[1], matches, js: [ISOLATED_FILE], runAt: 'document_start', allFrames: false, persistAcrossSessions: false },
          ]);
        }
        consolePatterns = key;
      } catch (err) {
        consolePatterns = null;
        log.warn('reins: cannot register console capture', err?.message ?? err);
      }
    });
    return consoleSync;
  }

  // ---- navigation waits

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
        const set = waiters.get(tabId);
        set?.delete(listener);
        if (set && set.size === 0) waiters.delete(tabId);
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
    if (!waiters.has(tabId)) waiters.set(tabId, new Set());
    waiters.get(tabId).add(listener);
    timer = timers.setTimeout(() => done({ kind: 'timeout' }), NAV_TIMEOUT_MS);
    return { promise, cancel: () => done({ kind: 'cancelled' }) };
  }

  // ---- screencast

  function stopScreencast(st) {
    const sc = st?.screencast;
    if (!sc) return;
    sc.running = false;
    sc.wake?.();
    st.screencast = null;
  }

  /** Frames acknowledged up to id free their slots. */
  function ackScreencast(sc, id) {
    if (id > sc.acked) sc.acked = Math.min(id, sc.frameId);
    sc.wake?.();
  }

  /** Waits until fewer than SCREENCAST_IN_FLIGHT frames await an ack, or the oldest is too old. */
  async function screencastSlot(sc) {
    while (sc.running && sc.frameId - sc.acked >= SCREENCAST_IN_FLIGHT) {
      const waited = await new Promise((resolve) => {
        const timer = timers.setTimeout(() => resolve(false), ACK_TIMEOUT_MS);
        sc.wake = () => {
          timers.clearTimeout(timer);
          sc.wake = null;
          resolve(true);
        };
      });
      // A viewer that never acks must not freeze the picture for good.
      if (!waited) sc.acked = sc.frameId - SCREENCAST_IN_FLIGHT + 1;
    }
  }

  async function runScreencast(tabId, sc) {
    let vp = null;
    let vpAt = 0;
    while (sc.running) {
      await screencastSlot(sc);
      if (!sc.running) return;
      const t0 = now();
      try {
        if (vp === null || now() - vpAt > LAYOUT_REFRESH_MS) {
          vp = await isolated(tabId, 'layout', []);
          vpAt = now();
        }
        const opts = { format: sc.format, scale: screencastScale({ w: vp.w, h: vp.h, dpr: vp.dpr }, sc.maxWidth, sc.maxHeight) };
        if (sc.format === 'jpeg') opts.quality = sc.quality;
        const url = await browser.tabs.captureTab(tabId, opts);
        if (!sc.running) return;
        const data = dataURLPayload(url);
        const took = now() - t0;
        const changed = data !== sc.last;
        sc.failures = 0;
        if (changed) {
          sc.last = data;
          const id = ++sc.frameId;
          emit(tabId, 'Page.screencastFrame', {
            data,
            sessionId: id,
            metadata: {
              offsetTop: 0,
              pageScaleFactor: 1,
              deviceWidth: vp.w,
              deviceHeight: vp.h,
              scrollOffsetX: vp.sx,
              scrollOffsetY: vp.sy,
              timestamp: now() / 1000,
            },
          });
        }
        const wait = sc.pacer.next(took, changed);
        if (wait > 0) await sleep(wait);
      } catch (err) {
        if (!sc.running) return;
        sc.failures = (sc.failures ?? 0) + 1;
        if (sc.failures === 1) log.warn('reins: screencast capture failed', tabId, err?.message ?? err);
        vp = null;
        // A tab navigating or being closed fails a capture or two.
        await sleep(Math.min(2000, 100 * 2 ** Math.min(sc.failures, 5)));
      }
    }
  }

  async function cropVisible(tabId, opts) {
    const tab = await browser.tabs.get(tabId);
    if (!tab.active) throw new WireError(Codes.internal, `tab ${tabId} is not the active tab of its window; this Firefox can capture only that one`);
    const full = await browser.tabs.captureVisibleTab(tab.windowId, { format: 'png' });
    const vp = await isolated(tabId, 'layout', []);
    const blob = new Blob([Uint8Array.from(atob(dataURLPayload(full)), (c) => c.charCodeAt(0))], { type: 'image/png' });
    const img = await createImageBitmap(blob);
    const crop = cropRect({ imageWidth: img.width, imageHeight: img.height, viewport: vp, clip: opts.rect ? { ...opts.rect, scale: opts.scale } : undefined });
    if (!crop) throw new WireError(Codes.badParams, 'clip lies outside the viewport');
    const canvas = new OffscreenCanvas(crop.dw, crop.dh);
    canvas.getContext('2d').drawImage(img, crop.sx, crop.sy, crop.sw, crop.sh, 0, 0, crop.dw, crop.dh);
    const out = await canvas.convertToBlob({ type: `image/${opts.format}`, quality: opts.quality !== undefined ? opts.quality / 100 : undefined });
    const bytes = new Uint8Array(await out.arrayBuffer());
    let bin = '';
    for (let i = 0; i < bytes.length; i += 0x8000) bin += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
    return `data:image/${opts.format};base64,${btoa(bin)}`;
  }

  // ---- the method table, sorted

  const noop = async () => ({});
  const setDomain = (domain, on) => async (tabId, _p, st) => {
    if (on) st.domains.add(domain);
    else st.domains.delete(domain);
    persist();
    if (domain === 'Runtime' || domain === 'Log') {
      if (on) {
        const n = nav(tabId);
        if (!n.url) n.url = (await browser.tabs.get(tabId)).url ?? null;
        // Console capture starts now; pages that cannot be scripted just
        // have none.
        await installConsole(tabId).catch((err) => log.warn('reins: console capture unavailable', tabId, err?.message ?? err));
      }
      await syncConsoleScripts();
    }
    return {};
  };

  /**
   * Input for a page that is being replaced is dropped, as a browser drops
   * it: a key press whose keydown submitted a form still sends its keyup.
   */
  async function input(tabId, op, args) {
    try {
      await isolated(tabId, op, args);
    } catch (err) {
      if (!(err instanceof WireError) || !/Cannot find context/.test(err.message)) throw err;
    }
    return {};
  }

  const methods = {
    async 'Input.dispatchKeyEvent'(tabId, p) {
      return input(tabId, 'key', [keyPlan(p)]);
    },

    async 'Input.dispatchMouseEvent'(tabId, p) {
      const plan = mousePlan(p);
      if (plan.kind === 'up') plan.after = afterRelease(plan.button, plan.clickCount);
      return input(tabId, 'mouse', [plan]);
    },

    async 'Input.insertText'(tabId, p) {
      if (typeof p.text !== 'string') throw badParams('text must be a string');
      return input(tabId, 'insertText', [p.text]);
    },

    'Log.clear': noop,
    'Log.disable': setDomain('Log', false),
    'Log.enable': setDomain('Log', true),
    'Network.disable': setDomain('Network', false),
    'Network.enable': setDomain('Network', true),

    async 'Page.bringToFront'(tabId) {
      const tab = await browser.tabs.update(tabId, { active: true });
      if (tab?.windowId !== undefined) await browser.windows.update(tab.windowId, { focused: true });
      return {};
    },

    async 'Page.captureScreenshot'(tabId, p) {
      const opts = captureOptions(p);
      const url = typeof browser.tabs.captureTab === 'function' ? await browser.tabs.captureTab(tabId, opts) : await cropVisible(tabId, opts);
      return { data: dataURLPayload(url) };
    },

    async 'Page.createIsolatedWorld'(tabId, p) {
      // The content-script world is Firefox's isolated world; its identity
      // is the document it lives in.
      const r = await inject(tabId, { func: () => 0 });
      const id = nextContext++;
      contexts.set(id, { tabId, documentId: r.documentId ?? null, name: typeof p.worldName === 'string' ? p.worldName : '' });
      return { executionContextId: id };
    },

    'Page.disable': setDomain('Page', false),
    'Page.enable': setDomain('Page', true),

    async 'Page.getFrameTree'(tabId) {
      const tab = await browser.tabs.get(tabId);
      const n = nav(tabId);
      if (!n.loader) n.loader = mint();
      return {
        frameTree: {
          frame: {
            id: frameIdOf(tabId),
            loaderId: n.loader,
            url: tab.url ?? '',
            domainAndRegistry: '',
            securityOrigin: originOf(tab.url ?? ''),
            mimeType: 'text/html',
            secureContextType: 'Secure',
            crossOriginIsolatedContextType: 'NotIsolated',
            gatedAPIFeatures: [],
          },
        },
      };
    },

    async 'Page.getLayoutMetrics'(tabId) {
      const m = await isolated(tabId, 'layout', []);
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
      let info = { length: 1, url: tab.url ?? '' };
      try {
        const r = await inject(tabId, { func: pageHistory });
        if (r.result && Number.isInteger(r.result.length)) info = r.result;
      } catch {
        // about:blank and error pages may refuse scripts; the tab's URL will do.
      }
      return nav(tabId).history.view(info.length, info.url);
    },

    async 'Page.navigate'(tabId, p) {
      if (typeof p.url !== 'string' || p.url === '') throw badParams('url must be a non-empty string');
      const reason = unsupportedReason(p.url, 'firefox');
      if (reason !== '') throw new WireError(Codes.restrictedUrl, `cannot open ${p.url}: ${reason}`);
      const n = nav(tabId);
      const loaderId = mint();
      n.pending = loaderId;
      const wait = waitNavigation(tabId);
      try {
        await browser.tabs.update(tabId, { url: p.url });
      } catch (err) {
        wait.cancel();
        throw new WireError(Codes.internal, `cannot navigate tab ${tabId}: ${err?.message ?? err}`);
      }
      const ev = await wait.promise;
      const frameId = frameIdOf(tabId);
      switch (ev.kind) {
        case 'sameDoc':
          return { frameId };
        case 'error':
          return { frameId, loaderId, errorText: ev.errorText };
        case 'closed':
          throw new WireError(Codes.noSuchTab, `tab ${tabId} closed while navigating`);
        case 'commit':
          return { frameId, loaderId: ev.loaderId };
        default:
          // Still loading: the caller waits for the load events itself.
          return { frameId, loaderId: n.pending ?? n.loader ?? loaderId };
      }
    },

    async 'Page.navigateToHistoryEntry'(tabId, p) {
      const h = nav(tabId).history;
      const i = h.indexOf(p.entryId);
      if (i < 0) throw badParams('No entry with passed id');
      const delta = i - h.index;
      if (delta === 0) return {};
      const url = h.entries[i].url;
      if (url !== '' && unsupportedReason(url, 'firefox') !== '') {
        throw new WireError(Codes.restrictedUrl, `history entry ${url}: ${unsupportedReason(url, 'firefox')}`);
      }
      h.pendingIndex = i;
      nav(tabId).pending = mint();
      if (delta === -1) await browser.tabs.goBack(tabId);
      else if (delta === 1) await browser.tabs.goForward(tabId);
      else await inject(tabId, { func: historyGo, args: [delta] });
      return {};
    },

    async 'Page.reload'(tabId, p) {
      nav(tabId).pending = mint();
      await browser.tabs.reload(tabId, { bypassCache: p.ignoreCache === true });
      return {};
    },

    async 'Page.screencastFrameAck'(tabId, p, st) {
      const sc = st.screencast;
      if (sc && Number.isInteger(p.sessionId)) ackScreencast(sc, p.sessionId);
      return {};
    },

    async 'Page.setLifecycleEventsEnabled'(tabId, p, st) {
      st.lifecycle = p.enabled === true;
      persist();
      return {};
    },

    async 'Page.startScreencast'(tabId, p, st) {
      if (typeof browser.tabs.captureTab !== 'function') throw new WireError(Codes.unknownMethod, 'Firefox adapter needs tabs.captureTab for Page.startScreencast');
      stopScreencast(st);
      const sc = {
        running: true,
        format: p.format === 'png' ? 'png' : 'jpeg',
        quality: Number.isFinite(p.quality) ? Math.max(0, Math.min(100, Math.round(p.quality))) : 80,
        maxWidth: Number.isFinite(p.maxWidth) ? p.maxWidth : 0,
        maxHeight: Number.isFinite(p.maxHeight) ? p.maxHeight : 0,
        frameId: 0,
        acked: 0,
        last: null,
        wake: null,
        pacer: new ScreencastPacer(),
      };
      st.screencast = sc;
      runScreencast(tabId, sc);
      return {};
    },

    async 'Page.stopScreencast'(tabId, p, st) {
      stopScreencast(st);
      return {};
    },

    async 'Runtime.callFunctionOn'(tabId, p) {
      if (typeof p.functionDeclaration !== 'string') throw badParams('functionDeclaration must be a string');
      if (p.executionContextId !== undefined && p.executionContextId !== null) {
        const ctx = contexts.get(p.executionContextId);
        if (!ctx || ctx.tabId !== tabId) throw new WireError(Codes.internal, 'Cannot find context with specified id');
        const fn = helperCallName(p.functionDeclaration);
        if (fn === null) {
          throw new WireError(Codes.unknownMethod, 'Firefox adapter does not support Runtime.callFunctionOn with arbitrary functions in an isolated world: Firefox forbids eval there');
        }
        const r = await inject(tabId, { func: helperInvoke, args: [fn, argumentValues(p.arguments)], documentId: ctx.documentId ?? undefined });
        if (r.error !== undefined && r.error !== null) return runtimeAnswer(errorThrown(r.error));
        return { result: r.result === undefined ? { type: 'undefined' } : { type: 'object', value: r.result } };
      }
      if (typeof p.objectId !== 'string') throw badParams('Either objectId or executionContextId must be specified');
      const local = (id) => {
        const m = /^ff\.(\d+)\.(\d+)$/.exec(id);
        if (!m || Number(m[1]) !== tabId) throw new WireError(Codes.badParams, 'Could not find object with given id');
        return m[2];
      };
      const args = (Array.isArray(p.arguments) ? p.arguments : []).map((a) => (a && typeof a.objectId === 'string' ? { objectId: local(a.objectId) } : { value: argumentValues([a])[0] }));
      const r = await inject(tabId, {
        world: 'MAIN',
        func: mainWorld,
        args: ['call', { objectId: local(p.objectId), functionDeclaration: p.functionDeclaration, args, returnByValue: p.returnByValue === true, awaitPromise: p.awaitPromise === true, objectGroup: p.objectGroup, storeKey }],
      });
      return mainAnswer(tabId, r);
    },

    'Runtime.disable': setDomain('Runtime', false),
    'Runtime.enable': setDomain('Runtime', true),

    async 'Runtime.evaluate'(tabId, p) {
      if (typeof p.expression !== 'string') throw badParams('expression must be a string');
      if (p.contextId !== undefined && p.contextId !== null) {
        const ctx = contexts.get(p.contextId);
        if (!ctx || ctx.tabId !== tabId) throw new WireError(Codes.internal, 'Cannot find context with specified id');
        const helper = await toolsHelperText();
        if (helper === null) {
          throw new WireError(Codes.unknownMethod, `Firefox adapter cannot evaluate in an isolated world: this build has no ${TOOLS_HELPER_FILE} (build it with make extension-firefox)`);
        }
        if (p.expression !== helper) {
          throw new WireError(
            Codes.unknownMethod,
            `Firefox adapter does not support Runtime.evaluate of arbitrary code in an isolated world (Firefox forbids eval there); only the tool engine's page helper, shipped as ${TOOLS_HELPER_FILE}, can be installed, and the companion sent a different one: update the extension`,
          );
        }
        const r = await inject(tabId, { files: [TOOLS_HELPER_FILE], documentId: ctx.documentId ?? undefined });
        if (r.error !== undefined && r.error !== null) return runtimeAnswer(errorThrown(r.error));
        return { result: { type: 'undefined' } };
      }
      const r = await inject(tabId, {
        world: 'MAIN',
        func: mainWorld,
        args: [
          'evaluate',
          {
            expression: p.expression,
            returnByValue: p.returnByValue === true,
            awaitPromise: p.awaitPromise === true,
            replMode: p.replMode === true,
            objectGroup: typeof p.objectGroup === 'string' ? p.objectGroup : '',
            timeout: Number.isFinite(p.timeout) ? p.timeout : 0,
            storeKey,
          },
        ],
      });
      return mainAnswer(tabId, r);
    },

    async 'Runtime.releaseObject'(tabId, p) {
      const m = typeof p.objectId === 'string' ? /^ff\.(\d+)\.(\d+)$/.exec(p.objectId) : null;
      if (m && Number(m[1]) === tabId) {
        await inject(tabId, { world: 'MAIN', func: mainWorld, args: ['release', { objectId: m[2], storeKey }] }).catch(() => {});
      }
      return {};
    },

    async 'Runtime.releaseObjectGroup'(tabId, p) {
      if (typeof p.objectGroup === 'string' && p.objectGroup !== '') {
        // The page may have navigated: its objects are gone with it.
        await inject(tabId, { world: 'MAIN', func: mainWorld, args: ['release', { group: p.objectGroup, storeKey }] }).catch(() => {});
      }
      return {};
    },

    'Runtime.runIfWaitingForDebugger': noop,
  };

  function mainAnswer(tabId, r) {
    if (r.error !== undefined && r.error !== null) return runtimeAnswer(errorThrown(r.error));
    const out = r.result;
    if (!out || typeof out !== 'object') return { result: { type: 'undefined' } };
    if (out.thrown) return runtimeAnswer(out.thrown);
    const result = out.result ?? { type: 'undefined' };
    if (typeof result.objectId === 'string') result.objectId = `ff.${tabId}.${result.objectId}`;
    return { result };
  }

  // ---- browser events

  const wn = browser.webNavigation;
  if (wn) {
    wn.onBeforeNavigate.addListener((d) => {
      if (d.frameId !== 0) return;
      const n = nav(d.tabId);
      if (!n.pending) n.pending = mint();
      n.url = d.url;
      if (tabs.has(d.tabId)) syncConsoleScripts();
      emitIf(d.tabId, 'Page', 'Page.frameStartedLoading', { frameId: frameIdOf(d.tabId) });
    });
    wn.onCommitted.addListener((d) => {
      if (d.frameId !== 0) return;
      const n = nav(d.tabId);
      const loaderId = n.pending ?? mint();
      n.pending = null;
      n.loader = loaderId;
      n.url = d.url;
      n.documentId = d.documentId ?? null;
      n.history.committed(d.url, d);
      for (const [id, ctx] of contexts) if (ctx.tabId === d.tabId) contexts.delete(id);
      const st = tabs.get(d.tabId);
      if (st) {
        const frameId = frameIdOf(d.tabId);
        emitIf(d.tabId, 'Runtime', 'Runtime.executionContextsCleared', {});
        emitIf(d.tabId, 'Page', 'Page.frameNavigated', {
          frame: { id: frameId, loaderId, url: d.url, domainAndRegistry: '', securityOrigin: originOf(d.url), mimeType: 'text/html', secureContextType: 'Secure', crossOriginIsolatedContextType: 'NotIsolated', gatedAPIFeatures: [] },
          type: 'Navigation',
        });
        lifecycle(d.tabId, 'init', loaderId);
        lifecycle(d.tabId, 'commit', loaderId);
        if ((st.domains.has('Runtime') || st.domains.has('Log')) && unsupportedReason(d.url, 'firefox') === '') {
          installConsole(d.tabId, { documentId: d.documentId, immediately: true }).catch(() => {
            // The document may already be gone again.
          });
        }
      }
      notify(d.tabId, { kind: 'commit', loaderId });
    });
    wn.onDOMContentLoaded.addListener((d) => {
      if (d.frameId !== 0) return;
      emitIf(d.tabId, 'Page', 'Page.domContentEventFired', { timestamp: now() / 1000 });
      lifecycle(d.tabId, 'DOMContentLoaded', navs.get(d.tabId)?.loader);
    });
    wn.onCompleted.addListener((d) => {
      if (d.frameId !== 0) return;
      const loaderId = navs.get(d.tabId)?.loader;
      emitIf(d.tabId, 'Page', 'Page.loadEventFired', { timestamp: now() / 1000 });
      lifecycle(d.tabId, 'load', loaderId);
      emitIf(d.tabId, 'Page', 'Page.frameStoppedLoading', { frameId: frameIdOf(d.tabId) });
    });
    wn.onErrorOccurred.addListener((d) => {
      if (d.frameId !== 0) return;
      notify(d.tabId, { kind: 'error', errorText: netErrorText(d.error) });
    });
    const sameDoc = (type) => (d) => {
      if (d.frameId !== 0) return;
      nav(d.tabId).history.committed(d.url, d);
      emitIf(d.tabId, 'Page', 'Page.navigatedWithinDocument', { frameId: frameIdOf(d.tabId), url: d.url, navigationType: type });
      notify(d.tabId, { kind: 'sameDoc' });
    };
    wn.onReferenceFragmentUpdated.addListener(sameDoc('fragment'));
    wn.onHistoryStateUpdated.addListener(sameDoc('historyApi'));
  }

  const wr = browser.webRequest;
  if (wr) {
    const filter = { urls: ['<all_urls>'] };
    const watched = (d) => d.tabId >= 0 && tabs.get(d.tabId)?.domains.has('Network');
    const ctxOf = (d) => {
      const n = nav(d.tabId);
      const loaderId = d.type === 'main_frame' ? (n.pending ??= mint()) : (n.loader ?? '');
      return { loaderId, frameId: d.frameId === 0 ? frameIdOf(d.tabId) : `sub-${d.tabId}-${d.frameId}` };
    };
    wr.onBeforeRequest.addListener((d) => {
      if (!watched(d)) return;
      const redirect = redirects.get(d.requestId);
      redirects.delete(d.requestId);
      emit(d.tabId, 'Network.requestWillBeSent', net.requestWillBeSent(d, ctxOf(d), redirect));
    }, filter);
    wr.onBeforeRedirect.addListener((d) => {
      if (!watched(d)) return;
      redirects.set(d.requestId, d);
      // Bounded: a redirect whose next hop never shows up must not leak.
      if (redirects.size > 1000) redirects.delete(redirects.keys().next().value);
    }, filter, ['responseHeaders']);
    wr.onResponseStarted.addListener((d) => {
      if (!watched(d)) return;
      emit(d.tabId, 'Network.responseReceived', net.responseReceived(d, ctxOf(d)));
    }, filter, ['responseHeaders']);
    wr.onCompleted.addListener((d) => {
      if (!watched(d)) return;
      emit(d.tabId, 'Network.loadingFinished', net.loadingFinished(d));
    }, filter);
    wr.onErrorOccurred.addListener((d) => {
      redirects.delete(d.requestId);
      if (!watched(d)) return;
      emit(d.tabId, 'Network.loadingFailed', net.loadingFailed(d, netErrorText(d.error)));
    }, filter);
  }

  browser.tabs.onRemoved.addListener((tabId) => {
    stopScreencast(tabs.get(tabId));
    notify(tabId, { kind: 'closed' });
    navs.delete(tabId);
    for (const [id, ctx] of contexts) if (ctx.tabId === tabId) contexts.delete(id);
    if (tabs.delete(tabId)) {
      persist();
      syncConsoleScripts();
    }
  });

  // Console records from the isolated-world relay. The message has no
  // "type", so the service's own onMessage listener ignores it.
  browser.runtime.onMessage.addListener((msg, sender) => {
    const rec = msg && typeof msg === 'object' ? msg.reinsFirefoxPage : null;
    if (!rec || typeof rec !== 'object' || sender.id !== browser.runtime.id || !sender.tab || sender.frameId !== 0) return undefined;
    const tabId = sender.tab.id;
    if (rec.kind === 'console' && Array.isArray(rec.args)) {
      const params = { type: typeof rec.type === 'string' ? rec.type : 'log', args: rec.args, executionContextId: 1, timestamp: Number(rec.timestamp) || now() };
      if (rec.loc && typeof rec.loc.url === 'string') {
        params.stackTrace = { callFrames: [{ functionName: '', scriptId: '0', url: rec.loc.url, lineNumber: rec.loc.lineNumber | 0, columnNumber: rec.loc.columnNumber | 0 }] };
      }
      emitIf(tabId, 'Runtime', 'Runtime.consoleAPICalled', params);
    } else if (rec.kind === 'exception') {
      const details = exceptionDetails(rec.thrown);
      if (rec.promise) details.text = 'Uncaught (in promise)';
      if (typeof rec.url === 'string' && rec.url !== '') details.url = rec.url;
      if (Number.isInteger(rec.line) && rec.line > 0) details.lineNumber = rec.line - 1;
      if (Number.isInteger(rec.col) && rec.col > 0) details.columnNumber = rec.col - 1;
      emitIf(tabId, 'Runtime', 'Runtime.exceptionThrown', { timestamp: Number(rec.timestamp) || now(), exceptionDetails: details });
    }
    return undefined;
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
      const st = tabs.get(tabId);
      if (!st) throw new Error(`Debugger is not attached to the tab with id: ${tabId}.`);
      stopScreencast(st);
      tabs.delete(tabId);
      for (const [id, ctx] of contexts) if (ctx.tabId === tabId) contexts.delete(id);
      persist();
      syncConsoleScripts();
    },
    onEvent(cb) {
      eventCbs.push(cb);
    },
    onDetach(cb) {
      // Firefox never ends a session on its own: nothing like the debugger
      // infobar exists. Closed tabs reach the manager through tabs.onRemoved.
      detachCbs.push(cb);
    },
    async attachedTabs() {
      await ready;
      return [...tabs.keys()];
    },
  };
}
