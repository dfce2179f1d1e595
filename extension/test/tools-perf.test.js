import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import vm from 'node:vm';

// The devtools trace script (companion/tools/perf.js) keeps what it
// observes in the page bounded, whatever the page does: at most 2,000
// interactions and 2,000 long tasks.
const source = readFileSync(new URL('../../companion/tools/perf.js', import.meta.url), 'utf8');
const declaration = source.slice(source.indexOf('function'));

function page({ visibility = 'hidden' } = {}) {
  const observers = [];
  const frames = [];
  class PerformanceObserver {
    static supportedEntryTypes = ['event', 'longtask', 'largest-contentful-paint', 'layout-shift'];
    constructor(cb) {
      this.cb = cb;
      this.records = [];
      observers.push(this);
    }
    observe(o) {
      this.type = o.type;
    }
    takeRecords() {
      const r = this.records;
      this.records = [];
      return r;
    }
    disconnect() {}
  }
  let now = 1000;
  const g = vm.createContext({
    PerformanceObserver,
    performance: { now: () => now, timeOrigin: 42 },
    location: { href: 'http://127.0.0.1:9/' },
    document: { visibilityState: visibility },
    requestAnimationFrame: (cb) => frames.push(cb),
    setTimeout,
    clearTimeout,
    Promise,
    JSON,
  });
  const run = vm.runInContext(`(${declaration})`, g);
  return {
    run: (action) => JSON.parse(run(action)),
    runAsync: async (action) => JSON.parse(await run(action)),
    // frame runs the callbacks waiting for the next animation frame.
    frame() {
      for (const cb of frames.splice(0)) cb();
    },
    pendingFrames: () => frames.length,
    // fire delivers entries to the observers of type, as the browser does.
    fire(type, entries) {
      for (const o of observers.filter((x) => x.type === type)) o.cb({ getEntries: () => entries });
    },
    tick: (ms) => (now += ms),
    state: () => g.__reinsPerf,
  };
}

test('perf.js keeps at most 2000 interactions and 2000 long tasks', () => {
  const p = page();
  p.run('start');
  p.tick(10);
  const events = Array.from({ length: 2500 }, (_, i) => ({ interactionId: i + 1, duration: 40, startTime: 1100 + i, name: 'click' }));
  const tasks = Array.from({ length: 2500 }, (_, i) => ({ startTime: 1100 + i, duration: 60 }));
  p.fire('event', events);
  p.fire('longtask', tasks);
  assert.equal(p.state().events.length, 2000);
  assert.equal(p.state().tasks.length, 2000);
  const out = p.run('stop');
  assert.equal(out.started, true);
  assert.equal(out.tasks.count, 2000);
  assert.equal(out.inp.count, 2000);
  assert.equal(out.tasks.blocking, 2000 * 10);
});

test('perf.js counts only what happened since start in the same document', () => {
  const p = page();
  p.run('start'); // t0 = 1000
  p.fire('longtask', [{ startTime: 500, duration: 300 }, { startTime: 1500, duration: 80 }]);
  const out = p.run('stop');
  assert.equal(out.tasks.count, 1);
  assert.equal(out.tasks.longest, 80);
});

test('perf.js stop in a visible page waits for the first contentful paint', async () => {
  const p = page({ visibility: 'visible' });
  p.run('start');
  const out = p.runAsync('stop');
  assert.equal(p.pendingFrames(), 1, 'waits on animation frames while no paint is reported');
  p.fire('largest-contentful-paint', [{ startTime: 1200, size: 5000, url: '' }]);
  const r = await out;
  assert.equal(r.started, true);
});

test('perf.js stop gives up waiting for a paint after six frames', async () => {
  const p = page({ visibility: 'visible' });
  p.run('start');
  const out = p.runAsync('stop');
  for (let i = 0; i < 6; i++) p.frame();
  assert.equal(p.pendingFrames(), 0);
  const r = await out;
  assert.equal(r.lcp, undefined);
});
