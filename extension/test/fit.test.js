import { test } from 'node:test';
import assert from 'node:assert/strict';
import { encodeFrame, fitFrame, shrinkEvent, fits, MAX_EVENT_BYTES, MAX_FRAME_BYTES } from '../lib/fit.js';

test('limits', () => {
  assert.equal(MAX_EVENT_BYTES, 1 << 20);
  assert.equal(MAX_FRAME_BYTES, 64 << 20);
});

test('small frames pass unchanged', () => {
  const ev = { event: 'cdp.event', params: { tabId: 1, method: 'Runtime.consoleAPICalled', params: { args: [{ type: 'string', value: 'hi' }] } } };
  assert.equal(encodeFrame(ev), JSON.stringify(ev));
  assert.equal(encodeFrame({ id: 1, result: { a: 1 } }), '{"id":1,"result":{"a":1}}');
});

test('an answer over the frame limit becomes an error', () => {
  assert.deepEqual(fitFrame({ id: 1, result: { data: 'x'.repeat(100) } }, 50), { id: 1, error: 'the result is larger than the 50 bytes frame limit', code: 'internal' });
  assert.deepEqual(fitFrame({ id: 2, result: { data: 'x' } }, 50), { id: 2, result: { data: 'x' } });
  assert.deepEqual(fitFrame({ id: 3, error: 'e', code: 'internal' }, 5), { id: 3, error: 'e', code: 'internal' });
});

// A 70 MiB console.log in a shared tab: the event that reaches the
// companion is under 1 MiB, keeps its shape and says it was truncated.
test('a 70 MiB console.log becomes an event under 1 MiB', () => {
  const huge = 'x'.repeat(70 << 20);
  const ev = {
    event: 'cdp.event',
    params: { tabId: 7, method: 'Runtime.consoleAPICalled', sessionId: 's1', params: { type: 'log', args: [{ type: 'string', value: huge }], timestamp: 1 } },
  };
  const text = encodeFrame(ev);
  assert.ok(text.length <= MAX_EVENT_BYTES, `${text.length} bytes`);
  const got = JSON.parse(text);
  assert.equal(got.event, 'cdp.event');
  assert.equal(got.params.truncated, true);
  assert.equal(got.params.tabId, 7);
  assert.equal(got.params.method, 'Runtime.consoleAPICalled');
  assert.equal(got.params.sessionId, 's1');
  assert.equal(got.params.params.type, 'log');
  const value = got.params.params.args[0].value;
  assert.ok(value.startsWith('xxxx'));
  assert.match(value, /…\[truncated: \d+ more characters\]$/);
});

test('an event too big even with short strings keeps only its name', () => {
  const many = Array.from({ length: 50_000 }, (_, i) => ({ n: i, s: 'y'.repeat(20) }));
  const ev = { event: 'cdp.event', params: { tabId: 3, method: 'Network.somethingHuge', params: { items: many } } };
  const got = shrinkEvent(ev, 100_000);
  assert.deepEqual(got, { event: 'cdp.event', params: { tabId: 3, method: 'Network.somethingHuge', params: {}, truncated: true } });
  assert.ok(fits(JSON.stringify(got), 100_000));
});

test('multi-byte text is measured in UTF-8', () => {
  const ev = { event: 'detached', params: { reason: '€'.repeat(400) } }; // 1200 bytes, 400 units
  const text = encodeFrame(ev, { maxEvent: 1000 });
  assert.ok(new TextEncoder().encode(text).length <= 1000);
  assert.equal(JSON.parse(text).params.truncated, true);
});

test('a tab listing may be larger than a page event', () => {
  const tabs = Array.from({ length: 3000 }, (_, i) => ({ id: i, url: `https://example.com/${'p'.repeat(400)}`, title: 't' }));
  const text = encodeFrame({ event: 'tabs', params: tabs });
  assert.ok(text.length > MAX_EVENT_BYTES);
  assert.deepEqual(JSON.parse(text).params.length, 3000);
  assert.equal(JSON.parse(text).params[0].url.length, 'https://example.com/'.length + 400);
});
