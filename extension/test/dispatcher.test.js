import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Core } from '../lib/core.js';
import { createDispatcher } from '../lib/dispatcher.js';
import { fakeChrome, FakeTimers, settle } from './fakes.js';

const quiet = { warn() {} };

async function setup(opts) {
  const chrome = fakeChrome(opts);
  const timers = new FakeTimers();
  const core = new Core({ chrome, timers, log: quiet });
  const sent = [];
  core.send = (frame) => {
    sent.push(frame);
    return true;
  };
  await core.ready;
  const d = createDispatcher(core);
  let id = 0;
  const call = (method, params) => d.handle({ id: ++id, method, params });
  return { chrome, timers, core, sent, call, d };
}

const pageTab = { id: 1, url: 'https://example.com/', title: 'Example' };
const settingsTab = { id: 2, url: 'chrome://settings/', title: 'Settings' };

test('the method table is sorted and covers protocol v3 plus tabs.share', async () => {
  const { d } = await setup();
  assert.deepEqual(d.methods, [...d.methods].sort());
  for (const m of ['tabs.list', 'tabs.create', 'tabs.close', 'tabs.activate', 'tabs.hold', 'tabs.prepare', 'tabs.share',
    'window.size', 'downloads.list', 'downloads.wait', 'extensions.list', 'extensions.info', 'extensions.setEnabled', 'extensions.uninstall',
    'extensions.options', 'extensions.message', 'tools.catalog', 'graph.state', 'cdp']) {
    assert.ok(d.methods.includes(m), m);
  }
});

test('tabs.create shares the tab as an agent tab and groups it', async () => {
  const { chrome, call } = await setup({ tabs: [pageTab] });
  const res = await call('tabs.create', { url: 'https://example.org/', group: 'Claude' });
  assert.equal(res.id, 1);
  assert.equal(res.result.shared, true);
  assert.equal(res.result.agent, true);
  const created = res.result.id;
  const group = [...chrome._state.groups.values()].find((g) => g.title === 'Claude');
  assert.ok(group, 'a group titled Claude exists');
  assert.equal(chrome._state.tabs.get(created).groupId, group.id);
  const stored = await chrome.storage.session.get('sharing');
  assert.deepEqual(stored.sharing.shared, [created]);

  // A second tab for the same agent joins the same group.
  const second = await call('tabs.create', { url: 'https://example.net/', group: 'Claude' });
  assert.equal(chrome._state.tabs.get(second.result.id).groupId, group.id);
  // Without a group name the tab goes to the Reins group.
  const third = await call('tabs.create', { url: 'about:blank' });
  const reins = [...chrome._state.groups.values()].find((g) => g.title === 'Reins');
  assert.equal(chrome._state.tabs.get(third.result.id).groupId, reins.id);
});

test('tabs.create refuses restricted urls', async () => {
  const { chrome, call } = await setup();
  const res = await call('tabs.create', { url: 'chrome://settings' });
  assert.equal(res.code, 'restricted_url');
  assert.ok(!chrome._calls.some((c) => c[0] === 'tabs.create'));
});

// Agents go to http, https and about:blank only: local files (the
// companion's secrets among them), Windows shares and app schemes are
// refused before any tab opens.
test('tabs.create opens only web pages and about:blank', async () => {
  const { chrome, call } = await setup();
  for (const url of ['file:///home/person/.local/share/reins/secrets.json', 'file://fileserver/share/x.html', 'vscode://x',
    'javascript:alert(1)', 'data:text/html,x', 'chrome://newtab/']) {
    const res = await call('tabs.create', { url });
    assert.equal(res.code, 'restricted_url', url);
  }
  assert.ok(!chrome._calls.some((c) => c[0] === 'tabs.create'));
  assert.equal(chrome._state.tabs.size, 0);
});

