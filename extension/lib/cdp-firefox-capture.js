// Screenshots and the screencast of the Firefox adapter (their Page
// methods): tabs.captureTab, or captureVisibleTab cropped where a Firefox
// lacks captureTab. The option mapping, crop maths and pacing are pure and
// live in firefox-capture.js.

import { WireError, Codes } from './frames.js';
import { captureOptions, dataURLPayload, cropRect, screencastScale, ScreencastPacer } from './firefox-capture.js';

const ACK_TIMEOUT_MS = 1_000;
// Like Chromium, a couple of frames may await their ack: the next capture
// overlaps the trip to the viewer, and a slow viewer still slows the
// capture instead of piling frames up.
const SCREENCAST_IN_FLIGHT = 2;
const LAYOUT_REFRESH_MS = 250;

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

/** @param {import('./cdp-firefox.js').FirefoxShared} fx */
export function captureDomain(fx) {
  const { browser, timers, log, now } = fx;

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
          vp = await fx.isolated(tabId, 'layout', []);
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
          fx.emit(tabId, 'Page.screencastFrame', {
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
        if (wait > 0) await fx.sleep(wait);
      } catch (err) {
        if (!sc.running) return;
        sc.failures = (sc.failures ?? 0) + 1;
        if (sc.failures === 1) log.warn('reins: screencast capture failed', tabId, err?.message ?? err);
        vp = null;
        // A tab navigating or being closed fails a capture or two.
        await fx.sleep(Math.min(2000, 100 * 2 ** Math.min(sc.failures, 5)));
      }
    }
  }

  async function cropVisible(tabId, opts) {
    const tab = await browser.tabs.get(tabId);
    if (!tab.active) throw new WireError(Codes.internal, `tab ${tabId} is not the active tab of its window; this Firefox can capture only that one`);
    const full = await browser.tabs.captureVisibleTab(tab.windowId, { format: 'png' });
    const vp = await fx.isolated(tabId, 'layout', []);
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

  const methods = {
    async 'Page.captureScreenshot'(tabId, p) {
      const opts = captureOptions(p);
      const url = typeof browser.tabs.captureTab === 'function' ? await browser.tabs.captureTab(tabId, opts) : await cropVisible(tabId, opts);
      return { data: dataURLPayload(url) };
    },

    async 'Page.screencastFrameAck'(tabId, p, st) {
      const sc = st.screencast;
      if (sc && Number.isInteger(p.sessionId)) ackScreencast(sc, p.sessionId);
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
  };

  return {
    methods,
    released(tabId, st) {
      stopScreencast(st);
    },
  };
}
