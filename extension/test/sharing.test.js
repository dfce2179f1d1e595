import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SharingState } from '../lib/sharing.js';
import { toTabInfo, tabRestriction } from '../lib/tabinfo.js';

test('share, hold, attach and unshare bookkeeping', () => {
  const s = new SharingState();
  assert.equal(s.share(1), true);
  assert.equal(s.share(1), false);
  assert.equal(s.share(1, { agent: true }), true);
  assert.equal(s.setHeld(2, true), false, 'an unshared tab cannot be held');
  assert.equal(s.setHeld(1, true), true);
  assert.equal(s.setAttached(1, true), true);
  assert.deepEqual(s.toJSON(), { shared: [1], agent: [1], owners: [], openers: [], held: [1], attached: [1], crashed: [] });
  assert.equal(s.unshare(1), true);
  assert.deepEqual(s.toJSON(), { shared: [], agent: [], owners: [], openers: [], held: [], attached: [1], crashed: [] }, 'detaching is the debugger manager\'s job');
  assert.equal(s.forget(1), true);
  assert.deepEqual(s.toJSON(), { shared: [], agent: [], owners: [], openers: [], held: [], attached: [], crashed: [] });
  assert.equal(s.unshare(1), false);
});

test('state survives a round trip through storage and drops junk', () => {
  const s = new SharingState();
  s.share(3);
  s.share(5, { agent: true, owner: 'agent:3f9a' });
  s.setHeld(5, true);
  const back = SharingState.from(JSON.parse(JSON.stringify(s.toJSON())));
  assert.deepEqual(back.toJSON(), s.toJSON());
  assert.equal(back.ownerOf(5), 'agent:3f9a');
  const junk = SharingState.from({
    shared: [1, 'x', 1.5], agent: [1, 9], held: [9], attached: 'no',
    owners: [[1, 'agent:a'], [3, 'agent:b'], [9, 'agent:c'], ['1', 'agent:d'], [1.5, 'x'], [1, 7], 'agent:e'],
  });
  assert.deepEqual(junk.toJSON(), { shared: [1], agent: [1], owners: [[1, 'agent:a']], openers: [], held: [], attached: [], crashed: [] });
  // State saved before owners existed: its agent tabs have none.
  const old = SharingState.from({ shared: [2], agent: [2], held: [], attached: [], crashed: [] });
  assert.equal(old.isAgent(2), true);
  assert.equal(old.ownerOf(2), '');
  assert.deepEqual(SharingState.from(undefined).toJSON(), new SharingState().toJSON());
});

test('replaced and vanished tabs', () => {
  const s = new SharingState();
  s.share(1, { agent: true, owner: 'agent:a' });
  s.setAttached(1, true);
  assert.equal(s.replace(1, 7), true);
  assert.deepEqual(s.toJSON(), { shared: [7], agent: [7], owners: [[7, 'agent:a']], openers: [], held: [], attached: [], crashed: [] });
  s.share(8);
  assert.equal(s.retainOnly([8]), true);
  assert.deepEqual(s.toJSON(), { shared: [8], agent: [], owners: [], openers: [], held: [], attached: [], crashed: [] });
  assert.equal(s.retainOnly([8]), false);
});

test('an agent tab keeps its owner; sharing by hand makes it the person\'s', () => {
  const s = new SharingState();
  assert.equal(s.share(1, { agent: true, owner: 'agent:a' }), true);
  assert.equal(s.share(1, { agent: true, owner: 'agent:a' }), false);
  assert.equal(s.ownerOf(1), 'agent:a');
  assert.equal(s.share(1, { agent: true, owner: 'backend:b' }), true, 'a new owner is a change');
  assert.equal(s.share(1), true, 'sharing by hand clears the agent mark and the owner');
  assert.equal(s.isAgent(1), false);
  assert.equal(s.ownerOf(1), '');
  assert.equal(s.share(1), false);
  assert.equal(s.share(2, { agent: true, owner: 'x'.repeat(201) }), true);
  assert.equal(s.ownerOf(2), '', 'an owner over MAX_OWNER is not kept');
  assert.equal(s.share(3, { agent: true, owner: 'agent:c' }), true);
  assert.equal(s.unshare(3), true);
  assert.equal(s.ownerOf(3), '');
});

