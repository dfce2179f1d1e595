// Reins background script (Firefox), the entry the Firefox manifest names
// (packaging/cmd/extpack rewrites background.service_worker to it). Firefox
// has no chrome.debugger: its tabs are driven through the WebExtension
// adapter. Everything is imported statically and registered synchronously,
// so an event that wakes the stopped event page finds its listeners.

import { startService } from './lib/service.js';
import { createFirefoxCdp } from './lib/cdp-firefox.js';

startService({
  chrome: globalThis.chrome,
  WebSocket: globalThis.WebSocket,
  navigator: globalThis.navigator,
  crypto: globalThis.crypto,
  cdp: createFirefoxCdp(globalThis.browser),
});
