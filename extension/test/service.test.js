import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startService, fitFrame } from '../lib/service.js';
import { fakeChrome, FakeTimers, settle } from './fakes.js';

class FakeSocket {
  static all = [];
  constructor(url) {
    this.url = url;
    this.sent = [];
    this.closed = false;
    FakeSocket.all.push(this);
  }
  send(text) {
    if (this.closed) throw new Error('closed');
    this.sent.push(JSON.parse(text));
  }
  close() {
    this.closed = true;
  }
  // test helpers
  open() {
    this.onopen?.();
  }
  receive(obj) {
    this.onmessage?.({ data: JSON.stringify(obj) });
  }
  drop() {
    this.closed = true;
    this.onclose?.({ code: 1006, reason: '' });
  }
  refuse(code, reason) {
    this.closed = true;
    this.onclose?.({ code, reason });
  }
}

const navigator = {
  userAgent: 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36',
  userAgentData: { brands: [{ brand: 'Chromium', version: '156' }, { brand: 'Not)A;Brand', version: '24' }] },
};
let uuid = 0;
const crypto = { randomUUID: () => `00000000-0000-4000-8000-${String(++uuid).padStart(12, '0')}` };

async function boot(opts = {}) {
  FakeSocket.all = [];
  const chrome = fakeChrome(opts);
  if (opts.local) await chrome.storage.local.set(opts.local);
  const timers = new FakeTimers();
  const svc = startService({ chrome, WebSocket: FakeSocket, navigator, crypto, timers, log: opts.log ?? { warn() {} } });
  await settle();
  return { chrome, timers, svc, socket: () => FakeSocket.all.at(-1) };
}

test('connects to the default port and sends hello, tabs and tools.policy first', async () => {
  const { chrome, socket } = await boot({ tabs: [{ id: 1, url: 'https://example.com/', title: 'E' }] });
  const ws = socket();
  assert.equal(ws.url, 'ws://127.0.0.1:47100/');
  ws.open();
  await settle();
  const [hello, tabs, policy] = ws.sent;
  assert.equal(hello.event, 'hello');
  assert.deepEqual(Object.keys(hello.params).sort(), ['browser', 'browserEngine', 'browserSessionId', 'extensionVersion', 'instanceId', 'userAgent', 'version']);
  assert.equal(hello.params.version, 3);
  assert.equal(hello.params.extensionVersion, '0.1.0');
  assert.equal(hello.params.browser, 'Chromium');
  assert.equal(hello.params.browserEngine, 'chromium');
  assert.equal(hello.params.instanceId, (await chrome.storage.local.get('instanceId')).instanceId);
  assert.equal(hello.params.browserSessionId, (await chrome.storage.session.get('browserSessionId')).browserSessionId);
  assert.deepEqual(tabs, { event: 'tabs', params: [{ id: 1, url: 'https://example.com/', title: 'E', shared: false, attached: false, windowId: 1 }] });
  assert.deepEqual(policy, { event: 'tools.policy', params: { disabled: [], haveCatalog: false, graph: true, overlay: true } });
});

test('the options port and profile are used', async () => {
  const { socket } = await boot({ local: { port: 47211, profile: 'Work' } });
  const ws = socket();
  assert.equal(ws.url, 'ws://127.0.0.1:47211/');
  ws.open();
  await settle();
  assert.equal(ws.sent[0].params.profile, 'Work');
});

test('the native host port is used, and it is asked to start the app once per cycle', async () => {
  const chromeOpts = {};
  FakeSocket.all = [];
  const chrome = fakeChrome(chromeOpts);
  const native = [];
  chrome.runtime.sendNativeMessage = async (host, msg) => {
    native.push([host, msg.type]);
    return { port: 47300, version: '0.1.0', running: false };
  };
  const timers = new FakeTimers();
  startService({ chrome, WebSocket: FakeSocket, navigator, crypto, timers, log: { warn() {} } });
  await settle();
  assert.equal(FakeSocket.all.at(-1).url, 'ws://127.0.0.1:47300/');
  FakeSocket.all.at(-1).drop();
  await timers.advance(1000);
  FakeSocket.all.at(-1).drop();
  await timers.advance(2000);
  assert.deepEqual(native.filter(([, t]) => t === 'start'), [['com.reins.companion', 'start']]);
  assert.ok(native.every(([h]) => h === 'com.reins.companion'));
});

