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
  let observers = [];
  const frames = [];
  const timeline = {};
  const listeners = {};
  class PerformanceObserver {
    static supportedEntryTypes = ['event', 'longtask', 'largest-contentful-paint', 'layout-shift'];
    constructor(cb) {
      this.cb = cb;
      this.records = [];
    }
    observe(o) {
      this.type = o.type;
      if (o.buffered) this.records.push(...(timeline[o.type] || []));
      observers.push(this);
    }
    takeRecords() {
      const r = this.records;
      this.records = [];
      return r;
    }
    disconnect() {
      observers = observers.filter((x) => x !== this);
    }
  }
  let now = 1000;
  const g = vm.createContext({
    PerformanceObserver,
    performance: { now: () => now, timeOrigin: 42 },
    location: { href: 'http://127.0.0.1:9/' },
    document: { visibilityState: visibility },
    requestAnimationFrame: (cb) => frames.push(cb),
    addEventListener: (type, fn) => (listeners[type] = [...(listeners[type] || []), fn]),
    removeEventListener: (type, fn) => (listeners[type] = (listeners[type] || []).filter((x) => x !== fn)),
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
    // queue records entries in the timeline and the observers' queues, as
    // the browser does before it calls the observers back.
    queue(type, entries) {
      timeline[type] = [...(timeline[type] || []), ...entries];
      for (const o of observers.filter((x) => x.type === type)) o.records.push(...entries);
    },
    // fire delivers entries to the observers of type, as the browser does.
    fire(type, entries) {
      for (const o of observers.filter((x) => x.type === type)) o.cb({ getEntries: () => entries });
    },
    // input dispatches a DOM event to the page's window.
    input(type, timeStamp, isTrusted = true) {
      for (const fn of listeners[type] || []) fn({ type, timeStamp, isTrusted });
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

const paint = [{ startTime: 1200, size: 5000, url: '' }];

test('perf.js stop in a visible page waits for the first contentful paint', async () => {
  const p = page({ visibility: 'visible' });
  p.run('start');
  const out = p.runAsync('stop');
  assert.equal(p.pendingFrames(), 1, 'waits on animation frames while no paint is reported');
  p.frame();
  assert.equal(p.pendingFrames(), 1, 'still waiting after a frame with no paint');
  p.queue('largest-contentful-paint', paint);
  p.frame();
  const r = await out;
  assert.equal(r.lcp.t, 1200);
});

test('perf.js stop gives up waiting after ten frames', async () => {
  const p = page({ visibility: 'visible' });
  p.run('start');
  const out = p.runAsync('stop');
  for (let i = 0; i < 9; i++) p.frame();
  assert.equal(p.pendingFrames(), 1);
  p.frame();
  assert.equal(p.pendingFrames(), 0);
  const r = await out;
  assert.equal(r.lcp, undefined);
});

// The browser reports an interaction only once the frame after it is on
// screen: a stop right after a click must wait for it, or the trace says
// there were no interactions.
test('perf.js stop waits for the interaction of the last input', async () => {
  const p = page({ visibility: 'visible' });
  p.queue('largest-contentful-paint', paint);
  p.run('start');
  p.input('pointerdown', 1100);
  p.input('pointerup', 1150);
  p.input('click', 1150);
  const out = p.runAsync('stop');
  assert.equal(p.pendingFrames(), 1, 'waits while the click is unreported');
  p.frame();
  assert.equal(p.pendingFrames(), 1);
  p.queue('event', [{ interactionId: 7, duration: 320, startTime: 1150, name: 'click' }]);
  p.frame();
  const r = await out;
  assert.deepEqual(r.inp, { count: 1, value: 320, name: 'click', observed: true });
});

test('perf.js stop does not wait for an interaction already reported, or for a page\'s own events', () => {
  const p = page({ visibility: 'visible' });
  p.queue('largest-contentful-paint', paint);
  p.run('start');
  p.input('click', 1150);
  p.fire('event', [{ interactionId: 7, duration: 40, startTime: 1150, name: 'click' }]);
  p.input('keydown', 1300, false);
  const out = p.run('stop');
  assert.equal(p.pendingFrames(), 0);
  assert.equal(out.inp.value, 40);
});

test('perf.js listens for input only in its latest trace', () => {
  const p = page({ visibility: 'visible' });
  p.queue('largest-contentful-paint', paint);
  p.run('start');
  const first = p.state();
  p.run('start');
  p.input('click', 1150);
  assert.equal(first.input, 0, 'the first trace\'s listener is gone');
  assert.equal(p.state().input, 1150);
});
