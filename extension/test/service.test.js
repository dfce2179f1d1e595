import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac, randomBytes, webcrypto } from 'node:crypto';
import { startService, WAKE_PORT, NOT_PAIRED } from '../lib/service.js';
import { fakeChrome, FakeTimers, settle, until, TEST_LINK_KEY } from './fakes.js';

// The companion's side of the link handshake, written again here with
// node:crypto so the extension's WebCrypto code is checked against an
// independent implementation (and both against link_auth.json).
function mac(key, label, port, ne, nc) {
  const head = Buffer.concat([Buffer.from(label), Buffer.from([0, (port >> 8) & 0xff, port & 0xff])]);
  return createHmac('sha256', key).update(Buffer.concat([head, ne, nc])).digest();
}

class FakeSocket {
  static all = [];
  constructor(url) {
    this.url = url;
    this.port = Number(new URL(url).port);
    this.sent = [];
    this.closed = false;
    this.closeCode = null;
    FakeSocket.all.push(this);
  }
  send(text) {
    if (this.closed) throw new Error('closed');
    this.sent.push(JSON.parse(text));
  }
  close(code) {
    // As a real socket: only the first close counts.
    if (this.closed) return;
    this.closed = true;
    this.closeCode = code ?? 1000;
  }
  // test helpers
  /** Opens and answers the hello as the companion that holds key does. */
  async open({ key = TEST_LINK_KEY } = {}) {
    const ch = await this.challenge({ key });
    const k = Buffer.from(key, 'base64');
    this.receive({ event: 'auth', params: ch.params });
    await until(() => this.sent.some((f) => f.event === 'auth') || this.closed, 'the extension proof');
    const proof = this.sent.find((f) => f.event === 'auth')?.params.proof;
    assert.equal(proof, mac(k, 'reins-link/1 extension', this.port, ch.ne, ch.nc).toString('base64'), 'the extension proof');
    await settle();
  }
  /** Opens, waits for hello, and returns the challenge a companion with key would send. */
  async challenge({ key = TEST_LINK_KEY, port = this.port } = {}) {
    this.onopen?.();
    await until(() => this.sent.length > 0, 'hello');
    const ne = Buffer.from(this.sent[0].params.auth.nonce, 'base64');
    const nc = randomBytes(32);
    const proof = mac(Buffer.from(key, 'base64'), 'reins-link/1 companion', port, ne, nc);
    return { ne, nc, params: { nonce: nc.toString('base64'), proof: proof.toString('base64') } };
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
const crypto = {
  randomUUID: () => `00000000-0000-4000-8000-${String(++uuid).padStart(12, '0')}`,
  subtle: webcrypto.subtle,
  getRandomValues: (a) => webcrypto.getRandomValues(a),
};

async function boot(opts = {}) {
  FakeSocket.all = [];
  const chrome = fakeChrome(opts);
  if (opts.local) await chrome.storage.local.set(opts.local);
  const timers = new FakeTimers();
  const svc = startService({ chrome, WebSocket: FakeSocket, navigator, crypto, timers, log: opts.log ?? { warn() {} } });
  await settle();
  return { chrome, timers, svc, socket: () => FakeSocket.all.at(-1) };
}

test('connects to the default port and sends hello, its proof, tabs and tools.policy first', async () => {
  const { chrome, socket } = await boot({ tabs: [{ id: 1, url: 'https://example.com/', title: 'E' }] });
  const ws = socket();
  assert.equal(ws.url, 'ws://127.0.0.1:47100/');
  await ws.open();
  const [hello, auth, tabs, policy] = ws.sent;
  assert.equal(hello.event, 'hello');
  assert.deepEqual(Object.keys(hello.params).sort(), ['auth', 'browser', 'browserEngine', 'browserSessionId', 'extensionVersion', 'instanceId', 'userAgent', 'version']);
  assert.equal(hello.params.auth.v, 1);
  assert.equal(hello.params.auth.mode, 'key');
  assert.equal(Buffer.from(hello.params.auth.nonce, 'base64').length, 32);
  assert.equal(auth.event, 'auth');
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
  await ws.open();
  assert.equal(ws.sent[0].params.profile, 'Work');
});

test('the native host port is used, and it is asked to start the app once per cycle', async () => {
  const chromeOpts = {};
  FakeSocket.all = [];
  const chrome = fakeChrome(chromeOpts);
  const native = [];
  chrome.runtime.sendNativeMessage = async (host, msg) => {
    native.push([host, msg.type]);
    return { type: 'hello', port: 47300, version: '0.1.0', running: false };
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

/** The delays between the next n sockets, each dropped at once. */
async function retryDelays(timers, n, step = 50) {
  const delays = [];
  for (let i = 0; i < n; i++) {
    const before = FakeSocket.all.length;
    const start = timers.now;
    while (FakeSocket.all.length === before) await timers.advance(step);
    delays.push(timers.now - start);
    FakeSocket.all.at(-1).drop();
  }
  return delays;
}

test('pings every 20 s; a companion that was just there is retried fast, then with backoff', async () => {
  const { timers, socket, svc } = await boot();
  const first = socket();
  await first.open();
  const n = first.sent.length;
  await timers.advance(20_000);
  assert.deepEqual(first.sent.slice(n), [{ event: 'ping' }]);
  await timers.advance(20_000);
  assert.equal(first.sent.filter((f) => f.event === 'ping').length, 2);

  // The companion goes away (a restart): every 250 ms for 30 s, so it is
  // found again within a quarter second of coming back…
  first.drop();
  const fast = await retryDelays(timers, 120);
  assert.ok(fast.every((d) => d === 250), `fast retries: ${fast}`);
  // …then the usual backoff: 1 s, 2 s, 4 s, 8 s, 15 s, 15 s.
  const slow = await retryDelays(timers, 6, 250);
  assert.deepEqual(slow, [1000, 2000, 4000, 8000, 15000, 15000]);
  assert.equal(svc.conn.status().state, 'waiting');

  // A companion that answers resets the backoff.
  await timers.advance(15_000);
  const ws = socket();
  await ws.open();
  ws.receive({ event: 'policy', params: { paused: false, overlay: true } });
  await settle();
  ws.drop();
  const before = FakeSocket.all.length;
  await timers.advance(250);
  assert.equal(FakeSocket.all.length, before + 1);
});

test('a companion that never worked is not retried fast', async () => {
  const { timers } = await boot();
  FakeSocket.all.at(-1).drop();
  assert.deepEqual(await retryDelays(timers, 5, 250), [1000, 2000, 4000, 8000, 15000]);
});

test('requests are answered on the socket; unknown events are ignored', async () => {
  const { socket } = await boot({ tabs: [{ id: 1, url: 'https://example.com/' }] });
  const ws = socket();
  await ws.open();
  ws.receive({ event: 'something.new', params: {} });
  ws.receive({ id: 9, method: 'tabs.list' });
  ws.receive({ id: 10, method: 'nope' });
  await settle();
  assert.deepEqual(ws.sent.find((f) => f.id === 9).result.map((t) => t.id), [1]);
  assert.equal(ws.sent.find((f) => f.id === 10).code, 'unknown_method');
});

// Chromium names an opener in the tab event for tabs the page did not open:
// one DevTools opens, one another extension opens (tabs.create takes any
// openerTabId), maybe one the person opens while an agent's tab is in
// front. Such a tab is the person's; only a navigation the opener's page
// started shares it.
test('a tab joins its opener\'s sharing only when the opener\'s page opened it', async () => {
  FakeSocket.all = [];
  const chrome = fakeChrome({ tabs: [{ id: 1, url: 'https://example.com/' }] });
  const created = { listeners: [], addListener(fn) { this.listeners.push(fn); } };
  chrome.webNavigation = { onCreatedNavigationTarget: created };
  const svc = startService({ chrome, WebSocket: FakeSocket, navigator, crypto, timers: new FakeTimers(), log: { warn() {} } });
  await settle();
  await svc.core.share(1);
  const open = (id) => {
    const t = { id, url: '', pendingUrl: `https://example.com/${id}`, title: '', windowId: 1, groupId: -1, active: true };
    chrome._state.tabs.set(id, t);
    return { ...t };
  };
  chrome.tabs.onCreated.fire({ ...open(5), openerTabId: 1 });
  await settle();
  assert.equal(svc.core.sharing.isShared(5), false, 'an opener in the tab event alone shares nothing');
  chrome.tabs.onCreated.fire(open(6));
  assert.equal(created.listeners.length, 1);
  created.listeners[0]({ sourceTabId: 1, sourceFrameId: 0, tabId: 6, url: 'https://example.com/6' });
  await settle();
  assert.equal(svc.core.sharing.isShared(6), true);
  assert.equal(svc.core.sharing.openerOf(6), 1);
});

test('policy paused sets the badge and reaches shared tabs', async () => {
  const { chrome, socket, svc } = await boot({ tabs: [{ id: 1, url: 'https://example.com/' }] });
  const ws = socket();
  await ws.open();
  await svc.core.share(1);
  ws.receive({ event: 'policy', params: { paused: true, overlay: true } });
  await settle();
  assert.equal(chrome._state.badge, 'II');
  const pushed = chrome._calls.filter((c) => c[0] === 'tabs.sendMessage' && c[1] === 1).at(-1);
  assert.deepEqual(pushed[2], { type: 'reins.overlay', show: true, paused: true, shared: true });
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
  await ws.open();
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

test('a profile the app refuses right after hello shows why and is not retried faster', async () => {
  const { timers, socket, svc } = await boot();
  const reason = 'this browser profile is blocked in the Reins app';
  const delays = [];
  for (let i = 0; i < 5; i++) {
    const ws = socket();
    await ws.open();
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

// H-1: whatever listens on the port without the link key gets nothing. The
// extension checks the companion's proof before it proves anything, answers
// no request, and sends no tabs, offers or policies to a peer that did not
// prove itself.
test('a fake companion is refused and obeyed in nothing', async () => {
  const wrongKey = Buffer.alloc(32, 1).toString('base64');
  const cases = {
    'a proof made with another key': async (ws) => {
      const ch = await ws.challenge({ key: wrongKey });
      ws.receive({ event: 'auth', params: ch.params });
    },
    'a relay from another port': async (ws) => {
      const ch = await ws.challenge({ port: ws.port + 1 });
      ws.receive({ event: 'auth', params: ch.params });
    },
    'a request before any proof': async (ws) => {
      await ws.challenge();
      ws.receive({ id: 1, method: 'tabs.list' });
    },
    'a request instead of the proof, then a share': async (ws) => {
      await ws.challenge();
      ws.receive({ id: 2, method: 'tabs.share', params: { tabId: 1, shared: true } });
      ws.receive({ id: 3, method: 'tabs.create', params: { url: 'https://evil.example/' } });
    },
    'a policy before any proof': async (ws) => {
      await ws.challenge();
      ws.receive({ event: 'policy', params: { paused: false, overlay: false } });
    },
    'a malformed challenge': async (ws) => {
      await ws.challenge();
      ws.receive({ event: 'auth', params: { nonce: 'AAAA', proof: 'AAAA' } });
    },
  };
  for (const [name, play] of Object.entries(cases)) {
    const { chrome, socket, svc } = await boot({ tabs: [{ id: 1, url: 'https://bank.example/' }] });
    await message(chrome, { type: 'pair-offer', config: { token: 'x' } }, pageSender('https://app.example/'));
    const ws = socket();
    await play(ws);
    await until(() => ws.closed, `${name}: the extension closing`);
    assert.equal(ws.closeCode, 4001, name);
    await settle();
    assert.deepEqual(ws.sent.map((f) => f.event ?? `answer ${f.id}`), ['hello'], `${name}: sent ${JSON.stringify(ws.sent)}`);
    assert.equal(svc.core.sharing.isShared(1), false, name);
    assert.equal(chrome._calls.filter((c) => c[0] === 'tabs.create').length, 0, name);
    assert.notEqual(svc.core.policy?.overlay, false, name);
    assert.match(svc.conn.status().error, /prove|Reins app|valid proof/, name);
  }
});

test('a companion that never proves itself is closed after 5 s', async () => {
  const { timers, socket, svc } = await boot();
  const ws = socket();
  ws.onopen();
  await until(() => ws.sent.length === 1, 'hello');
  await timers.advance(4900);
  assert.equal(ws.closed, false);
  await timers.advance(100);
  assert.equal(ws.closeCode, 4001);
  assert.match(svc.conn.status().error, /did not prove it is the Reins app within 5 s/);
});

test('with no key and no native host, the popup asks for a pairing code', async () => {
  const { chrome, timers, svc } = await boot({ linkKey: null });
  assert.equal(FakeSocket.all.length, 0, 'no socket without a key');
  assert.equal(svc.conn.status().error, NOT_PAIRED);
  const popup = { id: chrome.runtime.id, url: chrome.runtime.getURL('popup.html') };
  const state = await message(chrome, { type: 'popup.state' }, popup);
  assert.deepEqual(state.result.link, { paired: false, pairing: false, error: '' });
  const bad = await message(chrome, { type: 'pair.code', code: 'hello' }, popup);
  assert.equal(bad.ok, false);
  assert.match(bad.error, /10 characters/);
  await timers.advance(1000);
  assert.equal(FakeSocket.all.length, 0);
});

// A store install with no native host pairs with the code the app shows,
// gets the link key over the socket, and uses the key from then on.
test('pairing with a code brings the link key', async () => {
  const { chrome, svc, timers } = await boot({ linkKey: null });
  const popup = { id: chrome.runtime.id, url: chrome.runtime.getURL('popup.html') };
  const code = '7K3QHW2M9X';
  const answer = await message(chrome, { type: 'pair.code', code: '7k3qh-w2m9x' }, popup);
  assert.equal(answer.ok, true);
  assert.equal(answer.result.link.pairing, true);
  const ws = FakeSocket.all.at(-1);
  ws.onopen();
  await until(() => ws.sent.length === 1, 'hello');
  const auth = ws.sent[0].params.auth;
  assert.equal(auth.mode, 'code');
  const ne = Buffer.from(auth.nonce, 'base64');
  const nc = randomBytes(32);
  const ck = mac(Buffer.from(code), 'reins-link/1 code', ws.port, ne, nc);
  ws.receive({ event: 'auth', params: { nonce: nc.toString('base64'), proof: mac(ck, 'reins-link/1 companion', ws.port, ne, nc).toString('base64') } });
  await until(() => ws.sent.length === 2, 'the extension proof');
  assert.equal(ws.sent[1].params.proof, mac(ck, 'reins-link/1 extension', ws.port, ne, nc).toString('base64'));
  // Nothing else until the key arrived.
  await settle();
  assert.equal(ws.sent.length, 2);
  const key = Buffer.alloc(32, 42);
  const pad = mac(ck, 'reins-link/1 wrap', ws.port, ne, nc);
  const wrapped = Buffer.from(key.map((b, i) => b ^ pad[i]));
  ws.receive({ event: 'auth.key', params: { key: wrapped.toString('base64'), proof: mac(key, 'reins-link/1 companion', ws.port, ne, nc).toString('base64') } });
  await until(() => ws.sent.some((f) => f.event === 'tabs'), 'tabs after pairing');
  assert.equal((await chrome.storage.local.get('linkKey')).linkKey, key.toString('base64'));
  assert.equal(svc.conn.isOpen(), true);
  // The next connection proves the key.
  ws.drop();
  await timers.advance(1000);
  await until(() => FakeSocket.all.at(-1) !== ws, 'a new socket');
  const next = FakeSocket.all.at(-1);
  await next.open({ key: key.toString('base64') });
  assert.equal(next.sent[0].params.auth.mode, 'key');
});

test('a wrong code says so in the popup and is not tried again', async () => {
  const { chrome, timers } = await boot({ linkKey: null });
  const popup = { id: chrome.runtime.id, url: chrome.runtime.getURL('popup.html') };
  await message(chrome, { type: 'pair.code', code: '00000-00000' }, popup);
  const ws = FakeSocket.all.at(-1);
  ws.onopen();
  await until(() => ws.sent.length === 1, 'hello');
  const ne = Buffer.from(ws.sent[0].params.auth.nonce, 'base64');
  const nc = randomBytes(32);
  const ck = mac(Buffer.from('7K3QHW2M9X'), 'reins-link/1 code', ws.port, ne, nc);
  ws.receive({ event: 'auth', params: { nonce: nc.toString('base64'), proof: mac(ck, 'reins-link/1 companion', ws.port, ne, nc).toString('base64') } });
  await until(() => ws.closed, 'the close');
  assert.equal(ws.sent.length, 1, 'no proof for a companion whose code differs');
  const state = await message(chrome, { type: 'popup.state' }, popup);
  assert.equal(state.result.link.pairing, false);
  assert.match(state.result.link.error, /does not match the one the Reins app shows/);
  const before = FakeSocket.all.length;
  await timers.advance(20_000);
  assert.equal(FakeSocket.all.length, before, 'no key, no code: no more sockets');
});

// The app was reinstalled with a new key: its proof fails with the old key;
// the native host has the new one, and the extension connects with it at once.
test('a refused key is checked against the native host', async () => {
  FakeSocket.all = [];
  const chrome = fakeChrome();
  const fresh = Buffer.alloc(32, 9).toString('base64');
  let hostAsked = 0;
  chrome.runtime.sendNativeMessage = async (host, msg) => {
    if (msg.type === 'hello') hostAsked++;
    return { type: 'hello', port: 47100, version: '0.1.0', running: true, key: fresh };
  };
  await chrome.storage.local.set({ port: 47100 });
  const timers = new FakeTimers();
  startService({ chrome, WebSocket: FakeSocket, navigator, crypto, timers, log: { warn() {}, info() {} } });
  await settle();
  const ws = FakeSocket.all.at(-1);
  const ch = await ws.challenge({ key: fresh });
  ws.receive({ event: 'auth', params: ch.params });
  await until(() => ws.closed, 'the refusal');
  await until(() => FakeSocket.all.at(-1) !== ws, 'a reconnect with the new key');
  assert.equal((await chrome.storage.local.get('linkKey')).linkKey, fresh);
  await FakeSocket.all.at(-1).open({ key: fresh });
  assert.equal(hostAsked, 1);
});

test('the native host hands over the key on the first connection', async () => {
  FakeSocket.all = [];
  const chrome = fakeChrome({ linkKey: null });
  chrome.runtime.sendNativeMessage = async () => ({ type: 'hello', port: 47100, running: true, key: TEST_LINK_KEY });
  const timers = new FakeTimers();
  startService({ chrome, WebSocket: FakeSocket, navigator, crypto, timers, log: { warn() {} } });
  await settle();
  await FakeSocket.all.at(-1).open();
  assert.equal((await chrome.storage.local.get('linkKey')).linkKey, TEST_LINK_KEY);
});

test('a worker started again tries the last working link\'s port before asking the native host', async () => {
  // The first worker learns the port from the host and keeps it for the
  // browser session once the link works.
  const chrome = fakeChrome({});
  const native = [];
  chrome.runtime.sendNativeMessage = async (host, msg) => {
    native.push(msg.type);
    return { type: 'hello', port: 47300, version: '0.1.0', running: true, key: TEST_LINK_KEY };
  };
  // A worker the browser starts, with this session's storage and fresh
  // sockets: returns its timers.
  const startWorker = async () => {
    FakeSocket.all = [];
    const timers = new FakeTimers();
    startService({ chrome, WebSocket: FakeSocket, navigator, crypto, timers, log: { warn() {} } });
    await settle();
    return timers;
  };
  await startWorker();
  const first = FakeSocket.all.at(-1);
  assert.equal(first.url, 'ws://127.0.0.1:47300/');
  await first.open();
  first.receive({ event: 'policy', params: { paused: false, overlay: true } });
  await settle();
  assert.deepEqual(native, ['hello']);
  assert.equal((await chrome.storage.session.get('linkPort')).linkPort, 47300);

  // The browser stops that worker and starts another with the same session
  // storage: it connects at once, with no native host process.
  await startWorker();
  const again = FakeSocket.all.at(-1);
  assert.equal(again.url, 'ws://127.0.0.1:47300/');
  assert.deepEqual(native, ['hello']);
  await again.open();
  assert.equal(again.closed, false);

  // A third worker finds nothing there (the app moved to another port):
  // the next try asks the host, once.
  await chrome.storage.session.set({ linkPort: 47999 });
  const timers3 = await startWorker();
  assert.equal(FakeSocket.all.at(-1).url, 'ws://127.0.0.1:47999/');
  FakeSocket.all.at(-1).drop();
  await timers3.advance(1000);
  assert.equal(FakeSocket.all.at(-1).url, 'ws://127.0.0.1:47300/');
  assert.deepEqual(native, ['hello', 'hello']);
  // A fourth finds a program squatting on the remembered port: it cannot
  // prove the key, is closed and obeyed in nothing, and the next try asks
  // the host.
  await chrome.storage.session.set({ linkPort: 47888 });
  const timers4 = await startWorker();
  const squatter = FakeSocket.all.at(-1);
  assert.equal(squatter.url, 'ws://127.0.0.1:47888/');
  const forged = await squatter.challenge({ key: Buffer.alloc(32, 1).toString('base64') });
  squatter.receive({ event: 'auth', params: forged.params });
  await until(() => squatter.closed, 'the squatter closed');
  assert.equal(squatter.closeCode, 4001);
  assert.ok(!squatter.sent.some((f) => f.event === 'auth'), 'no proof given to the squatter');
  await timers4.advance(1000);
  assert.equal(FakeSocket.all.at(-1).url, 'ws://127.0.0.1:47300/');
  // One for the refused proof (is the key still the host's?), one for the port.
  assert.deepEqual(native, ['hello', 'hello', 'hello', 'hello']);
});

// H-3: a 70 MiB console.log in a shared tab reaches the socket cut below
// 1 MiB; the link, and every call on it, survives.
test('oversized events are cut before they reach the socket', async () => {
  const { socket, svc } = await boot({ tabs: [{ id: 1, url: 'https://example.com/' }] });
  const ws = socket();
  await ws.open();
  const sentBefore = ws.sent.length;
  const big = 'x'.repeat(3 << 20);
  assert.equal(svc.core.emit('cdp.event', { tabId: 1, method: 'Runtime.consoleAPICalled', params: { args: [{ type: 'string', value: big }] } }), true);
  const ev = ws.sent[sentBefore];
  assert.equal(ev.params.truncated, true);
  assert.ok(JSON.stringify(ev).length <= 1 << 20);
  ws.receive({ id: 5, method: 'tabs.list' });
  await until(() => ws.sent.some((f) => f.id === 5), 'the answer');
});

test('a shared tab\'s wake port is taken; any other port is dropped', async () => {
  const { chrome, svc } = await boot({ tabs: [{ id: 1, url: 'https://example.com/' }] });
  await svc.core.share(1);
  await settle();
  // A worker that just started is told whether its tab is shared.
  const [answer] = await Promise.all([message(chrome, { type: 'overlay.query' }, pageSender('https://example.com/'))]);
  assert.equal(answer.result.shared, true);
  const port = (name, sender) => {
    const p = { name, sender, disconnected: false, disconnect() { this.disconnected = true; } };
    chrome.runtime.onConnect.fire(p);
    return p;
  };
  assert.equal(chrome.runtime.onConnect.size, 1, 'the listener is registered when the worker starts');
  assert.equal(port(WAKE_PORT, pageSender('https://example.com/')).disconnected, false);
  assert.equal(port('other', pageSender('https://example.com/')).disconnected, true);
  assert.equal(port(WAKE_PORT, { id: 'someone-else', tab: { id: 1 } }).disconnected, true);
  assert.equal(port(WAKE_PORT, { id: 'cahakjcjmollcmebjjnhhlhcdhipahla', url: 'chrome-extension://cahakjcjmollcmebjjnhhlhcdhipahla/popup.html' }).disconnected, true);
});

test('cdp requests reuse the tab the browser described until a tabs event says it changed', async () => {
  const { chrome, socket } = await boot({ tabs: [{ id: 1, url: 'https://example.com/' }] });
  const ws = socket();
  await ws.open();
  ws.receive({ id: 1, method: 'tabs.share', params: { tabId: 1, shared: true } });
  await settle();
  let gets = 0;
  const get = chrome.tabs.get;
  chrome.tabs.get = (id) => {
    gets++;
    return get(id);
  };
  const cdp = async (id) => {
    ws.receive({ id, method: 'cdp', params: { tabId: 1, method: 'Runtime.evaluate', params: { expression: '1' } } });
    await until(() => ws.sent.some((f) => f.id === id), `answer ${id}`);
    return ws.sent.find((f) => f.id === id);
  };
  assert.ok('result' in (await cdp(2)));
  assert.ok('result' in (await cdp(3)));
  assert.equal(gets, 1, 'one tabs.get for two requests on an unchanged tab');
  // The tab went somewhere that may not be automated: the very next
  // request sees it.
  const tab = { id: 1, url: 'chrome://settings/', windowId: 1 };
  await chrome.tabs.update(1, { url: tab.url });
  chrome.tabs.onUpdated.fire(1, { url: tab.url }, tab);
  const refused = await cdp(4);
  assert.equal(refused.code, 'restricted_url');
  assert.equal(gets, 2);
});

test('a tab description read while a tabs event arrives is not kept', async () => {
  const { chrome, socket } = await boot({ tabs: [{ id: 1, url: 'https://example.com/' }] });
  const ws = socket();
  await ws.open();
  ws.receive({ id: 1, method: 'tabs.share', params: { tabId: 1, shared: true } });
  await settle();
  const get = chrome.tabs.get;
  let raced = false;
  chrome.tabs.get = async (id) => {
    const before = await get(id); // the browser's answer, as the tab was
    if (!raced) {
      raced = true;
      // Before that answer reaches the worker, the tab moves to a page that
      // may not be automated, and says so.
      const moved = { id: 1, url: 'chrome://settings/', windowId: 1 };
      await chrome.tabs.update(1, { url: moved.url });
      chrome.tabs.onUpdated.fire(1, { url: moved.url }, moved);
    }
    return before;
  };
  const cdp = async (id) => {
    ws.receive({ id, method: 'cdp', params: { tabId: 1, method: 'Runtime.evaluate', params: { expression: '1' } } });
    await until(() => ws.sent.some((f) => f.id === id), `answer ${id}`);
    return ws.sent.find((f) => f.id === id);
  };
  await cdp(2); // answered from the description read before the move
  const next = await cdp(3);
  assert.equal(next.code, 'restricted_url', 'the next request asks the browser again');
});

test('the link opens while the tab checks of a starting worker are still under way, and requests wait for them', async () => {
  FakeSocket.all = [];
  const chrome = fakeChrome({ tabs: [{ id: 1, url: 'https://example.com/', title: 'E' }] });
  // A busy browser: the worker's tabs query has not answered yet.
  const query = chrome.tabs.query.bind(chrome.tabs);
  let release;
  const held = new Promise((resolve) => (release = resolve));
  let first = true;
  chrome.tabs.query = async (q) => {
    if (first) {
      first = false;
      await held;
    }
    return query(q);
  };
  // A worker started again is back on the link after the storage reads it
  // asks for as it starts, with none of its own on the way.
  await chrome.storage.local.set({ instanceId: 'i-1', linkKey: TEST_LINK_KEY });
  await chrome.storage.session.set({ browserSessionId: 's-1', linkPort: 47123 });
  const reads = [];
  for (const area of ['local', 'session']) {
    const get = chrome.storage[area].get.bind(chrome.storage[area]);
    chrome.storage[area].get = (keys) => {
      reads.push(area);
      return get(keys);
    };
  }
  const timers = new FakeTimers();
  startService({ chrome, WebSocket: FakeSocket, navigator, crypto, timers, log: { warn() {} } });
  await until(() => FakeSocket.all.length === 1, 'a socket before the tabs query answered');
  const ws = FakeSocket.all[0];
  assert.equal(ws.port, 47123, "the session's last link port");
  await ws.open();
  assert.deepEqual(reads.sort(), ['local', 'local', 'session', 'session'], 'storage reads on the way to the hello');
  assert.equal(ws.sent[0].params.instanceId, 'i-1');
  assert.equal(ws.sent[0].params.browserSessionId, 's-1');
  ws.receive({ id: 4, method: 'tabs.list' });
  await settle();
  assert.deepEqual(ws.sent.map((f) => f.event ?? f.id), ['hello', 'auth'], 'nothing but the handshake before the state is loaded');
  release();
  await until(() => ws.sent.some((f) => f.id === 4), 'the answer once the state is loaded');
  assert.deepEqual(ws.sent.find((f) => f.id === 4).result.map((t) => t.id), [1]);
  assert.equal(ws.sent[2].event, 'tabs', 'the tabs listing still comes first after the handshake');
});
