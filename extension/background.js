// Reins service worker (Chromium). All logic lives in lib/ with chrome
// injected; this file only hands it the real globals. Tabs are driven
// through chrome.debugger, the engine seam's default. Firefox starts from
// background-firefox.js instead, so this worker never loads the Firefox
// adapter's modules (a test walks its imports to keep it so).

import { startService } from './lib/service.js';

startService({
  chrome: globalThis.chrome,
  WebSocket: globalThis.WebSocket,
  navigator: globalThis.navigator,
  crypto: globalThis.crypto,
});
