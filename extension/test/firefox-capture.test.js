import { test } from 'node:test';
import assert from 'node:assert/strict';
import { captureOptions, cropRect, dataURLPayload, screencastScale, ScreencastPacer, SCREENCAST_IDLE_INTERVAL_MS, SCREENCAST_MIN_INTERVAL_MS } from '../lib/firefox-capture.js';
import { HistoryTracker } from '../lib/firefox-history.js';

test('screenshot params map onto captureTab options', () => {
  assert.deepEqual(captureOptions({ format: 'png' }), { format: 'png' });
  assert.deepEqual(captureOptions({}), { format: 'png' });
  assert.deepEqual(captureOptions({ format: 'jpeg' }), { format: 'jpeg', quality: 80 });
  assert.deepEqual(captureOptions({ format: 'jpeg', quality: 135 }), { format: 'jpeg', quality: 100 });
  assert.deepEqual(captureOptions({ format: 'webp' }), { format: 'png' }, 'Firefox captures png or jpeg only');
  assert.deepEqual(captureOptions({ format: 'jpeg', quality: 50, clip: { x: 10, y: 500, width: 200, height: 100, scale: 0.5 } }), {
    format: 'jpeg',
    quality: 50,
    rect: { x: 10, y: 500, width: 200, height: 100 },
    scale: 0.5,
  });
  assert.equal(captureOptions({ clip: { x: 0, y: 0, width: 1, height: 1 } }).scale, 1, 'a clip without scale is 1:1, as in CDP');
  assert.throws(() => captureOptions({ clip: { x: 0, y: 0, width: 0, height: 10 } }), TypeError);
  assert.throws(() => captureOptions({ clip: { x: 'a', y: 0, width: 1, height: 1 } }), TypeError);
});

test('data URLs give their base64 payload', () => {
  assert.equal(dataURLPayload('data:image/png;base64,iVBOR'), 'iVBOR');
  assert.throws(() => dataURLPayload('http://x'), TypeError);
  assert.throws(() => dataURLPayload(undefined), TypeError);
});

test('crop maths: the whole viewport without a clip', () => {
  assert.deepEqual(cropRect({ imageWidth: 2000, imageHeight: 1000, viewport: { w: 1000, h: 500, sx: 0, sy: 0 } }), { sx: 0, sy: 0, sw: 2000, sh: 1000, dw: 2000, dh: 1000 });
});

test('crop maths: a page-coordinate clip on a scrolled hi-dpi viewport', () => {
  // dpr 2, scrolled down 300 px; the clip is in page coordinates.
  const c = cropRect({ imageWidth: 2000, imageHeight: 1000, viewport: { w: 1000, h: 500, sx: 0, sy: 300 }, clip: { x: 100, y: 350, width: 200, height: 100, scale: 1 } });
  assert.deepEqual(c, { sx: 200, sy: 100, sw: 400, sh: 200, dw: 200, dh: 100 });
});

test('crop maths: a clip hanging off the viewport is cut to it', () => {
  const c = cropRect({ imageWidth: 1000, imageHeight: 500, viewport: { w: 1000, h: 500, sx: 0, sy: 0 }, clip: { x: 900, y: 450, width: 300, height: 300, scale: 2 } });
  assert.deepEqual(c, { sx: 900, sy: 450, sw: 100, sh: 50, dw: 200, dh: 100 });
  assert.equal(cropRect({ imageWidth: 1000, imageHeight: 500, viewport: { w: 1000, h: 500, sx: 0, sy: 0 }, clip: { x: 0, y: 900, width: 10, height: 10 } }), null);
  assert.equal(cropRect({ imageWidth: 0, imageHeight: 500, viewport: { w: 1000, h: 500, sx: 0, sy: 0 } }), null);
});

test('screencast frames are device pixels capped by the max size', () => {
  assert.equal(screencastScale({ w: 800, h: 600, dpr: 1 }, 1280, 720), 1);
  assert.equal(screencastScale({ w: 800, h: 600, dpr: 2 }, 0, 0), 2);
  assert.equal(screencastScale({ w: 1600, h: 900, dpr: 1 }, 800, 800), 0.5);
  assert.equal(screencastScale({ w: 1000, h: 2000, dpr: 1 }, 1000, 500), 0.25);
});

test('the pacer keeps capture under its share of time and idles on still pages', () => {
  const p = new ScreencastPacer({ minInterval: 33, idleInterval: 250, maxDuty: 0.5 });
  assert.equal(p.next(10, true), 23, 'a fast capture waits out the frame interval');
  const slow = new ScreencastPacer({ minInterval: 33, idleInterval: 250, maxDuty: 0.5 });
  assert.equal(slow.next(100, true), 100, 'capturing at most half the time');
  const still = new ScreencastPacer();
  still.next(5, false);
  still.next(5, false);
  assert.ok(still.next(5, false) >= SCREENCAST_IDLE_INTERVAL_MS, 'three unchanged frames slow it down');
  assert.ok(still.next(5, true) < SCREENCAST_IDLE_INTERVAL_MS, 'a change speeds it up again');
  assert.ok(SCREENCAST_MIN_INTERVAL_MS > 0);
});

test('history: pushes, back and forward by URL, and moves we started', () => {
  const h = new HistoryTracker();
  h.committed('http://a/1');
  h.committed('http://a/2');
  h.committed('http://a/3');
  assert.deepEqual(h.view(3, 'http://a/3').entries.map((e) => e.url), ['http://a/1', 'http://a/2', 'http://a/3']);
  h.committed('http://a/2', { transitionQualifiers: ['forward_back'] });
  assert.equal(h.index, 1);
  h.committed('http://a/3', { transitionQualifiers: ['forward_back'] });
  assert.equal(h.index, 2);
  const first = h.entries[0].id;
  h.pendingIndex = h.indexOf(first);
  h.committed('http://a/1', { transitionQualifiers: ['forward_back'] });
  assert.equal(h.index, 0);
  h.committed('http://b/');
  assert.deepEqual(h.entries.map((e) => e.url), ['http://a/1', 'http://b/'], 'a new page drops the forward entries');
});

test('history: reloads and redirects replace, and the page count reconciles', () => {
  const h = new HistoryTracker();
  h.committed('http://a/');
  h.committed('http://a/', { transitionType: 'reload' });
  h.committed('http://a/next', { transitionQualifiers: ['server_redirect'] });
  assert.deepEqual(h.entries.map((e) => e.url), ['http://a/next']);
  // The tab had two entries before the adapter watched it.
  const v = h.view(3, 'http://a/next');
  assert.equal(v.currentIndex, 2);
  assert.deepEqual(v.entries.map((e) => e.url), ['', '', 'http://a/next']);
  // replaceState looked like a push: the page's count wins.
  const r = new HistoryTracker();
  r.committed('http://c/1');
  r.committed('http://c/1#x');
  r.committed('http://c/2');
  const rv = r.view(2, 'http://c/2');
  assert.deepEqual(rv.entries.map((e) => e.url), ['http://c/1', 'http://c/2']);
  assert.equal(rv.currentIndex, 1);
});
