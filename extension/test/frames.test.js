import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { parseFrame, resultFrame, errorFrame, eventFrame, WireError, Codes } from '../lib/frames.js';
import { CLOSE_UNAUTHORIZED } from '../lib/connection.js';

test('frames are classified', () => {
  assert.deepEqual(parseFrame('{"id":3,"method":"tabs.list"}'), { kind: 'request', id: 3, method: 'tabs.list', params: undefined });
  assert.deepEqual(parseFrame('{"id":4,"method":"cdp","params":{"tabId":1}}'), { kind: 'request', id: 4, method: 'cdp', params: { tabId: 1 } });
  assert.deepEqual(parseFrame('{"event":"policy","params":{"paused":true}}'), { kind: 'event', event: 'policy', params: { paused: true } });
  assert.deepEqual(parseFrame('{"id":5,"result":{}}'), { kind: 'response', id: 5 });
  for (const bad of ['nope', '[]', '1', 'null', '{}', '{"id":"1","method":"x"}', '{"id":1.5,"method":"x"}', '{"id":1,"method":7}']) {
    assert.equal(parseFrame(bad).kind, 'invalid', bad);
  }
});

test('answers carry the id, the result, or the error with its code', () => {
  assert.deepEqual(resultFrame(1, { a: 1 }), { id: 1, result: { a: 1 } });
  assert.deepEqual(resultFrame(2, undefined), { id: 2, result: null });
  assert.deepEqual(errorFrame(3, new WireError(Codes.notShared, 'tab 9 is not shared')), { id: 3, error: 'tab 9 is not shared', code: 'not_shared' });
  assert.deepEqual(errorFrame(4, new Error('boom')), { id: 4, error: 'boom', code: 'internal' });
  assert.deepEqual(errorFrame(5, new WireError('made_up', 'x')), { id: 5, error: 'x', code: 'internal' });
  assert.deepEqual(errorFrame(6, 'plain'), { id: 6, error: 'plain', code: 'internal' });
  assert.deepEqual(eventFrame('ping'), { event: 'ping' });
  assert.deepEqual(eventFrame('tabs', []), { event: 'tabs', params: [] });
});

// The error table lives in companion/wire/errors.go; error_codes.json is its
// copy, which a Go test keeps equal to the table.
const errorTable = JSON.parse(
  readFileSync(new URL('../../companion/wire/testdata/error_codes.json', import.meta.url), 'utf8'),
).codes;

test('every error code the extension sends is in the companion\'s error table', () => {
  const known = new Set(errorTable.map((row) => row.code));
  assert.ok(known.size >= 20, `only ${known.size} codes in the table`);
  for (const code of Object.values(Codes)) assert.ok(known.has(code), `${code} is not in the error table`);
});

test('the extension closes a failed link handshake with the table\'s close code', () => {
  const row = errorTable.find((r) => r.code === Codes.unauthorized);
  assert.equal(row?.close, CLOSE_UNAUTHORIZED);
});