test('pings every 20 s and reconnects with backoff', async () => {
  const { timers, socket, svc } = await boot();
  const first = socket();
  first.open();
  await settle();
  const n = first.sent.length;
  await timers.advance(20_000);
  assert.deepEqual(first.sent.slice(n), [{ event: 'ping' }]);
  await timers.advance(20_000);
  assert.equal(first.sent.filter((f) => f.event === 'ping').length, 2);

  // The companion goes away: retries at 1 s, 2 s, 4 s, 8 s, 15 s, 15 s.
  first.drop();
  const delays = [];
  for (let i = 0; i < 6; i++) {
    const before = FakeSocket.all.length;
    const start = timers.now;
    while (FakeSocket.all.length === before) await timers.advance(500);
    delays.push(timers.now - start);
    FakeSocket.all.at(-1).drop();
  }
  assert.deepEqual(delays, [1000, 2000, 4000, 8000, 15000, 15000]);
  assert.equal(svc.conn.status().state, 'waiting');

  // A companion that answers resets the backoff.
  await timers.advance(15_000);
  const ws = socket();
  ws.open();
  await settle();
  ws.receive({ event: 'policy', params: { paused: false, overlay: true } });
  ws.drop();
  const before = FakeSocket.all.length;
  await timers.advance(1000);
  assert.equal(FakeSocket.all.length, before + 1);
});

test('requests are answered on the socket; unknown events are ignored', async () => {
  const { socket } = await boot({ tabs: [{ id: 1, url: 'https://example.com/' }] });
  const ws = socket();
  ws.open();
  await settle();
  ws.receive({ event: 'something.new', params: {} });
  ws.receive({ id: 9, method: 'tabs.list' });
  ws.receive({ id: 10, method: 'nope' });
  await settle();
  assert.deepEqual(ws.sent.find((f) => f.id === 9).result.map((t) => t.id), [1]);
  assert.equal(ws.sent.find((f) => f.id === 10).code, 'unknown_method');
});

test('policy paused sets the badge and reaches shared tabs', async () => {
  const { chrome, socket, svc } = await boot({ tabs: [{ id: 1, url: 'https://example.com/' }] });
  const ws = socket();
  ws.open();
  await settle();
  await svc.core.share(1);
  ws.receive({ event: 'policy', params: { paused: true, overlay: true } });
  await settle();
  assert.equal(chrome._state.badge, 'II');
  const pushed = chrome._calls.filter((c) => c[0] === 'tabs.sendMessage' && c[1] === 1).at(-1);
  assert.deepEqual(pushed[2], { type: 'reins.overlay', show: true, paused: true });
});

function message(chrome, msg, sender) {
  return new Promise((resolve) => {
    // A listener that returns true answers later; otherwise there is no answer.
    if (!chrome.runtime.onMessage.fire(msg, sender, resolve).includes(true)) resolve(undefined);
  });
}

const pageSender = (url, extra = {}) => ({ id: 'cahakjcjmollcmebjjnhhlhcdhipahla', url, origin: new URL(url).origin, frameId: 0, tab: { id: 1, url }, ...extra });

test('pairing offers are forwarded with the sender origin, or queued until hello', async () => {
  const { chrome, socket } = await boot({ tabs: [{ id: 1, url: 'https://app.example/connect' }] });
  // Not connected yet: queued, one per origin.
  const sender = pageSender('https://app.example/connect');
  await message(chrome, { type: 'pair-offer', config: { token: 'a' }, brand: { name: 'App' }, origin: 'https://evil.test' }, sender);
  const r = await message(chrome, { type: 'pair-offer', config: { token: 'b' }, brand: { name: 'App' } }, sender);
  assert.deepEqual(r, { ok: true, result: { forwarded: false } });
  assert.equal(chrome._state.badge, '1');
  const ws = socket();
  ws.open();
  await settle();
  const offers = ws.sent.filter((f) => f.event === 'pair.offer');
  assert.deepEqual(offers, [{ event: 'pair.offer', params: { config: { token: 'b' }, brand: { name: 'App' }, origin: 'https://app.example', tabId: 1 } }]);

  // Connected: sent at once.
  const r2 = await message(chrome, { type: 'pair-offer', config: { token: 'c' } }, sender);
  assert.deepEqual(r2, { ok: true, result: { forwarded: true } });
  assert.equal(ws.sent.at(-1).params.config.token, 'c');

  // From a subframe: refused.
  const r3 = await message(chrome, { type: 'pair-offer', config: {} }, { ...sender, frameId: 4 });
  assert.equal(r3.ok, false);
});

