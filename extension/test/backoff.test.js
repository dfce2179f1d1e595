import { test } from 'node:test';
import assert from 'node:assert/strict';
import { backoffDelay, BACKOFF_MIN_MS, BACKOFF_MAX_MS } from '../lib/backoff.js';

test('backoff doubles from 1 s and caps at 15 s', () => {
  assert.deepEqual([0, 1, 2, 3, 4, 5, 50].map(backoffDelay), [1000, 2000, 4000, 8000, 15000, 15000, 15000]);
  assert.equal(BACKOFF_MIN_MS, 1000);
  assert.equal(BACKOFF_MAX_MS, 15000);
});

test('backoff treats junk attempts as the first', () => {
  for (const a of [-1, NaN, undefined, Infinity]) assert.equal(backoffDelay(a), 1000);
  assert.equal(backoffDelay(1e9), 15000);
});

test('retries are fast for 30 s after a link that worked, then back off', async () => {
  const { retryDelay, FAST_RETRY_MS, RECENT_MS } = await import('../lib/backoff.js');
  assert.equal(FAST_RETRY_MS, 250);
  assert.equal(RECENT_MS, 30_000);
  assert.deepEqual(retryDelay(0, 0), { delay: 250, fast: true });
  assert.deepEqual(retryDelay(3, 29_999), { delay: 250, fast: true });
  assert.deepEqual(retryDelay(0, 30_000), { delay: 1000, fast: false });
  assert.deepEqual(retryDelay(3, 60_000), { delay: 8000, fast: false });
  // Never connected, or a clock that went backwards: the usual backoff.
  assert.deepEqual(retryDelay(1, null), { delay: 2000, fast: false });
  assert.deepEqual(retryDelay(1, -5), { delay: 2000, fast: false });
  assert.deepEqual(retryDelay(1, NaN), { delay: 2000, fast: false });
});