test('tabs.create closes a tab that landed on a page it may not share', async () => {
  const { chrome, call } = await setup();
  const create = chrome.tabs.create;
  chrome.tabs.create = async (props) => {
    const t = await create(props);
    Object.assign(chrome._state.tabs.get(t.id), { url: 'chrome://settings/' });
    return t;
  };
  const res = await call('tabs.create', { url: 'https://example.org/redirects-to-settings' });
  assert.equal(res.code, 'restricted_url');
  assert.equal(chrome._state.tabs.size, 0);
});

test('cdp on an unshared tab is not_shared', async () => {
  const { chrome, call } = await setup({ tabs: [pageTab] });
  const res = await call('cdp', { tabId: 1, method: 'Runtime.evaluate', params: { expression: '1' } });
  assert.equal(res.code, 'not_shared');
  assert.match(res.error, /tab 1 is not shared/);
  assert.ok(!chrome._calls.some((c) => c[0] === 'debugger.attach'));
});

test('cdp on a chrome:// page is restricted_url', async () => {
  const { core, call } = await setup({ tabs: [settingsTab] });
  core.sharing.share(2); // as if shared before it navigated there
  const res = await call('cdp', { tabId: 2, method: 'Runtime.evaluate' });
  assert.equal(res.code, 'restricted_url');
  assert.match(res.error, /browser-internal pages/);
});

test('cdp refuses commands that would take a shared tab off the web', async () => {
  const { chrome, call } = await setup({ tabs: [pageTab] });
  await call('tabs.share', { tabId: 1, shared: true });
  for (const [method, params] of [
    ['Page.navigate', { url: 'file:///home/person/.local/share/reins/secrets.json' }],
    ['Page.navigate', { url: 'vscode://x' }],
    ['Target.createTarget', { url: 'file://fileserver/share/x.html' }],
    ['Network.loadNetworkResource', { frameId: 'F', url: 'file:///etc/passwd', options: {} }],
  ]) {
    const res = await call('cdp', { tabId: 1, method, params });
    assert.equal(res.code, 'restricted_url', `${method} ${params.url}`);
  }
  assert.ok(!chrome._calls.some((c) => c[0] === 'debugger.sendCommand'), 'a refused command reached the debugger');
  const ok = await call('cdp', { tabId: 1, method: 'Page.navigate', params: { url: 'https://example.org/' } });
  assert.equal(ok.code, undefined);
  assert.ok(chrome._calls.some((c) => c[0] === 'debugger.sendCommand' && c[2] === 'Page.navigate'));
});

test('cdp on a missing tab is no_such_tab', async () => {
  const { call } = await setup();
  assert.equal((await call('cdp', { tabId: 77, method: 'Page.enable' })).code, 'no_such_tab');
  assert.equal((await call('cdp', { tabId: 'x', method: 'Page.enable' })).code, 'bad_params');
});

test('unknown methods are unknown_method', async () => {
  const { call } = await setup();
  const res = await call('tabs.explode', {});
  assert.deepEqual(res, { id: 1, error: 'unknown method "tabs.explode"', code: 'unknown_method' });
  assert.equal((await call('toString', {})).code, 'unknown_method');
});

