// Reins content script: top frame only, at document_start. It answers the
// Browser Operator Protocol presence ping, forwards pairing offers to the
// worker untouched, and shows a small overlay on shared tabs.
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

  try {
    chrome.runtime.onMessage.addListener((msg) => {
      if (msg && msg.type === 'reins.overlay') render(msg);
    });
  } catch {
    return;
  }
  send({ type: 'overlay.query' }).then((answer) => {
    if (answer && answer.ok) render(answer.result);
  });
})();
