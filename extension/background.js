// Reins service worker (Chromium) and background script (Firefox). All logic
// lives in lib/ with chrome injected; this file only hands it the real
// globals and picks the engine seam.

import { startService } from './lib/service.js';
import { createFirefoxCdp } from './lib/cdp-firefox.js';

// Only Firefox has runtime.getBrowserInfo, and it has no chrome.debugger:
// its tabs are driven through the WebExtension adapter instead.
const firefox = typeof globalThis.browser?.runtime?.getBrowserInfo === 'function';

startService({
  chrome: globalThis.chrome,
  WebSocket: globalThis.WebSocket,
  navigator: globalThis.navigator,
  crypto: globalThis.crypto,
  cdp: firefox ? createFirefoxCdp(globalThis.browser) : undefined,
});