test('cdp attaches once, forwards events, and detaches after 30 s idle', async () => {
  const { chrome, timers, core, sent, call } = await setup({ tabs: [pageTab] });
  await call('tabs.share', { tabId: 1, shared: true });
  chrome._state.cdpResults.set('Runtime.evaluate', { result: { type: 'number', value: 2 } });
  const res = await call('cdp', { tabId: 1, method: 'Runtime.evaluate', params: { expression: '1+1' } });
  assert.deepEqual(res.result, { result: { type: 'number', value: 2 } });
  await call('cdp', { tabId: 1, method: 'Page.enable', sessionId: 'S1' });
  assert.equal(chrome._calls.filter((c) => c[0] === 'debugger.attach').length, 1);
  assert.deepEqual(chrome._calls.find((c) => c[0] === 'debugger.sendCommand' && c[2] === 'Page.enable')[1], { tabId: 1, sessionId: 'S1' });
  assert.equal(core.sharing.isAttached(1), true);

  chrome.debugger.onEvent.fire({ tabId: 1, sessionId: 'S1' }, 'Page.loadEventFired', { timestamp: 1 });
  assert.deepEqual(sent.at(-1), { event: 'cdp.event', params: { tabId: 1, method: 'Page.loadEventFired', params: { timestamp: 1 }, sessionId: 'S1' } });

  chrome._state.cdpResults.set('Bogus.method', new Error(JSON.stringify({ code: -32601, message: "'Bogus.method' wasn't found" })));
  const bad = await call('cdp', { tabId: 1, method: 'Bogus.method' });
  assert.deepEqual([bad.code, bad.error], ['internal', "'Bogus.method' wasn't found"]);

  await timers.advance(29_000);
  assert.equal(core.sharing.isAttached(1), true);
  await timers.advance(1_000);
  assert.equal(core.sharing.isAttached(1), false);
  assert.ok(sent.some((f) => f.event === 'detached' && f.params.tabId === 1 && f.params.reason === 'idle'));
  await timers.advance(100);
  const tabs = sent.filter((f) => f.event === 'tabs').at(-1);
  assert.equal(tabs.params.find((t) => t.id === 1).attached, false);
});

test('a held tab stays attached; releasing it starts the idle timer', async () => {
  const { timers, core, call } = await setup({ tabs: [pageTab] });
  await call('tabs.share', { tabId: 1, shared: true });
  await call('cdp', { tabId: 1, method: 'Page.enable' });
  assert.deepEqual((await call('tabs.hold', { tabId: 1, hold: true })).result, { tabId: 1, held: true });
  await timers.advance(120_000);
  assert.equal(core.sharing.isAttached(1), true);
  await call('tabs.hold', { tabId: 1, hold: false });
  await timers.advance(30_000);
  assert.equal(core.sharing.isAttached(1), false);
});

test('a tab showing a dialog stays attached until the dialog closes', async () => {
  const { chrome, timers, core, call } = await setup({ tabs: [pageTab] });
  await call('tabs.share', { tabId: 1, shared: true });
  await call('cdp', { tabId: 1, method: 'Page.enable' });
  chrome.debugger.onEvent.fire({ tabId: 1, sessionId: 'S1' }, 'Page.javascriptDialogOpening', { type: 'alert' });
  await timers.advance(30_000);
  assert.equal(core.sharing.isAttached(1), false, 'a dialog in a frame session holds nothing');
  await call('cdp', { tabId: 1, method: 'Page.enable' });
  chrome.debugger.onEvent.fire({ tabId: 1 }, 'Page.javascriptDialogOpening', { type: 'confirm', message: 'Sure?' });
  await timers.advance(10 * 60_000);
  assert.equal(core.sharing.isAttached(1), true, 'the agent can still answer the dialog');
  chrome.debugger.onEvent.fire({ tabId: 1 }, 'Page.javascriptDialogClosed', { result: false });
  await timers.advance(29_000);
  assert.equal(core.sharing.isAttached(1), true);
  await timers.advance(1_000);
  assert.equal(core.sharing.isAttached(1), false, 'answered, the tab idles out as before');
});

test('a dialog goes with a crashed page: the tab idles out again', async () => {
  const { chrome, timers, core, call } = await setup({ tabs: [pageTab] });
  await call('tabs.share', { tabId: 1, shared: true });
  await call('cdp', { tabId: 1, method: 'Page.enable' });
  chrome.debugger.onEvent.fire({ tabId: 1 }, 'Page.javascriptDialogOpening', { type: 'alert', message: 'Hi' });
  chrome.debugger.onEvent.fire({ tabId: 1 }, 'Inspector.targetCrashed', {});
  await timers.advance(30_000);
  assert.equal(core.sharing.isAttached(1), false);
});

