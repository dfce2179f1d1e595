// What goes on the socket is never over the companion's limits. The
// companion closes the link on a frame over 64 MiB, which would fail every
// agent's calls in flight; so an oversized answer becomes an error answer,
// and an oversized event (a 70 MiB console.log in a shared tab) is cut down:
// long strings deep in its params are truncated with a marker, and the
// event says `truncated: true`.

import { errorFrame, WireError, Codes } from './frames.js';

export const MAX_FRAME_BYTES = 64 << 20;
/** Events carry page content; each is capped well below the frame limit. */
export const MAX_EVENT_BYTES = 1 << 20;
/** A tab listing is no page content, but thousands of tabs with long URLs add up. */
export const MAX_TABS_EVENT_BYTES = 8 << 20;

const FIRST_STRING_CAP = 64 << 10;
const LAST_STRING_CAP = 64;

function eventLimit(event) {
  return event === 'tabs' ? MAX_TABS_EVENT_BYTES : MAX_EVENT_BYTES;
}

/** Whether text, as UTF-8, fits in max bytes. */
export function fits(text, max) {
  // Each UTF-16 unit is at most 3 UTF-8 bytes: only long texts need counting.
  return text.length * 3 <= max || new TextEncoder().encode(text).length <= max;
}

/**
 * The text to send for frame, within the limits.
 * @param {object} frame an event, a result or an error answer
 * @param {{maxFrame?:number, maxEvent?:number}} [limits] tests shrink them
 */
export function encodeFrame(frame, limits = {}) {
  const text = JSON.stringify(frame);
  if (typeof frame.event === 'string') {
    const max = limits.maxEvent ?? eventLimit(frame.event);
    return fits(text, max) ? text : JSON.stringify(shrinkEvent(frame, max));
  }
  const max = limits.maxFrame ?? MAX_FRAME_BYTES;
  if (frame.result === undefined || fits(text, max)) return text;
  const limit = max >= 1 << 20 ? `${max >> 20} MiB` : `${max} bytes`;
  return JSON.stringify(errorFrame(frame.id, new WireError(Codes.internal, `the result is larger than the ${limit} frame limit`)));
}

/** An answer over the frame limit becomes an error answer. */
export function fitFrame(answer, max = MAX_FRAME_BYTES) {
  return JSON.parse(encodeFrame(answer, { maxFrame: max }));
}

/**
 * The event with its long strings cut, shorter each round, until it fits;
 * an event that still does not (a huge array) keeps only what names it.
 */
export function shrinkEvent(frame, max) {
  for (let cap = FIRST_STRING_CAP; cap >= LAST_STRING_CAP; cap = Math.floor(cap / 4)) {
    const params = cut(frame.params, cap);
    const out = { event: frame.event, params: mark(params) };
    if (fits(JSON.stringify(out), max)) return out;
  }
  return { event: frame.event, params: summary(frame) };
}

function cut(v, cap) {
  if (typeof v === 'string') {
    return v.length > cap ? `${v.slice(0, cap)}…[truncated: ${v.length - cap} more characters]` : v;
  }
  if (Array.isArray(v)) return v.map((x) => cut(x, cap));
  if (v && typeof v === 'object') {
    const out = {};
    for (const [k, x] of Object.entries(v)) out[k] = cut(x, cap);
    return out;
  }
  return v;
}

function mark(params) {
  return params && typeof params === 'object' && !Array.isArray(params) ? { ...params, truncated: true } : params;
}

function summary(frame) {
  const p = frame.params;
  if (frame.event === 'cdp.event' && p && typeof p === 'object') {
    const out = { tabId: p.tabId, method: p.method, params: {}, truncated: true };
    if (p.sessionId !== undefined) out.sessionId = p.sessionId;
    return out;
  }
  return Array.isArray(p) ? [] : { truncated: true };
}