test('a tab opened from a shared tab is shared as its opener is, and remembers it', () => {
  const s = new SharingState();
  s.share(1, { agent: true, owner: 'agent:a' });
  s.share(2);
  assert.equal(s.shareOpened(10, 1), true);
  assert.equal(s.isAgent(10), true);
  assert.equal(s.ownerOf(10), 'agent:a', 'an agent tab\'s opens are the same agent\'s');
  assert.equal(s.openerOf(10), 1);
  assert.equal(s.shareOpened(11, 2), true);
  assert.equal(s.isShared(11), true);
  assert.equal(s.isAgent(11), false, 'the person\'s tab opens tabs the person shares');
  assert.equal(s.ownerOf(11), '');
  assert.equal(s.shareOpened(12, 99), false, 'an unshared opener shares nothing');
  assert.equal(s.isShared(12), false);
  assert.equal(s.shareOpened(10, 2), false, 'a tab already shared keeps its owner');
  assert.equal(s.ownerOf(10), 'agent:a');
  assert.equal(s.shareOpened(1, 1), false);
  // Openers survive storage, follow a replaced tab, and leave with the tab.
  const back = SharingState.from(JSON.parse(JSON.stringify(s.toJSON())));
  assert.deepEqual(back.toJSON().openers, [[10, 1], [11, 2]]);
  assert.equal(back.replace(1, 7), true);
  assert.equal(back.openerOf(10), 7, 'an opener replaced by a prerendered tab is followed');
  assert.equal(back.replace(10, 20), true);
  assert.equal(back.openerOf(20), 7);
  back.unshare(20);
  assert.equal(back.openerOf(20), 0);
  assert.deepEqual(SharingState.from({ shared: [3], openers: [[3, 1], [4, 1], ['3', 2], [3, 'x']] }).toJSON().openers, [[3, 1]], 'only shared tabs keep openers');
  const info = toTabInfo({ id: 11, url: 'https://p.test/', windowId: 1 }, s);
  assert.equal(info.openerTabId, 2);
  assert.equal(toTabInfo({ id: 2, url: 'https://p.test/', windowId: 1 }, s).openerTabId, undefined);
});

test('TabInfo carries sharing and the unsupported reason', () => {
  const s = new SharingState();
  s.share(4, { agent: true });
  assert.deepEqual(toTabInfo({ id: 4, url: 'https://a.test/', title: 'A', windowId: 1, favIconUrl: '' }, s), {
    id: 4, url: 'https://a.test/', title: 'A', shared: true, attached: false, windowId: 1, agent: true,
  });
  assert.deepEqual(toTabInfo({ id: 5, url: 'chrome://settings/', windowId: 2, favIconUrl: 'x.png' }, s), {
    id: 5, url: 'chrome://settings/', title: '', shared: false, attached: false, windowId: 2, favIconUrl: 'x.png',
    unsupported: 'browser-internal pages cannot be automated',
  });
  assert.equal(toTabInfo({ id: 6, url: '', pendingUrl: 'https://b.test/', windowId: 1 }, s).url, 'https://b.test/');
  s.share(7, { agent: true, owner: 'agent:3f9a' });
  assert.equal(toTabInfo({ id: 7, url: 'https://c.test/', windowId: 1 }, s).owner, 'agent:3f9a');
  assert.equal(tabRestriction({ url: 'https://a.test/', pendingUrl: 'chrome://settings' }), 'browser-internal pages cannot be automated');
  assert.equal(tabRestriction({ url: 'chrome://newtab/' }), '');
});
