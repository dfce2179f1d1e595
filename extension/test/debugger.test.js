import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DebuggerManager } from '../lib/debugger.js';
import { SharingState } from '../lib/sharing.js';
import { WireError } from '../lib/frames.js';

// A CDP adapter whose commands wait until the test answers them, and whose
// events the test fires.
function fakeCdp() {
  const pending = [];
  let onEvent = () => {};
  return {
    pending,
    sent: [],
    fire: (tabId, method, params) => onEvent(tabId, method, params),
    async attach() {},
    async detach() {},
    send(tabId, method, params) {
      this.sent.push(method);
      if (method === 'Inspector.enable') return Promise.resolve({});
      return new Promise((resolve, reject) => pending.push({ tabId, method, resolve, reject }));
    },
    onEvent(cb) {
      onEvent = cb;
    },
    onDetach() {},
  };
}

function manager(cdp) {
  const sharing = new SharingState();
  sharing.share(7);
  const timers = { setTimeout: () => 0, clearTimeout() {} };
  return new DebuggerManager({ cdp, sharing, changed() {}, emit() {}, timers });
}

test('a crashed renderer fails the calls waiting on its page, and every call but a navigation until it loads', async () => {
  const cdp = fakeCdp();
  const dbg = manager(cdp);
  const waiting = dbg.call(7, 'Runtime.evaluate', { expression: 'new Promise(() => {})' });
  await new Promise((r) => setImmediate(r));
  assert.ok(cdp.sent.includes('Inspector.enable'), 'attaching enables the Inspector domain, which reports crashes');
  cdp.fire(7, 'Inspector.targetCrashed', {});
  await assert.rejects(waiting, (err) => err instanceof WireError && err.code === 'attach_failed' && /crashed/.test(err.message));
  await assert.rejects(dbg.call(7, 'Runtime.evaluate', { expression: '1' }), (err) => err.code === 'attach_failed');
  // A navigation is sent: it is what loads the page again.
  const nav = dbg.call(7, 'Page.navigate', { url: 'https://example.com/' });
  await new Promise((r) => setImmediate(r));
  cdp.pending.at(-1).resolve({ frameId: 'F' });
  assert.deepEqual(await nav, { frameId: 'F' });
  dbg.pageLoading(7);
  const after = dbg.call(7, 'Runtime.evaluate', { expression: '1' });
  await new Promise((r) => setImmediate(r));
  cdp.pending.at(-1).resolve({ result: { value: 1 } });
  assert.deepEqual(await after, { result: { value: 1 } });
  assert.equal(dbg.waiting.size, 0, 'no waiter is kept after its call ended');
});

test('a command the debugger detached from, or whose worker the browser stopped, fails with attach_failed, and one whose tab closed with no_such_tab, not as an internal fault', async () => {
  const cdp = fakeCdp();
  const dbg = manager(cdp);
  const call = dbg.call(7, 'Page.enable', {});
  await new Promise((r) => setImmediate(r));
  cdp.pending.at(-1).reject(new Error('Detached while handling command.'));
  await assert.rejects(call, (err) => err instanceof WireError && err.code === 'attach_failed' && /detached from the tab while Page\.enable ran/.test(err.message));
  // The browser stopping the worker under a command (seen in the soak).
  const stopped = dbg.call(7, 'Runtime.callFunctionOn', {});
  await new Promise((r) => setImmediate(r));
  cdp.pending.at(-1).reject(new Error('No SW'));
  await assert.rejects(stopped, (err) => err.code === 'attach_failed' && /stopped the extension's worker while Runtime\.callFunctionOn ran/.test(err.message));
  // The tab closing under a command (seen in the soak, preparing a tab).
  const closed = dbg.call(7, 'Page.enable', {});
  await new Promise((r) => setImmediate(r));
  cdp.pending.at(-1).reject(new Error('No tab with given id 285659540.'));
  await assert.rejects(closed, (err) => err.code === 'no_such_tab' && /closed while Page\.enable ran/.test(err.message));
  const other = dbg.call(7, 'Runtime.evaluate', { expression: '1' });
  await new Promise((r) => setImmediate(r));
  cdp.pending.at(-1).reject(new Error('{"code":-32000,"message":"Object reference chain is too long"}'));
  await assert.rejects(other, (err) => err.code === 'internal' && /Object reference chain/.test(err.message));
});

test('a crash of another tab leaves a tab\'s calls alone', async () => {
  const cdp = fakeCdp();
  const dbg = manager(cdp);
  dbg.getSharing().share(8);
  const mine = dbg.call(7, 'Runtime.evaluate', { expression: '1' });
  await new Promise((r) => setImmediate(r));
  cdp.fire(8, 'Inspector.targetCrashed', {});
  cdp.pending.find((p) => p.tabId === 7).resolve({ ok: true });
  assert.deepEqual(await mine, { ok: true });
});

test('a worker started again after a crash still refuses the crashed page', async () => {
  const cdp = fakeCdp();
  const dbg = manager(cdp);
  cdp.fire(7, 'Inspector.targetCrashed', {});
  // The state the worker saved, read back by the next worker.
  const saved = SharingState.from(JSON.parse(JSON.stringify(dbg.getSharing().toJSON())));
  const next = new DebuggerManager({ cdp: fakeCdp(), sharing: saved, changed() {}, emit() {}, timers: { setTimeout: () => 0, clearTimeout() {} } });
  await assert.rejects(next.call(7, 'Runtime.evaluate', { expression: '1' }), (err) => err.code === 'attach_failed');
  next.pageLoading(7);
  assert.equal(saved.crashed.size, 0);
});

test('a navigation under way when the renderer crashed ends the crash when its document commits', async () => {
  const cdp = fakeCdp();
  const dbg = manager(cdp);
  // The tabs API said 'loading' as the navigation started; the old
  // renderer's crash is reported after, and the new document commits in
  // a new renderer later still.
  dbg.pageLoading(7);
  cdp.fire(7, 'Inspector.targetCrashed', {});
  await assert.rejects(dbg.call(7, 'Runtime.evaluate', { expression: '1' }), (err) => err.code === 'attach_failed');
  // A child frame's document is not the page's.
  cdp.fire(7, 'Page.frameNavigated', { frame: { id: 'C', parentId: 'F' } });
  await assert.rejects(dbg.call(7, 'Runtime.evaluate', { expression: '1' }), (err) => err.code === 'attach_failed');
  cdp.fire(7, 'Page.frameNavigated', { frame: { id: 'F', loaderId: 'L2' } });
  const after = dbg.call(7, 'Runtime.evaluate', { expression: '1' });
  await new Promise((r) => setImmediate(r));
  cdp.pending.at(-1).resolve({ result: { value: 1 } });
  assert.deepEqual(await after, { result: { value: 1 } });
});
