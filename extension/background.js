// Reins service worker. All logic lives in lib/ with chrome injected; this
// file only hands it the real globals.

import { startService } from './lib/service.js';

startService({
  chrome: globalThis.chrome,
  WebSocket: globalThis.WebSocket,
  navigator: globalThis.navigator,
  crypto: globalThis.crypto,
});
