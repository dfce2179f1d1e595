// Reconnect delays. Normally doubling from 1 s, capped at 15 s, so a
// companion that starts late is found quickly without hammering a port
// nobody listens on. Right after a link that worked drops (the app
// restarted, the machine woke up), every FAST_RETRY_MS for RECENT_MS: the
// companion is most likely back within a second or two.

export const BACKOFF_MIN_MS = 1000;
export const BACKOFF_MAX_MS = 15000;
export const FAST_RETRY_MS = 250;
export const RECENT_MS = 30_000;

/** @param {number} attempt failures since the last successful hello, from 0 */
export function backoffDelay(attempt) {
  if (!Number.isFinite(attempt) || attempt <= 0) return BACKOFF_MIN_MS;
  // 2^4 already exceeds the cap; clamping the exponent avoids Infinity.
  const delay = BACKOFF_MIN_MS * 2 ** Math.min(attempt, 16);
  return Math.min(delay, BACKOFF_MAX_MS);
}

/**
 * @param {number} attempt slow attempts so far
 * @param {number|null} sinceHealthy ms since a link last worked, null if none has
 * @returns {{delay:number, fast:boolean}}
 */
export function retryDelay(attempt, sinceHealthy) {
  if (sinceHealthy !== null && Number.isFinite(sinceHealthy) && sinceHealthy >= 0 && sinceHealthy < RECENT_MS) {
    return { delay: FAST_RETRY_MS, fast: true };
  }
  return { delay: backoffDelay(attempt), fast: false };
}
