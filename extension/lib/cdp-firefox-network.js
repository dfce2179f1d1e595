// The Network domain of the Firefox adapter: requests of attached tabs with
// Network enabled, from webRequest (firefox-network.js turns the details
// into CDP event params), and the tab's own cookies (firefox-cookies.js).

import { netErrorText } from './firefox-runtime.js';
import * as net from './firefox-network.js';
import { cookieMethods } from './firefox-cookies.js';

// A redirect whose next hop never shows up must not leak.
export const MAX_PENDING_REDIRECTS = 1000;

/** @param {import('./cdp-firefox.js').FirefoxShared} fx */
export function networkDomain(fx) {
  const redirects = new Map(); // webRequest requestId → redirect details
  const wr = fx.browser.webRequest;
  if (wr) {
    const filter = { urls: ['<all_urls>'] };
    const watched = (d) => d.tabId >= 0 && fx.tabs.get(d.tabId)?.domains.has('Network');
    const ctxOf = (d) => {
      const n = fx.nav(d.tabId);
      const loaderId = d.type === 'main_frame' ? (n.pending ??= fx.mint()) : (n.loader ?? '');
      return { loaderId, frameId: d.frameId === 0 ? fx.frameIdOf(d.tabId) : `sub-${d.tabId}-${d.frameId}` };
    };
    wr.onBeforeRequest.addListener((d) => {
      if (!watched(d)) return;
      const redirect = redirects.get(d.requestId);
      redirects.delete(d.requestId);
      fx.emit(d.tabId, 'Network.requestWillBeSent', net.requestWillBeSent(d, ctxOf(d), redirect));
    }, filter);
    wr.onBeforeRedirect.addListener((d) => {
      if (!watched(d)) return;
      redirects.set(d.requestId, d);
      if (redirects.size > MAX_PENDING_REDIRECTS) redirects.delete(redirects.keys().next().value);
    }, filter, ['responseHeaders']);
    wr.onResponseStarted.addListener((d) => {
      if (!watched(d)) return;
      fx.emit(d.tabId, 'Network.responseReceived', net.responseReceived(d, ctxOf(d)));
    }, filter, ['responseHeaders']);
    wr.onCompleted.addListener((d) => {
      if (!watched(d)) return;
      fx.emit(d.tabId, 'Network.loadingFinished', net.loadingFinished(d));
    }, filter);
    wr.onErrorOccurred.addListener((d) => {
      redirects.delete(d.requestId);
      if (!watched(d)) return;
      fx.emit(d.tabId, 'Network.loadingFailed', net.loadingFailed(d, netErrorText(d.error)));
    }, filter);
  }

  return {
    methods: {
      'Network.disable': fx.domainSwitch('Network', false),
      'Network.enable': fx.domainSwitch('Network', true),
      ...cookieMethods(fx),
    },
  };
}
