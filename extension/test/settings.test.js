import { test } from 'node:test';
import assert from 'node:assert/strict';
import { normalizeOptions, parsePort, socketUrl } from '../lib/settings.js';
import { connectionText } from '../lib/status.js';

test('options normalise with defaults', () => {
  assert.deepEqual(normalizeOptions({}), { port: '', profile: '', graph: true, overlay: true });
  assert.deepEqual(normalizeOptions({ port: '47200', profile: '  Work ', graph: false, overlay: false }), { port: 47200, profile: 'Work', graph: false, overlay: false });
  assert.equal(normalizeOptions({ port: 'abc' }).port, '');
  assert.equal(parsePort(0), null);
  assert.equal(parsePort(65536), null);
  assert.equal(parsePort(' 8080 '), 8080);
  assert.equal(socketUrl(47100), 'ws://127.0.0.1:47100/');
});

test('connection state reads well', () => {
  assert.deepEqual(connectionText({ state: 'open', port: 47100 }, 0), { text: 'Connected to port 47100', kind: 'ok' });
  assert.equal(connectionText({ state: 'waiting', port: 47100, retryAt: 4200, error: 'cannot reach the Reins app on port 47100' }, 1000).text,
    'cannot reach the Reins app on port 47100. Reconnecting in 4s');
  assert.equal(connectionText(undefined, 0).kind, 'error');
});