test('a tab an agent\'s tab opens is that agent\'s, in its group, in a window of its own', async () => {
  const { chrome, core, sent, call } = await setup({ tabs: [pageTab] });
  const agentTab = (await call('tabs.create', { url: 'https://example.org/', group: 'Reins · claude', owner: 'agent:a' })).result.id;
  chrome._state.tabs.get(agentTab).active = false;
  chrome._state.tabs.set(300, { id: 300, url: '', pendingUrl: 'https://example.org/popup', title: '', windowId: 1, groupId: -1, status: 'loading', active: true });
  const before = sent.length;
  await core.tabOpened(300, agentTab);
  assert.equal(core.sharing.ownerOf(300), 'agent:a');
  assert.equal(core.sharing.isAgent(300), true);
  const announced = sent.slice(before).find((f) => f.event === 'tabs');
  assert.ok(announced, 'the companion hears of it at once, not after the coalescing delay');
  const moved = chrome._state.tabs.get(300);
  assert.notEqual(moved.windowId, 1, 'it left the opener\'s window');
  assert.deepEqual(announced.params.find((t) => t.id === 300), {
    id: 300, url: 'https://example.org/popup', title: '', shared: true, attached: false, windowId: moved.windowId, agent: true, owner: 'agent:a', openerTabId: agentTab,
  }, 'it is announced once it has moved');
  const group = chrome._state.groups.get(moved.groupId);
  assert.equal(group.title, 'Reins · claude');
  assert.equal(core.groupOwners.get(group.id), 'agent:a');
  // Reported twice (the tab event and the navigation event): once only.
  const creates = chrome._calls.filter((c) => c[0] === 'windows.create').length;
  await core.tabOpened(300, agentTab);
  assert.equal(chrome._calls.filter((c) => c[0] === 'windows.create').length, creates);

  // A tab opened in the background stays where it is.
  chrome._state.tabs.set(301, { id: 301, url: 'https://example.org/bg', title: '', windowId: 1, groupId: -1, active: false });
  await core.tabOpened(301, agentTab);
  assert.equal(core.sharing.ownerOf(301), 'agent:a');
  assert.equal(chrome._state.tabs.get(301).windowId, 1);
});

test('a tab that gets a new id when it moves (Firefox) is shared under that id', async () => {
  const { chrome, core, call } = await setup({ tabs: [pageTab] });
  const agentTab = (await call('tabs.create', { url: 'https://example.org/', owner: 'agent:a' })).result.id;
  chrome._state.tabs.get(agentTab).active = false;
  chrome._state.tabs.set(310, { id: 310, url: 'https://example.org/p', title: '', windowId: 1, groupId: -1, active: true });
  chrome.windows.create = async ({ tabId }) => {
    const t = chrome._state.tabs.get(tabId);
    chrome._state.tabs.delete(tabId);
    const moved = { ...t, id: 311, windowId: 901 };
    chrome._state.tabs.set(311, moved);
    return { id: 901, tabs: [{ ...moved }] };
  };
  await core.tabOpened(310, agentTab);
  assert.equal(core.sharing.isShared(310), false);
  assert.equal(core.sharing.ownerOf(311), 'agent:a');
  assert.equal(core.sharing.openerOf(311), agentTab);
});

test('a tab the person\'s shared tab opens is shared by hand; an unshared tab\'s is not shared', async () => {
  const { chrome, core, call } = await setup({ tabs: [pageTab, { id: 3, url: 'https://b.test/' }] });
  await call('tabs.share', { tabId: 1, shared: true });
  chrome._state.tabs.set(400, { id: 400, url: 'https://example.com/next', title: '', windowId: 1, groupId: -1, active: true });
  await core.tabOpened(400, 1);
  assert.equal(core.sharing.isShared(400), true);
  assert.equal(core.sharing.isAgent(400), false);
  assert.equal(core.sharing.ownerOf(400), '');
  assert.equal(chrome._state.tabs.get(400).windowId, 1, 'the person\'s tabs are not moved');
  assert.equal((await call('tabs.list')).result.find((t) => t.id === 400).openerTabId, 1);
  chrome._state.tabs.set(401, { id: 401, url: 'https://b.test/next', title: '', windowId: 1, groupId: -1, active: true });
  await core.tabOpened(401, 3);
  assert.equal(core.sharing.isShared(401), false);
  assert.ok(!chrome._calls.some((c) => c[0] === 'windows.create'));
});

