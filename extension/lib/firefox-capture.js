// Screenshots and the screencast of the Firefox adapter: Page.captureScreenshot
// options mapped onto tabs.captureTab, the crop maths for the
// captureVisibleTab fallback, and the pacing of the captureTab-based
// screencast. Pure, so tested in node.

/** base64 payload of a data: URL, which is what CDP returns as data. */
export function dataURLPayload(url) {
  if (typeof url !== 'string') throw new TypeError('capture returned no data URL');
  const i = url.indexOf(',');
  if (!url.startsWith('data:') || i < 0) throw new TypeError('capture returned no data URL');
  return url.slice(i + 1);
}

function clampQuality(q) {
  if (typeof q !== 'number' || !Number.isFinite(q)) return undefined;
  return Math.max(0, Math.min(100, Math.round(q)));
}

/**
 * tabs.captureTab options for Page.captureScreenshot params. Both use CSS
 * pixels of the page (not the viewport) for the rectangle, and an output
 * scale in image pixels per CSS pixel; without a clip both capture the
 * viewport at the device pixel ratio.
 */
export function captureOptions(p = {}) {
  const format = p.format === 'jpeg' ? 'jpeg' : 'png';
  const opts = { format };
  if (format === 'jpeg') opts.quality = clampQuality(p.quality) ?? 80;
  const c = p.clip;
  if (c && typeof c === 'object') {
    for (const k of ['x', 'y', 'width', 'height']) {
      if (typeof c[k] !== 'number' || !Number.isFinite(c[k])) throw new TypeError(`clip.${k} must be a number`);
    }
    if (c.width <= 0 || c.height <= 0) throw new TypeError('clip must have a positive size');
    opts.rect = { x: c.x, y: c.y, width: c.width, height: c.height };
    const scale = typeof c.scale === 'number' && Number.isFinite(c.scale) && c.scale > 0 ? c.scale : 1;
    opts.scale = scale;
  }
  return opts;
}

/**
 * Where to crop a captureVisibleTab image (which shows the viewport at
 * device pixels) for a CDP clip in page coordinates, and the output size.
 * Returns null when the clip lies entirely outside the viewport.
 *
 * @param {{imageWidth:number, imageHeight:number, viewport:{w:number, h:number, sx:number, sy:number},
 *   clip?:{x:number, y:number, width:number, height:number, scale?:number}}} o
 */
export function cropRect({ imageWidth, imageHeight, viewport, clip }) {
  if (!(imageWidth > 0 && imageHeight > 0 && viewport.w > 0 && viewport.h > 0)) return null;
  // Image pixels per CSS pixel, which is the device pixel ratio (and zoom).
  const rx = imageWidth / viewport.w;
  const ry = imageHeight / viewport.h;
  if (!clip) return { sx: 0, sy: 0, sw: imageWidth, sh: imageHeight, dw: imageWidth, dh: imageHeight };
  const scale = typeof clip.scale === 'number' && clip.scale > 0 ? clip.scale : 1;
  // The clip in viewport CSS px, cut to the viewport: captureVisibleTab
  // cannot see beyond it.
  const x0 = Math.max(0, clip.x - viewport.sx);
  const y0 = Math.max(0, clip.y - viewport.sy);
  const x1 = Math.min(viewport.w, clip.x - viewport.sx + clip.width);
  const y1 = Math.min(viewport.h, clip.y - viewport.sy + clip.height);
  if (x1 <= x0 || y1 <= y0) return null;
  const sx = Math.round(x0 * rx);
  const sy = Math.round(y0 * ry);
  const sw = Math.max(1, Math.min(imageWidth - sx, Math.round((x1 - x0) * rx)));
  const sh = Math.max(1, Math.min(imageHeight - sy, Math.round((y1 - y0) * ry)));
  return {
    sx,
    sy,
    sw,
    sh,
    dw: Math.max(1, Math.round((x1 - x0) * scale)),
    dh: Math.max(1, Math.round((y1 - y0) * scale)),
  };
}

/**
 * The output scale for a screencast frame: device pixels capped by
 * maxWidth/maxHeight (both in output pixels, as CDP means them).
 */
export function screencastScale({ w, h, dpr = 1 }, maxWidth, maxHeight) {
  let s = dpr > 0 ? dpr : 1;
  if (Number.isFinite(maxWidth) && maxWidth > 0 && w * s > maxWidth) s = maxWidth / w;
  if (Number.isFinite(maxHeight) && maxHeight > 0 && h * s > maxHeight) s = maxHeight / h;
  return s;
}

export const SCREENCAST_MIN_INTERVAL_MS = 33; // at most about 30 frames a second
export const SCREENCAST_IDLE_INTERVAL_MS = 250; // a still page is polled slowly
export const SCREENCAST_MAX_DUTY = 0.75; // share of the time spent capturing

/**
 * Paces the screencast: Chromium pushes a frame when the page paints, but a
 * WebExtension can only poll with captureTab, which costs the browser real
 * work. The pacer keeps capturing from taking more than SCREENCAST_MAX_DUTY
 * of the time, and slows down while frames come out unchanged.
 */
export class ScreencastPacer {
  constructor({ minInterval = SCREENCAST_MIN_INTERVAL_MS, idleInterval = SCREENCAST_IDLE_INTERVAL_MS, maxDuty = SCREENCAST_MAX_DUTY } = {}) {
    this.minInterval = minInterval;
    this.idleInterval = idleInterval;
    this.maxDuty = maxDuty;
    this.avgCapture = 0;
    this.unchanged = 0;
  }

  /**
   * @param {number} captureMs how long the last capture took
   * @param {boolean} changed whether it differed from the frame before
   * @returns {number} ms to wait before the next capture
   */
  next(captureMs, changed) {
    const c = Math.max(0, captureMs);
    this.avgCapture = this.avgCapture === 0 ? c : this.avgCapture * 0.7 + c * 0.3;
    this.unchanged = changed ? 0 : this.unchanged + 1;
    // capture / (capture + wait) <= maxDuty
    const dutyWait = (this.avgCapture * (1 - this.maxDuty)) / this.maxDuty;
    let wait = Math.max(this.minInterval - c, dutyWait);
    if (this.unchanged >= 3) wait = Math.max(wait, this.idleInterval);
    return Math.round(Math.max(0, wait));
  }
}
