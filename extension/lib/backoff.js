// Reconnect delays: doubling from 1 s, capped at 15 s, so a companion that
// starts late is found quickly without hammering a port nobody listens on.

export const BACKOFF_MIN_MS = 1000;
export const BACKOFF_MAX_MS = 15000;

/** @param {number} attempt failures since the last successful hello, from 0 */
export function backoffDelay(attempt) {
  if (!Number.isFinite(attempt) || attempt <= 0) return BACKOFF_MIN_MS;
  // 2^4 already exceeds the cap; clamping the exponent avoids Infinity.
  const delay = BACKOFF_MIN_MS * 2 ** Math.min(attempt, 16);
  return Math.min(delay, BACKOFF_MAX_MS);
}