test('stop sharing detaches, ungroups and blocks further cdp', async () => {
  const { chrome, core, sent, call } = await setup({ tabs: [pageTab] });
  await call('tabs.share', { tabId: 1, shared: true });
  await call('cdp', { tabId: 1, method: 'Page.enable' });
  const res = await call('tabs.share', { tabId: 1, shared: false });
  assert.equal(res.result.shared, false);
  assert.equal(core.sharing.isAttached(1), false);
  assert.ok(sent.some((f) => f.event === 'detached' && f.params.reason === 'unshared'));
  assert.ok(chrome._calls.some((c) => c[0] === 'tabs.ungroup' && c[1] === 1));
  assert.equal((await call('cdp', { tabId: 1, method: 'Page.enable' })).code, 'not_shared');
});

test('the browser detaching or a tab closing reports detached once', async () => {
  const { chrome, core, sent, call } = await setup({ tabs: [pageTab, { id: 3, url: 'https://b.test/' }] });
  await call('tabs.share', { tabId: 1, shared: true });
  await call('tabs.share', { tabId: 3, shared: true });
  await call('cdp', { tabId: 1, method: 'Page.enable' });
  await call('cdp', { tabId: 3, method: 'Page.enable' });
  chrome.debugger.onDetach.fire({ tabId: 1 }, 'canceled_by_user');
  chrome.debugger.onDetach.fire({ tabId: 1 }, 'canceled_by_user');
  core.tabClosed(3);
  chrome.debugger.onDetach.fire({ tabId: 3 }, 'target_closed');
  const detached = sent.filter((f) => f.event === 'detached').map((f) => f.params);
  assert.deepEqual(detached, [{ tabId: 1, reason: 'canceled_by_user' }, { tabId: 3, reason: 'target_closed' }]);
  assert.equal(core.sharing.isShared(3), false);
});

test('tabs.close, tabs.prepare and window.size need a shared tab', async () => {
  const { chrome, call } = await setup({ tabs: [pageTab, { id: 4, url: 'chrome://newtab/' }] });
  for (const m of ['tabs.close', 'tabs.prepare', 'window.size', 'tabs.hold']) {
    assert.equal((await call(m, { tabId: 4, hold: true })).code, 'not_shared', m);
  }
  await call('tabs.share', { tabId: 4, shared: true });
  const prepared = await call('tabs.prepare', { tabId: 4 });
  assert.equal(prepared.result.url, 'about:blank');
  assert.deepEqual((await call('window.size', { tabId: 4, width: 800 })).result, { width: 800, height: 800 });
  assert.deepEqual(chrome._calls.find((c) => c[0] === 'windows.update')[2], { state: 'normal', width: 800 });
  assert.equal((await call('window.size', { tabId: 4, width: -5 })).code, 'bad_params');
  assert.deepEqual((await call('tabs.close', { tabId: 4 })).result, { closed: true });
  assert.equal(chrome._state.tabs.has(4), false);
});

test('graph.state validates, stores, and respects the option', async () => {
  const { chrome, core, call } = await setup();
  const graph = { thisBrowserId: 'b1', agents: [], browsers: [{ id: 'b1', name: 'Chrome', mode: 'extension', sharedTabs: 0 }] };
  assert.deepEqual((await call('graph.state', graph)).result, { received: true });
  assert.deepEqual((await chrome.storage.session.get('graph')).graph, graph);
  assert.equal((await call('graph.state', { ...graph, thisBrowserId: 'nope' })).code, 'bad_params');
  core.options = { ...core.options, graph: false };
  assert.deepEqual((await call('graph.state', graph)).result, { received: false });
});

