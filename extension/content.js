// Reins content script: top frame only, at document_start. It answers the
// Browser Operator Protocol presence ping, forwards pairing offers to the
// worker untouched, shows a small overlay on shared tabs, and from a shared
// tab wakes the worker when the browser stopped it.
//
// Content scripts cannot be ES modules, so this is a classic script.

(() => {
  const PRODUCT_NAME = 'Reins';
  let version = '';
  try {
    version = chrome.runtime.getManifest().version;
  } catch {
    return; // extension reloaded under us: this copy is orphaned
  }

  function send(msg) {
    try {
      return chrome.runtime.sendMessage(msg).catch(() => undefined);
    } catch {
      return Promise.resolve(undefined);
    }
  }

  window.addEventListener('message', (event) => {
    // Only messages this very window posted to itself: never from frames,
    // openers or other windows.
    if (event.source !== window) return;
    const data = event.data;
    if (data === null || typeof data !== 'object' || Array.isArray(data)) return;
    const kind = data.__browserOperator;
    if (kind === 'ping') {
      const nonce = data.nonce;
      if (nonce === undefined) return;
      // An opaque origin cannot be addressed; such pages get no pong.
      if (typeof window.origin !== 'string' || window.origin === 'null') return;
      window.postMessage({ __browserOperator: 'pong', nonce, version, productName: PRODUCT_NAME }, window.origin);
    } else if (kind === 'pair-offer') {
      // A sandboxed document has an opaque origin while its tab shows some
      // site's URL: it cannot speak for that site. The worker refuses it
      // too, going by the browser's own record of the sending frame.
      if (typeof window.origin !== 'string' || window.origin === 'null') return;
      send({ type: 'pair-offer', config: data.config, brand: data.brand });
    }
  });

  // --- overlay -------------------------------------------------------------

  let host = null;
  let label = null;

  function setStyles(el, styles) {
    for (const [k, v] of Object.entries(styles)) el.style.setProperty(k, v, 'important');
  }

  function render(state) {
    if (!state || !state.show) {
      if (host) host.remove();
      return;
    }
    if (!host) {
      host = document.createElement('reins-overlay');
      // Styles are set through the CSSOM, which a page's style-src policy
      // does not block the way it can block a <style> element.
      setStyles(host, {
        all: 'initial',
        position: 'fixed',
        right: '12px',
        bottom: '12px',
        'z-index': '2147483647',
        'pointer-events': 'none',
      });
      const root = host.attachShadow({ mode: 'closed' });
      label = document.createElement('div');
      setStyles(label, {
        font: '600 12px/1.2 system-ui, sans-serif',
        color: '#fff',
        padding: '5px 10px',
        'border-radius': '999px',
        'box-shadow': '0 1px 4px rgba(0,0,0,.3)',
        'pointer-events': 'none',
        'user-select': 'none',
      });
      root.append(label);
    }
    label.textContent = state.paused ? 'Reins: paused' : 'Reins: shared with agents';
    label.style.setProperty('background', state.paused ? 'rgba(95,99,104,.92)' : 'rgba(26,115,232,.92)', 'important');
    const parent = document.documentElement;
    if (!parent) {
      document.addEventListener('DOMContentLoaded', () => render(state), { once: true });
      return;
    }
    if (host.parentNode !== parent) parent.appendChild(host);
  }

  // --- waking the worker ----------------------------------------------------
  // The browser stops the extension's worker when it deems it idle, or when
  // it crashes, and the worker's socket to Reins goes with it. Only a
  // browser event starts it again, and the keep-alive alarm fires every
  // 30 s. A shared tab therefore holds a port to the worker: a stopping
  // worker drops the port, and connecting again starts the worker at once,
  // which reconnects to Reins. A port that drops right away (no worker took
  // it) is retried with backoff, so a broken extension is not hammered.

  const WAKE_PORT = 'reins.wake';
  const WAKE_MIN_MS = 250;
  const WAKE_MAX_MS = 30_000;
  // A port that lived this long was dropped by a worker that stopped.
  const WAKE_LIVED_MS = 1000;
  let wakePort = null;
  let wakeWanted = false;
  let wakeDelay = 0;
  let wakeTimer = 0;

  function holdWake(on) {
    wakeWanted = on;
    if (!on) {
      clearTimeout(wakeTimer);
      wakeTimer = 0;
      const port = wakePort;
      wakePort = null;
      try {
        port?.disconnect();
      } catch {
        // already gone
      }
      return;
    }
    if (!wakePort && !wakeTimer) connectWake();
  }

  function connectWake() {
    wakeTimer = 0;
    if (!wakeWanted) return;
    const opened = Date.now();
    let port;
    try {
      port = chrome.runtime.connect({ name: WAKE_PORT });
    } catch {
      wakeWanted = false; // extension reloaded under us
      return;
    }
    wakePort = port;
    port.onDisconnect.addListener(() => {
      void chrome.runtime.lastError;
      if (wakePort !== port) return;
      wakePort = null;
      if (!wakeWanted) return;
      wakeDelay = Date.now() - opened >= WAKE_LIVED_MS ? 0 : Math.min(Math.max(wakeDelay * 2, WAKE_MIN_MS), WAKE_MAX_MS);
      wakeTimer = setTimeout(connectWake, wakeDelay);
    });
  }

  function apply(state) {
    render(state);
    holdWake(state?.shared === true);
  }

  try {
    chrome.runtime.onMessage.addListener((msg) => {
      if (msg && msg.type === 'reins.overlay') apply(msg);
    });
  } catch {
    return;
  }
  send({ type: 'overlay.query' }).then((answer) => {
    if (answer && answer.ok) apply(answer.result);
  });
})();