// The attack end to end in the worker: a sandboxed document whose tab shows
// https://claude.ai offers pairing with an attacker's backend. Its origin is
// opaque, so nothing reaches the companion, and the reason is logged.
test('a pairing offer from an opaque-origin document is refused', async () => {
  const warnings = [];
  const { chrome, socket } = await boot({ tabs: [{ id: 1, url: 'https://claude.ai/chat' }], log: { warn: (m) => warnings.push(String(m)), info() {} } });
  const ws = socket();
  ws.open();
  await settle();
  const sandboxed = pageSender('https://claude.ai/chat', { origin: 'null' });
  const r = await message(chrome, { type: 'pair-offer', config: { transport: 'websocket', serverUrl: 'wss://attacker.example/ws', token: 't' } }, sandboxed);
  assert.equal(r.ok, false);
  assert.ok(!ws.sent.some((f) => f.event === 'pair.offer'), 'the offer reached the companion');
  assert.ok(warnings.some((w) => /opaque origin/.test(w)), `no reason logged: ${warnings}`);
});

test('content scripts cannot change sharing; extension pages can', async () => {
  const { chrome, svc } = await boot({ tabs: [{ id: 1, url: 'https://example.com/' }] });
  const fromPage = await message(chrome, { type: 'share', tabId: 1, shared: true }, pageSender('https://example.com/'));
  assert.equal(fromPage.ok, false);
  assert.equal(svc.core.sharing.isShared(1), false);
  const popup = { id: chrome.runtime.id, url: chrome.runtime.getURL('popup.html') };
  const fromPopup = await message(chrome, { type: 'share', tabId: 1, shared: true }, popup);
  assert.equal(fromPopup.ok, true);
  assert.equal(fromPopup.result.activeTab.shared, true);
  assert.equal(svc.core.sharing.isShared(1), true);
  const other = await message(chrome, { type: 'share', tabId: 1, shared: false }, { id: 'someotherextension', url: 'chrome-extension://someotherextension/x.html' });
  assert.equal(other, undefined);
  assert.equal(svc.core.sharing.isShared(1), true);
});

test('an answer over the frame limit becomes an error', () => {
  assert.deepEqual(fitFrame({ id: 1, result: { data: 'x'.repeat(100) } }, 50), { id: 1, error: 'the result is larger than the 64 MiB frame limit', code: 'internal' });
  assert.deepEqual(fitFrame({ id: 2, result: { data: 'x' } }, 50), { id: 2, result: { data: 'x' } });
  assert.deepEqual(fitFrame({ id: 3, error: 'e', code: 'internal' }, 5), { id: 3, error: 'e', code: 'internal' });
});

test('a profile the app refuses right after hello shows why and is not retried faster', async () => {
  const { timers, socket, svc } = await boot();
  const reason = 'this browser profile is blocked in the Reins app';
  const delays = [];
  for (let i = 0; i < 5; i++) {
    const ws = socket();
    ws.open();
    await settle();
    assert.equal(ws.sent[0].event, 'hello');
    ws.refuse(4003, reason);
    assert.equal(svc.conn.status().error, `the Reins app closed the connection: ${reason}`);
    const before = FakeSocket.all.length;
    const start = timers.now;
    while (FakeSocket.all.length === before) await timers.advance(500);
    delays.push(timers.now - start);
  }
  assert.deepEqual(delays, [1000, 2000, 4000, 8000, 15000]);
});
