import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { createFirefoxCdp } from '../lib/cdp-firefox.js';
import { Core } from '../lib/core.js';
import { createDispatcher } from '../lib/dispatcher.js';
import { WireError } from '../lib/frames.js';
import { fakeChrome, fakeFirefox, FakeTimers } from './fakes.js';

// Every CDP method and event the companion's Go code uses; a Go test
// (companion/wire/cdp_methods_test.go) keeps the file equal to the sources.
const fixture = JSON.parse(readFileSync(new URL('../../companion/wire/testdata/cdp_methods.json', import.meta.url), 'utf8'));
const quiet = { warn() {} };

test('cdp_methods.json lists methods and events', () => {
  assert.ok(fixture.methods.length >= 20, `only ${fixture.methods.length} methods`);
  assert.ok(fixture.events.length >= 15, `only ${fixture.events.length} events`);
  for (const e of [...fixture.methods, ...fixture.events]) {
    assert.equal(typeof e.firefox, 'boolean', e.name);
    if (!e.firefox) assert.ok(e.reason, `${e.name} has no reason`);
  }
});

function firefox() {
  return createFirefoxCdp(fakeFirefox(), {
    timers: { setTimeout: (fn, ms) => setTimeout(fn, Math.min(ms, 1000)), clearTimeout },
    log: quiet,
    randomId: () => '00000000-0000-4000-8000-000000000001',
    fetch: async () => ({ ok: false }),
  });
}

test('the Firefox adapter answers every method the fixture marks supported', () => {
  const cdp = firefox();
  const missing = fixture.methods.filter((m) => m.firefox && !cdp.methods.includes(m.name)).map((m) => m.name);
  assert.deepEqual(missing, []);
});

for (const m of fixture.methods.filter((x) => !x.firefox)) {
  test(`the Firefox adapter refuses ${m.name} with unknown_method`, async () => {
    const cdp = firefox();
    assert.ok(!cdp.methods.includes(m.name), 'the adapter has it: mark it supported in the fixture');
    await cdp.attach(1);
    await assert.rejects(cdp.send(1, m.name, {}), (err) => {
      assert.ok(err instanceof WireError, `not a WireError: ${err}`);
      assert.equal(err.code, 'unknown_method');
      assert.ok(err.message.includes(m.name), `the error does not name the method: ${err.message}`);
      return true;
    });
  });
}

// Events come from browser events, so the check is on the adapter's
// sources: a supported event is emitted somewhere, an unsupported one nowhere.
test('the Firefox adapter emits exactly the fixture events it marks supported', () => {
  const lib = new URL('../lib/', import.meta.url);
  const sources = readdirSync(lib)
    .filter((f) => /^cdp-firefox.*\.js$/.test(f))
    .map((f) => readFileSync(new URL(f, lib), 'utf8'))
    .join('\n');
  assert.ok(sources.includes("'Page.frameNavigated'"), 'the adapter sources were not read');
  for (const e of fixture.events) {
    const emitted = sources.includes(`'${e.name}'`);
    assert.equal(emitted, e.firefox, e.firefox ? `${e.name} is marked supported but the adapter never emits it` : `${e.name} is emitted but marked unsupported`);
  }
});

async function chromium() {
  const chrome = fakeChrome({ tabs: [{ id: 1, url: 'https://example.com/', title: 'Example' }] });
  const core = new Core({ chrome, timers: new FakeTimers(), log: quiet });
  const sent = [];
  core.send = (frame) => {
    sent.push(frame);
    return true;
  };
  await core.ready;
  const d = createDispatcher(core);
  let id = 0;
  const call = (method, params) => d.handle({ id: ++id, method, params });
  assert.equal((await call('tabs.share', { tabId: 1, shared: true })).result.shared, true);
  return { chrome, sent, call };
}

test('the Chromium relay passes every fixture method to chrome.debugger', async () => {
  const { chrome, call } = await chromium();
  for (const m of fixture.methods) {
    const res = await call('cdp', { tabId: 1, method: m.name, params: {} });
    assert.deepEqual(res.result, {}, `${m.name}: ${res.code} ${res.error}`);
    const sentCommand = chrome._calls.filter((c) => c[0] === 'debugger.sendCommand').at(-1);
    assert.deepEqual(sentCommand.slice(1), [{ tabId: 1 }, m.name, {}]);
  }
});

test('the Chromium relay forwards every fixture event', async () => {
  const { chrome, sent, call } = await chromium();
  await call('cdp', { tabId: 1, method: 'Page.enable' });
  for (const e of fixture.events) {
    chrome.debugger.onEvent.fire({ tabId: 1 }, e.name, { n: 1 });
    assert.deepEqual(sent.at(-1), { event: 'cdp.event', params: { tabId: 1, method: e.name, params: { n: 1 } } });
  }
});
