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
