// Wires the service worker: chrome events, the companion connection, the
// request dispatcher and messages from the popup, options page and content
// scripts. Listeners are registered synchronously by startService so that a
// worker woken by an event finds them in place.

import { Core } from './core.js';
import { createDispatcher } from './dispatcher.js';
import { Connection } from './connection.js';
import { parseFrame, PROTOCOL_VERSION } from './frames.js';
import { encodeFrame } from './fit.js';
import { LinkHandshake, normalizeCode, toBase64, fromBase64, equalBytes, KEY_BYTES } from './linkauth.js';
import { detectBrowser } from './browser.js';
import { buildOffer, queueOffer } from './pairing.js';
import { DEFAULT_PORT, NATIVE_HOST, normalizeOptions, parsePort } from './settings.js';
import { unsupportedReason } from './urlrules.js';

const NATIVE_TIMEOUT_MS = 1000;
const KEEPALIVE_ALARM = 'reins-keepalive';
/** The port a shared tab's content script holds to wake a stopped worker (content.js). */
export const WAKE_PORT = 'reins.wake';
/** A refused link key is checked against the native host's at most this often. */
const KEY_REFRESH_MS = 10_000;
/** A typed pairing code is tried for as long as the app keeps it valid. */
const CODE_TTL_MS = 5 * 60 * 1000;
export const NOT_PAIRED =
  'this browser is not paired with the Reins app: in the app choose "Pair a browser…" and type the code here';
const OFFER_NOTICE_MS = 10 * 60 * 1000;

/**
 * @param {object} env
 * @param {any} env.chrome
 * @param {typeof WebSocket} env.WebSocket
 * @param {Navigator} env.navigator
 * @param {Crypto} env.crypto
 * @param {{warn:Function, info?:Function}} [env.log]
 * @param {{setTimeout:Function, clearTimeout:Function, setInterval:Function, clearInterval:Function}} [env.timers]
 * @param {import('./cdp-chromium.js').CdpAdapter} [env.cdp] the engine seam; chrome.debugger when omitted
 */
