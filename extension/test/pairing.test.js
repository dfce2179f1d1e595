import { test } from 'node:test';
import assert from 'node:assert/strict';
import { senderOrigin, buildOffer, queueOffer } from '../lib/pairing.js';

const sender = (over = {}) => ({ id: 'ext', frameId: 0, origin: 'https://app.example', tab: { id: 12, url: 'https://app.example/connect' }, ...over });

test('the origin comes from the sender, never from the message', () => {
  const offer = buildOffer({ config: { serverUrl: 'https://app.example', token: 't' }, brand: { name: 'X' }, origin: 'https://evil.test' }, sender());
  assert.deepEqual(offer, { config: { serverUrl: 'https://app.example', token: 't' }, brand: { name: 'X' }, origin: 'https://app.example', tabId: 12 });
  assert.equal(senderOrigin(sender({ origin: undefined })), 'https://app.example');
  assert.equal(senderOrigin(sender({ origin: 'null', tab: { id: 1, url: 'http://127.0.0.1:47100/pair' } })), 'http://127.0.0.1:47100');
});

test('offers from frames, opaque origins or odd shapes are refused', () => {
  assert.throws(() => buildOffer({ config: {} }, sender({ frameId: 3 })), /top frame/);
  assert.throws(() => buildOffer({ config: {} }, sender({ origin: 'null', tab: { id: 1, url: 'file:///x.html' } })), /top frame/);
  assert.throws(() => buildOffer({ config: {} }, sender({ tab: undefined })), /top frame/);
  assert.throws(() => buildOffer({ config: 'x' }, sender()), /config/);
  assert.throws(() => buildOffer({ config: {}, brand: 'b' }, sender()), /brand/);
  assert.throws(() => buildOffer({ config: { big: 'x'.repeat(70000) } }, sender()), /too large/);
  assert.deepEqual(buildOffer({ config: {} }, sender()), { config: {}, origin: 'https://app.example', tabId: 12 });
});

test('only the latest offer per origin waits', () => {
  let q = queueOffer(undefined, { origin: 'https://a', config: { n: 1 } });
  q = queueOffer(q, { origin: 'https://b', config: { n: 2 } });
  q = queueOffer(q, { origin: 'https://a', config: { n: 3 } });
  assert.deepEqual(q, [{ origin: 'https://b', config: { n: 2 } }, { origin: 'https://a', config: { n: 3 } }]);
});
