import { test } from 'node:test';
import assert from 'node:assert/strict';
import { senderOrigin, buildOffer, queueOffer, isLoopbackHost, MAX_QUEUED_OFFERS } from '../lib/pairing.js';

const sender = (over = {}) => ({
  id: 'ext', frameId: 0, documentId: 'D1', documentLifecycle: 'active', origin: 'https://app.example',
  url: 'https://app.example/connect', tab: { id: 12, url: 'https://app.example/connect' }, ...over,
});

test('the origin comes from the sending frame, never from the message', () => {
  const offer = buildOffer({ config: { serverUrl: 'https://app.example', token: 't' }, brand: { name: 'X' }, origin: 'https://evil.test' }, sender());
  assert.deepEqual(offer, { config: { serverUrl: 'https://app.example', token: 't' }, brand: { name: 'X' }, origin: 'https://app.example', tabId: 12 });
  assert.deepEqual(senderOrigin(sender({ origin: 'http://127.0.0.1:47100', tab: { id: 1, url: 'http://127.0.0.1:47100/pair' } })), { origin: 'http://127.0.0.1:47100' });
});

// The attack: a sandboxed document (served with CSP sandbox, or a popup of
// a sandboxed iframe) shows https://claude.ai in the tab while its origin is
// opaque. It used to be credited with the tab URL's origin.
test('an opaque (sandboxed) sender is refused, whatever the tab shows', () => {
  for (const s of [
    sender({ origin: 'null', url: 'https://claude.ai/chat', tab: { id: 1, url: 'https://claude.ai/chat' } }),
    sender({ origin: undefined, url: 'https://claude.ai/chat', tab: { id: 1, url: 'https://claude.ai/chat' } }),
    sender({ origin: '', tab: { id: 1, url: 'https://claude.ai/chat' } }),
  ]) {
    assert.match(senderOrigin(s).refused ?? '', /opaque|did not report/);
    assert.throws(() => buildOffer({ config: {} }, s), /pairing offer refused/);
  }
});

test('the tab URL never stands in for the frame origin', () => {
  // The frame's own origin is credited even when the tab's URL says another.
  const s = sender({ origin: 'https://frame.example', tab: { id: 3, url: 'https://claude.ai/' } });
  assert.equal(buildOffer({ config: {} }, s).origin, 'https://frame.example');
});

test('offers come from https pages, or plain http on this machine only', () => {
  for (const origin of ['http://app.example', 'http://127.0.0.1.evil.example', 'ftp://app.example', 'file://', 'chrome-extension://abc',
    'https://app.example/path']) {
    assert.ok('refused' in senderOrigin(sender({ origin })), origin);
  }
  for (const origin of ['http://localhost:3000', 'http://127.0.0.1:8080', 'http://[::1]:8080', 'http://app.localhost', 'https://xn--bnk-6cd.example']) {
    assert.deepEqual(senderOrigin(sender({ origin })), { origin }, origin);
  }
  assert.equal(isLoopbackHost('127.255.0.1'), true);
  assert.equal(isLoopbackHost('128.0.0.1'), false);
  assert.equal(isLoopbackHost('localhost.evil.example'), false);
});

test('offers from frames, inactive documents or odd shapes are refused', () => {
  assert.throws(() => buildOffer({ config: {} }, sender({ frameId: 3 })), /top frame/);
  assert.throws(() => buildOffer({ config: {} }, sender({ documentLifecycle: 'prerender' })), /prerender/);
  assert.throws(() => buildOffer({ config: {} }, sender({ tab: undefined })), /tab/);
  assert.throws(() => buildOffer({ config: 'x' }, sender()), /config/);
  assert.throws(() => buildOffer({ config: {}, brand: 'b' }, sender()), /brand/);
  assert.throws(() => buildOffer({ config: { big: 'x'.repeat(70000) } }, sender()), /too large/);
  assert.deepEqual(buildOffer({ config: {} }, sender({ documentLifecycle: undefined })), { config: {}, origin: 'https://app.example', tabId: 12 });
});

test('only the latest offer per origin waits, and at most a handful', () => {
  let { queue: q } = queueOffer(undefined, { origin: 'https://a', config: { n: 1 } });
  ({ queue: q } = queueOffer(q, { origin: 'https://b', config: { n: 2 } }));
  ({ queue: q } = queueOffer(q, { origin: 'https://a', config: { n: 3 } }));
  assert.deepEqual(q, [{ origin: 'https://b', config: { n: 2 } }, { origin: 'https://a', config: { n: 3 } }]);
  for (let i = 0; i < 20; i++) ({ queue: q } = queueOffer(q, { origin: `https://p${i}`, config: {} }));
  assert.equal(q.length, MAX_QUEUED_OFFERS);
  assert.deepEqual(q.slice(0, 2).map((o) => o.origin), ['https://b', 'https://a'], 'a full queue dropped a waiting offer');
  const full = queueOffer(q, { origin: 'https://new', config: {} });
  assert.equal(full.queued, false);
  const replaced = queueOffer(q, { origin: 'https://a', config: { n: 4 } });
  assert.equal(replaced.queued, true);
  assert.equal(replaced.queue.at(-1).config.n, 4);
});