export function startService({ chrome, WebSocket, navigator, crypto, log = console, timers = globalThis, cdp }) {
  // One line per start: a worker or background script the browser stopped
  // and started again shows up in the browser's console (and tests time
  // the reconnect from it).
  log.info?.('reins: background started');
  const core = new Core({ chrome, cdp, log, timers });
  const dispatcher = createDispatcher(core);
  let startAsked = false;
  let triedLinkPort = false;
  // A fake clock in tests carries its own time; the real one has none.
  const now = () => (typeof timers.now === 'number' ? timers.now : Date.now());

  // The link key (storage.local.linkKey, base64), from the native host or a
  // pairing code; a code the person typed, while it is being tried; and why
  // the last pairing failed.
  let linkKey = null;
  let pairing = null;
  let pairingError = '';
  let keyCheckedAt = -Infinity;

  // What the link reads from storage, asked for as the worker starts,
  // beside the core's state: a worker the browser started again makes no
  // storage round trip of its own on its way back to the companion. Each
  // value is taken from here once; later reads go to storage.
  const linkStart = Promise.all([
    chrome.storage.session.get(['linkPort', 'browserSessionId']),
    chrome.storage.local.get(['linkKey', 'instanceId']),
  ]).then(([session, local]) => ({ ...session, ...local }));
  linkStart.catch(() => {}); // startValue reads storage again
  let keyFromStart = true;
  /** @type {Promise<{instanceId:string, browserSessionId:string}>|null} the hello's ids */
  let helloIds = null;

  const conn = new Connection({
    WebSocket,
    log,
    timers,
    now,
    resolvePort: (fast) => resolvePort(fast),
    buildHello: () => buildHello(),
    startAuth: (port) => startAuth(port),
    onKey: (key) => keyFromCode(key),
    onAuthFailed: (f) => authFailed(f),
    onReady: () => afterHello(),
    onHealthy: () => {
      startAsked = false;
      chrome.storage.session.set({ linkPort: conn.port }).catch(() => {});
    },
    onMessage: (text) => onCompanionFrame(text),
    onStatus: () => broadcast(),
    // Nothing over the companion's limits: see fit.js.
    encode: encodeFrame,
  });
  core.send = (frame) => conn.send(frame);
  core.onStateChange = () => broadcast();

  /** The native host's hello: port, running, and the link key. Null when there is no host. */
  async function askHost() {
    try {
      const reply = await withTimeout(chrome.runtime.sendNativeMessage(NATIVE_HOST, { type: 'hello' }), NATIVE_TIMEOUT_MS);
      return reply && typeof reply === 'object' && reply.type === 'hello' ? reply : null;
    } catch {
      // No native host installed, or it is slow.
      return null;
    }
  }

  async function resolvePort(fast) {
    await storedState();
    const opts = core.options;
    if (opts.port !== '') return opts.port;
    // Moments after a working link dropped, the port is the one it had: no
    // native host process per quick retry.
    if (fast && conn.port !== null) return conn.port;
    // A worker the browser stopped and started again tries the port of the
    // session's last working link once before it starts a native host
    // process (storage.session outlives the worker). The link handshake
    // proves who answers there; if nothing does, the next try asks the host.
    if (!triedLinkPort) {
      triedLinkPort = true;
      const linkPort = await startValue('session', 'linkPort');
      const port = parsePort(linkPort);
      if (port !== null) return port;
    }
    const reply = await askHost();
    if (reply) {
      await learnKey(reply.key);
      if (reply.running === false && !startAsked) {
        // Once per backoff cycle: the host launches the app; we keep retrying.
        startAsked = true;
        chrome.runtime.sendNativeMessage(NATIVE_HOST, { type: 'start' }).catch((err) => {
          log.warn('reins: native host could not start the app', err);
        });
      }
      const port = parsePort(reply.port);
      if (port !== null) return port;
    }
    // The default port is right for a standard install.
    return DEFAULT_PORT;
  }

  /** The stored options are read (defaults if storage failed: ready says why). */
  function storedState() {
    return core.stored.catch(() => {});
  }

  // --- the link key ------------------------------------------------------

  async function storedKey() {
    if (linkKey) return linkKey;
    const fromStart = keyFromStart;
    keyFromStart = false;
    const stored = fromStart ? await startValue('local', 'linkKey') : (await chrome.storage.local.get('linkKey')).linkKey;
    const key = fromBase64(stored);
    linkKey = key && key.length === KEY_BYTES ? key : null;
    return linkKey;
  }

  async function saveKey(key) {
    linkKey = key;
    await chrome.storage.local.set({ linkKey: toBase64(key) });
  }

  /** Keeps the key the native host handed over; reports whether it is new. */
  async function learnKey(b64) {
    const key = fromBase64(b64);
    if (!key || key.length !== KEY_BYTES) return false;
    const old = await storedKey();
    if (old && equalBytes(old, key)) return false;
    await saveKey(key);
    return true;
  }

  async function startAuth(port) {
    const rand = (n) => crypto.getRandomValues(new Uint8Array(n));
    if (pairing && now() < pairing.expires) {
      return new LinkHandshake({ subtle: crypto.subtle, randomBytes: rand, port, code: pairing.code });
    }
    pairing = null;
    let key = await storedKey();
    if (!key) {
      const reply = await askHost();
      if (reply) await learnKey(reply.key);
      key = await storedKey();
    }
    if (!key) throw new Error(NOT_PAIRED);
    return new LinkHandshake({ subtle: crypto.subtle, randomBytes: rand, port, key });
  }

  async function keyFromCode(key) {
    await saveKey(key);
    pairing = null;
    pairingError = '';
    log.info?.('reins: paired with the Reins app by code');
    broadcast();
  }

  /**
   * A handshake failed. A code is spent whatever happened. With the key,
   * the app may have been reinstalled with a new one: ask the native host
   * (not more than every KEY_REFRESH_MS), and try again at once if it has
   * another key. Otherwise the peer is not the app, and nothing changes.
   */
  async function authFailed({ mode, reason }) {
    if (mode === 'code') {
      pairing = null;
      pairingError = reason;
      broadcast();
      return;
    }
    if (now() - keyCheckedAt < KEY_REFRESH_MS) return;
    keyCheckedAt = now();
    const reply = await askHost();
    if (reply && (await learnKey(reply.key))) {
      log.info?.('reins: the native host has a new link key; connecting again');
      conn.restart();
    }
  }

  /** A value of the start's read, or of storage if that read failed. */
  async function startValue(area, key) {
    try {
      return (await linkStart)[key];
    } catch {
      return (await chrome.storage[area].get(key))[key];
    }
  }

  /** The ids the hello carries: this install's, and this browser session's (storage.session outlives the worker). */
  function ids() {
    helloIds ??= readIds().catch((err) => {
      helloIds = null;
      throw err;
    });
    return helloIds;
  }

  async function readIds() {
    const [instanceId, browserSessionId] = await Promise.all([startValue('local', 'instanceId'), startValue('session', 'browserSessionId')]);
    const next = { instanceId, browserSessionId };
    if (typeof next.instanceId !== 'string' || next.instanceId === '') {
      next.instanceId = crypto.randomUUID();
      await chrome.storage.local.set({ instanceId: next.instanceId });
    }
    if (typeof next.browserSessionId !== 'string' || next.browserSessionId === '') {
      next.browserSessionId = crypto.randomUUID();
      await chrome.storage.session.set({ browserSessionId: next.browserSessionId });
    }
    return next;
  }

  async function buildHello() {
    const [{ instanceId, browserSessionId }] = await Promise.all([ids(), storedState()]);
    const uaData = navigator.userAgentData;
    const hello = {
      version: PROTOCOL_VERSION,
      extensionVersion: chrome.runtime.getManifest().version,
      browser: detectBrowser({ brands: uaData?.brands, userAgent: navigator.userAgent, isBrave: Boolean(navigator.brave) }),
      browserEngine: core.engine,
      userAgent: navigator.userAgent,
      instanceId,
      browserSessionId,
    };
    if (core.options.profile) hello.profile = core.options.profile;
    return hello;
  }

  async function afterHello() {
    await core.ready;
    core.emit('tabs', await core.listTabs());
    core.emit('tools.policy', core.toolsPolicy());
    const { pendingOffers } = await chrome.storage.session.get('pendingOffers');
    if (Array.isArray(pendingOffers) && pendingOffers.length > 0) {
      const left = pendingOffers.filter((offer) => !core.emit('pair.offer', offer));
      await chrome.storage.session.set({ pendingOffers: left });
      if (left.length < pendingOffers.length) await noteOffer({ forwarded: true });
    }
  }

  function onCompanionFrame(text) {
    const frame = parseFrame(text);
    switch (frame.kind) {
      case 'request': {
        // Opt-in timing for the benchmarks, which set globalThis.reinsTrace
        // to an array from DevTools; off, it costs one global read.
        const trace = globalThis.reinsTrace;
        const t0 = trace ? performance.now() : 0;
        dispatcher.handle(frame).then((answer) => {
          conn.send(answer);
          if (trace) trace.push({ kind: 'frame', method: frame.params?.method ?? frame.method, tab: frame.params?.tabId, at: t0, ms: performance.now() - t0 });
        });
        return;
      }
      case 'event':
        // Events this version does not know are ignored, as v3 requires.
        if (frame.event === 'policy') core.ready.then(() => core.setPolicy(frame.params));
        return;
      case 'invalid':
        log.warn('reins: ignoring frame from companion:', frame.reason);
        return;
      default:
    }
  }

  // --- pairing -----------------------------------------------------------

  async function handleOffer(msg, sender) {
    let offer;
    try {
      offer = buildOffer(msg, sender);
    } catch (err) {
      // The reason goes to the worker's log; the page learns nothing.
      log.warn(`reins: ${err.message} (tab ${sender.tab?.id})`);
      throw err;
    }
    if (conn.isOpen() && core.emit('pair.offer', offer)) {
      await noteOffer({ origin: offer.origin, brand: offer.brand, forwarded: true });
      return { forwarded: true };
    }
    const { pendingOffers } = await chrome.storage.session.get('pendingOffers');
    const { queue, queued } = queueOffer(pendingOffers, offer);
    if (!queued) {
      log.warn(`reins: pairing offer from ${offer.origin} refused: ${queue.length} offers already wait for the app`);
      throw new Error('pairing offer refused: too many offers wait for the app');
    }
    await chrome.storage.session.set({ pendingOffers: queue });
    await noteOffer({ origin: offer.origin, brand: offer.brand, forwarded: false });
    return { forwarded: false };
  }

  async function noteOffer(fields) {
    const { offerNotice } = await chrome.storage.session.get('offerNotice');
    const notice = { ...(offerNotice || {}), ...fields, at: Date.now(), seen: false };
    await chrome.storage.session.set({ offerNotice: notice });
    await core.updateBadge();
    broadcast();
  }

  // --- extension pages ---------------------------------------------------

  async function popupState(activeTabId) {
    await core.ready;
    let active = null;
    if (Number.isSafeInteger(activeTabId)) active = await chrome.tabs.get(activeTabId).catch(() => null);
    const tabs = await core.listTabs();
    const { offerNotice } = await chrome.storage.session.get('offerNotice');
    let management = false;
    try {
      management = await chrome.permissions.contains({ permissions: ['management'] });
    } catch {
      management = false;
    }
    const notice = offerNotice && Date.now() - offerNotice.at < OFFER_NOTICE_MS ? offerNotice : null;
    return {
      connection: conn.status(),
      link: { paired: Boolean(await storedKey()), pairing: Boolean(pairing), error: pairingError },
      now: Date.now(),
      activeTab: active ? core.info(active) : null,
      sharedTabs: tabs.filter((t) => t.shared),
      management,
      offer: notice,
      policy: core.policy,
    };
  }

  async function onPageMessage(msg) {
    switch (msg.type) {
      case 'popup.state':
        return popupState(msg.tabId);
      case 'popup.opened': {
        const { offerNotice } = await chrome.storage.session.get('offerNotice');
        if (offerNotice && !offerNotice.seen) {
          await chrome.storage.session.set({ offerNotice: { ...offerNotice, seen: true } });
          await core.updateBadge();
        }
        return popupState(msg.tabId);
      }
      case 'share':
        if (msg.shared) await core.share(msg.tabId);
        else await core.unshare(msg.tabId);
        return popupState(msg.tabId);
      case 'focus': {
        const tab = await core.getTab(msg.tabId);
        await chrome.windows.update(tab.windowId, { focused: true });
        await chrome.tabs.update(tab.id, { active: true });
        return { ok: true };
      }
      case 'pair.code': {
        // Throws, for the popup to show, when it is not a code at all.
        const code = normalizeCode(msg.code);
        pairing = { code, expires: now() + CODE_TTL_MS };
        pairingError = '';
        conn.restart();
        return popupState(msg.tabId);
      }
      case 'reconnect':
        // Read options afresh: this message can overtake storage.onChanged.
        core.options = normalizeOptions(await chrome.storage.local.get(['port', 'profile', 'graph', 'overlay']));
        conn.restart();
        core.emit('tools.policy', core.toolsPolicy());
        return popupState(msg.tabId);
      default:
        throw new Error(`unknown message ${msg.type}`);
    }
  }

  async function onContentMessage(msg, sender) {
    switch (msg.type) {
      case 'pair-offer':
        return handleOffer(msg, sender);
      case 'overlay.query':
        await core.ready;
        return sender.frameId === 0 ? core.overlayFor(sender.tab.id) : { show: false, paused: false };
      default:
        throw new Error(`unknown message ${msg.type}`);
    }
  }

  const extensionOrigin = new URL(chrome.runtime.getURL('')).origin;

  function fromExtensionPage(sender) {
    if (sender.id !== chrome.runtime.id || typeof sender.url !== 'string') return false;
    try {
      return new URL(sender.url).origin === extensionOrigin;
    } catch {
      return false;
    }
  }

  chrome.runtime.onMessage.addListener((msg, sender, sendResponse) => {
    if (!msg || typeof msg !== 'object' || typeof msg.type !== 'string' || sender.id !== chrome.runtime.id) return false;
    // Pages' content scripts may only offer pairing and ask about the
    // overlay; sharing is changed only from the extension's own pages.
    let work;
    if (fromExtensionPage(sender)) work = onPageMessage(msg);
    else if (sender.tab && typeof sender.tab.id === 'number') work = onContentMessage(msg, sender);
    else return false;
    work.then(
      (result) => sendResponse({ ok: true, result }),
      (err) => sendResponse({ ok: false, error: err?.message ?? String(err) }),
    );
    return true;
  });

  function broadcast() {
    // Only open popups and options pages listen; none open is normal.
    chrome.runtime.sendMessage({ type: 'reins.changed' }).catch(() => {});
  }

  // --- browser events ----------------------------------------------------

  const afterLoad = (fn) => (...args) => {
    core.ready.then(() => fn(...args)).catch((err) => log.warn('reins: event handler failed', err));
  };

  // The tab cache is dropped at once, not after load: a request must never
  // see a description older than the last event.
  for (const ev of ['onUpdated', 'onRemoved', 'onAttached', 'onDetached']) chrome.tabs[ev].addListener((tabId) => core.forgetTab(tabId));
  chrome.tabs.onReplaced.addListener((added, removed) => core.forgetTab(removed));
  chrome.tabs.onCreated.addListener(afterLoad(() => core.scheduleTabs()));
  // A tab joins its opener's sharing only when the opener's page opened it
  // (a link, window.open, a middle-click): webNavigation says so. The tab
  // event's openerTabId proves nothing: Chromium fills it from its tab strip
  // (tabs DevTools opens get one, and so may a tab the person opens while an
  // agent's tab is in front), and any extension may set it; such a tab is
  // the person's.
  chrome.webNavigation.onCreatedNavigationTarget.addListener(afterLoad((d) => core.tabOpened(d.tabId, d.sourceTabId)));
  chrome.tabs.onUpdated.addListener(
    afterLoad((tabId, change) => {
      if ('url' in change || 'title' in change || 'status' in change || 'favIconUrl' in change) core.scheduleTabs();
      // A crashed page that loads again answers again.
      if (change.status === 'loading') core.debugger.pageLoading(tabId);
      if (change.status === 'loading' && core.sharing.isShared(tabId)) {
        // A shared tab that navigated to a restricted page can no longer be driven.
        const url = change.url;
        if (url && unsupportedReason(url, core.engine) !== '') core.debugger.detach(tabId, 'restricted_url');
      }
    }),
  );
  chrome.tabs.onRemoved.addListener(afterLoad((tabId) => core.tabClosed(tabId)));
  chrome.tabs.onAttached.addListener(afterLoad(() => core.scheduleTabs()));
  chrome.tabs.onDetached.addListener(afterLoad(() => core.scheduleTabs()));
  chrome.tabs.onReplaced.addListener(afterLoad((added, removed) => core.tabReplaced(added, removed)));

  chrome.storage.onChanged.addListener(
    afterLoad((changes, area) => {
      if (area !== 'local') return;
      const keys = Object.keys(changes);
      if (!keys.some((k) => ['port', 'profile', 'graph', 'overlay'].includes(k))) return;
      const next = { ...core.options };
      for (const k of keys) if (k in next) next[k] = changes[k].newValue;
      core.options = normalizeOptions(next);
      // Port and profile take effect through the reconnect the options page
      // asks for on save; graph and overlay apply at once.
      core.emit('tools.policy', core.toolsPolicy());
      core.pushOverlayAll();
      broadcast();
    }),
  );

  chrome.permissions.onAdded?.addListener(() => broadcast());
  chrome.permissions.onRemoved?.addListener(() => broadcast());

  // A shared tab's content script holds a port named WAKE_PORT; when the
  // browser stops this worker the port drops and the script connects again,
  // which starts the worker (and so the connection) at once. The listener
  // must exist for that connect to start a stopped worker.
  chrome.runtime.onConnect?.addListener((port) => {
    if (port.name !== WAKE_PORT || port.sender?.id !== chrome.runtime.id || !port.sender?.tab) {
      port.disconnect();
      return;
    }
    conn.ensure();
  });

  // The socket's pings keep the worker alive; the alarm restarts the
  // connection if the browser stopped the worker anyway.
  chrome.alarms.onAlarm.addListener((alarm) => {
    if (alarm.name === KEEPALIVE_ALARM) conn.ensure();
  });
  chrome.alarms.create(KEEPALIVE_ALARM, { periodInMinutes: 0.5 });

  // The link starts at once: it needs only the stored options, and the
  // companion's requests wait for the rest of the state (dispatcher).
  core.ready.catch((err) => log.warn('reins: cannot load state', err));
  conn.ensure();

  return { core, conn, dispatcher };
}

function withTimeout(promise, ms) {
  let timer;
  return Promise.race([
    promise,
    new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error('timed out')), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}
