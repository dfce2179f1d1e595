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
  assert.deepEqual(s.toJSON(), { shared: [1], agent: [1], held: [1], attached: [1] });
  assert.equal(s.unshare(1), true);
  assert.deepEqual(s.toJSON(), { shared: [], agent: [], held: [], attached: [1] }, 'detaching is the debugger manager\'s job');
  assert.equal(s.forget(1), true);
  assert.deepEqual(s.toJSON(), { shared: [], agent: [], held: [], attached: [] });
  assert.equal(s.unshare(1), false);
});

test('state survives a round trip through storage and drops junk', () => {
  const s = new SharingState();
  s.share(3);
  s.share(5, { agent: true });
  s.setHeld(5, true);
  const back = SharingState.from(JSON.parse(JSON.stringify(s.toJSON())));
  assert.deepEqual(back.toJSON(), s.toJSON());
  const junk = SharingState.from({ shared: [1, 'x', 1.5], agent: [1, 9], held: [9], attached: 'no' });
  assert.deepEqual(junk.toJSON(), { shared: [1], agent: [1], held: [], attached: [] });
  assert.deepEqual(SharingState.from(undefined).toJSON(), new SharingState().toJSON());
});

test('replaced and vanished tabs', () => {
  const s = new SharingState();
  s.share(1, { agent: true });
  s.setAttached(1, true);
  assert.equal(s.replace(1, 7), true);
  assert.deepEqual(s.toJSON(), { shared: [7], agent: [7], held: [], attached: [] });
  s.share(8);
  assert.equal(s.retainOnly([8]), true);
  assert.deepEqual(s.toJSON(), { shared: [8], agent: [], held: [], attached: [] });
  assert.equal(s.retainOnly([8]), false);
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
  assert.equal(tabRestriction({ url: 'https://a.test/', pendingUrl: 'chrome://settings' }), 'browser-internal pages cannot be automated');
  assert.equal(tabRestriction({ url: 'chrome://newtab/' }), '');
});