test('tools.catalog is stored and announced in tools.policy', async () => {
  const { chrome, sent, call } = await setup();
  const res = await call('tools.catalog', { tools: [{ name: 'navigate', description: 'go' }], version: '1' });
  assert.deepEqual(res.result, { stored: true });
  assert.equal((await chrome.storage.local.get('toolsCatalog')).toolsCatalog.tools[0].name, 'navigate');
  assert.deepEqual(sent.at(-1), { event: 'tools.policy', params: { disabled: [], haveCatalog: true, graph: true, overlay: true } });
  assert.equal((await call('tools.catalog', { tools: 'x' })).code, 'bad_params');
});

test('extensions.* need the management permission', async () => {
  const { call } = await setup();
  const res = await call('extensions.list', {});
  assert.equal(res.code, 'unauthorized');
  assert.match(res.error, /popup/);
});

test('extensions.message checks size and answers with the reply', async () => {
  const { chrome, call } = await setup({ permissions: ['management'] });
  chrome.management = { get: async (id) => ({ id, name: 'Other' }) };
  chrome.runtime.sendMessage = async (id, msg) => ({ echo: msg, to: id });
  const ok = await call('extensions.message', { id: 'abcdefghijklmnopabcdefghijklmnop', message: { hi: 1 } });
  assert.deepEqual(ok.result, { reply: { echo: { hi: 1 }, to: 'abcdefghijklmnopabcdefghijklmnop' } });
  const big = await call('extensions.message', { id: 'abcdefghijklmnopabcdefghijklmnop', message: 'x'.repeat(1024 * 1024) });
  assert.equal(big.code, 'bad_params');
  const self = await call('extensions.message', { id: chrome.runtime.id, message: {} });
  assert.equal(self.code, 'bad_params');
});

test('extensions.message times out after 30 s', async () => {
  const { chrome, timers, call } = await setup({ permissions: ['management'] });
  chrome.management = {};
  chrome.runtime.sendMessage = () => new Promise(() => {});
  const pending = call('extensions.message', { id: 'abcdefghijklmnopabcdefghijklmnop', message: {} });
  await timers.advance(30_000);
  const res = await pending;
  assert.equal(res.code, 'timeout');
});

test('state reloads after a worker restart and forgets closed tabs', async () => {
  const { chrome, call } = await setup({ tabs: [pageTab, { id: 3, url: 'https://b.test/' }] });
  await call('tabs.share', { tabId: 1, shared: true });
  await call('tabs.share', { tabId: 3, shared: true });
  await call('cdp', { tabId: 1, method: 'Page.enable' });
  await settle();
  chrome._state.tabs.delete(3); // closed while the worker slept
  const core2 = new Core({ chrome, timers: new FakeTimers(), log: quiet });
  await core2.ready;
  assert.deepEqual(core2.sharing.toJSON(), { shared: [1], agent: [], owners: [], openers: [], held: [], attached: [1], crashed: [] });
});

