import { test } from 'node:test';
import assert from 'node:assert/strict';
import { downloadHandlers, MAX_WAIT_MS } from '../lib/downloads.js';
import { FakeTimers, settle } from './fakes.js';

function ev() {
  const ls = new Set();
  return { addListener: (f) => ls.add(f), removeListener: (f) => ls.delete(f), fire: (...a) => [...ls].forEach((f) => f(...a)), get size() { return ls.size; } };
}

function fakeDownloads(items) {
  const d = {
    items,
    onCreated: ev(),
    onChanged: ev(),
    async search(q) {
      let out = [...d.items];
      if (q.id !== undefined) out = out.filter((it) => it.id === q.id);
      if (q.orderBy?.[0] === '-startTime') out.sort((a, b) => Date.parse(b.startTime) - Date.parse(a.startTime));
      return out.slice(0, q.limit ?? out.length);
    },
  };
  return d;
}

test('downloads.wait answers when the download by URL completes, and only then', async () => {
  const timers = new FakeTimers();
  const downloads = fakeDownloads([
    { id: 1, url: 'http://a.test/x.csv', startTime: '2026-01-01T00:00:00Z', state: 'complete', filename: '/old/x.csv' },
  ]);
  const h = downloadHandlers({ downloads }, timers);
  let answer = null;
  h['downloads.wait']({ url: 'http://a.test/x.csv', since: Date.parse('2026-06-01T00:00:00Z'), timeoutMs: 5000 }).then((v) => { answer = v; });
  await settle();
  assert.equal(answer, null, 'an older download of the same URL is not ours');
  downloads.items.push({ id: 2, url: 'http://a.test/x.csv', startTime: '2026-06-01T00:00:01Z', state: 'in_progress', filename: '/dl/x.csv', mime: 'text/csv' });
  downloads.onCreated.fire(downloads.items[1]);
  await settle();
  assert.equal(answer, null, 'still in progress');
  downloads.items[1].state = 'complete';
  downloads.items[1].fileSize = 8;
  downloads.onChanged.fire({ id: 2, state: { current: 'complete' } });
  await settle();
  assert.deepEqual(answer, { id: 2, url: 'http://a.test/x.csv', filename: '/dl/x.csv', mime: 'text/csv', state: 'complete', error: '', fileSize: 8, exists: true });
  assert.equal(downloads.onChanged.size, 0, 'the listeners are gone');
  assert.equal(downloads.onCreated.size, 0);
  assert.equal(timers.jobs.size, 0, 'the timer is gone');
});

test('downloads.wait by id reports an interrupted download, and times out with the item as it is', async () => {
  const timers = new FakeTimers();
  const downloads = fakeDownloads([{ id: 7, url: 'http://a.test/big', startTime: '2026-06-01T00:00:00Z', state: 'in_progress', bytesReceived: 10 }]);
  const h = downloadHandlers({ downloads }, timers);
  let answer = null;
  h['downloads.wait']({ id: 7, timeoutMs: 1000 }).then((v) => { answer = v; });
  await timers.advance(999);
  assert.equal(answer, null);
  await timers.advance(1);
  assert.equal(answer.state, 'in_progress');
  assert.equal(answer.fileSize, 10);

  h['downloads.wait']({ id: 7, timeoutMs: 1000 }).then((v) => { answer = v; });
  downloads.items[0].state = 'interrupted';
  downloads.items[0].error = 'NETWORK_FAILED';
  downloads.onChanged.fire({ id: 7 });
  await settle();
  assert.equal(answer.state, 'interrupted');
  assert.equal(answer.error, 'NETWORK_FAILED');
});

test('downloads.wait checks its params and its bound', async () => {
  const h = downloadHandlers({ downloads: fakeDownloads([]) }, new FakeTimers());
  for (const p of [{ timeoutMs: 10 }, { url: 'http://a.test/', timeoutMs: MAX_WAIT_MS + 1 }, { url: 'http://a.test/', timeoutMs: 0 }, { id: 1.5, timeoutMs: 10 }, null]) {
    await assert.rejects(h['downloads.wait'](p), (err) => err.code === 'bad_params', JSON.stringify(p));
  }
  const none = downloadHandlers({}, new FakeTimers());
  await assert.rejects(none['downloads.wait']({ id: 1, timeoutMs: 10 }), (err) => err.code === 'unauthorized');
});