test('tabs.create records the owner, which every listing reports and a worker restart keeps', async () => {
  const { chrome, call, core, sent, timers } = await setup({ tabs: [pageTab] });
  const res = await call('tabs.create', { url: 'https://example.org/', group: 'Reins · claude', owner: 'agent:3f9a' });
  assert.equal(res.result.owner, 'agent:3f9a');
  assert.equal(res.result.agent, true);
  const id = res.result.id;
  const listed = (await call('tabs.list')).result.find((t) => t.id === id);
  assert.equal(listed.owner, 'agent:3f9a');
  assert.equal((await call('tabs.list')).result.find((t) => t.id === 1).owner, undefined, 'a tab nobody opened has no owner');
  await timers.advance(100);
  const event = sent.filter((f) => f.event === 'tabs').at(-1);
  assert.equal(event.params.find((t) => t.id === id).owner, 'agent:3f9a', 'the tabs event carries the owner');

  // The worker restarts (or the companion reconnects, or restarts): the
  // owner is still there, in session storage.
  await settle();
  const core2 = new Core({ chrome, timers: new FakeTimers(), log: quiet });
  await core2.ready;
  assert.equal(core2.info(chrome._state.tabs.get(id)).owner, 'agent:3f9a');
  assert.equal(core.sharing.ownerOf(id), 'agent:3f9a');

  // No owner (an older companion) is allowed: the tab is an agent's of
  // unknown owner. A bad one is refused.
  const bare = await call('tabs.create', { url: 'about:blank' });
  assert.equal(bare.result.agent, true);
  assert.equal(bare.result.owner, undefined);
  for (const owner of [7, 'x'.repeat(201), ['agent:a']]) {
    const bad = await call('tabs.create', { url: 'about:blank', owner });
    assert.equal(bad.code, 'bad_params', JSON.stringify(owner));
  }
});

test('sharing an agent tab by hand, from the popup or the dashboard, clears its owner', async () => {
  const { call, core } = await setup({ tabs: [pageTab] });
  const id = (await call('tabs.create', { url: 'https://example.org/', owner: 'agent:3f9a' })).result.id;
  // The dashboard's tabs.share, as the person's Share.
  const res = await call('tabs.share', { tabId: id, shared: true });
  assert.equal(res.result.shared, true);
  assert.equal(res.result.agent, undefined);
  assert.equal(res.result.owner, undefined);
  // The popup's Share goes through the same path.
  const id2 = (await call('tabs.create', { url: 'https://example.net/', owner: 'backend:77c1' })).result.id;
  await core.share(id2);
  assert.equal(core.info(await core.getTab(id2)).owner, undefined);
  assert.equal(core.sharing.isAgent(id2), false);
});

test('tab groups are per owner: two agents with one name get two groups', async () => {
  const { chrome, call } = await setup({ tabs: [pageTab] });
  const title = 'Reins · claude';
  const a1 = (await call('tabs.create', { url: 'https://a.test/', group: title, owner: 'agent:3f9a' })).result.id;
  const b1 = (await call('tabs.create', { url: 'https://b.test/', group: title, owner: 'backend:77c1' })).result.id;
  const a2 = (await call('tabs.create', { url: 'https://c.test/', group: title, owner: 'agent:3f9a' })).result.id;
  const groupOf = (id) => chrome._state.tabs.get(id).groupId;
  assert.equal(groupOf(a1), groupOf(a2), 'one agent keeps one group');
  assert.notEqual(groupOf(a1), groupOf(b1), 'another principal with the same label gets its own group');
  for (const id of [a1, b1]) assert.equal(chrome._state.groups.get(groupOf(id)).title, title, 'the title stays the label');
  // The person's tabs never join an agent's group, whatever its title.
  const p = (await call('tabs.create', { url: 'https://d.test/', group: title })).result.id;
  assert.ok(![groupOf(a1), groupOf(b1)].includes(groupOf(p)));
  const stored = await chrome.storage.session.get('groupOwners');
  assert.deepEqual(new Map(stored.groupOwners), new Map([[groupOf(a1), 'agent:3f9a'], [groupOf(b1), 'backend:77c1']]));
});

test('downloads.list and tabs.list', async () => {
  const { call } = await setup({ tabs: [pageTab, settingsTab] });
  assert.equal((await call('downloads.list')).result.length, 1);
  const list = (await call('tabs.list')).result;
  assert.deepEqual(list.map((t) => [t.id, t.shared, t.unsupported ?? '']), [[1, false, ''], [2, false, 'browser-internal pages cannot be automated']]);
});
