import { test } from 'node:test';
import assert from 'node:assert/strict';
import { webcrypto } from 'node:crypto';
import { createFirefoxCdp, ISOLATED_FILE, TOOLS_HELPER_FILE } from '../lib/cdp-firefox.js';
import { MAX_PENDING_REDIRECTS } from '../lib/cdp-firefox-network.js';
import { MAX_RECENT, RECENT_MS } from '../lib/cdp-firefox-downloads.js';
import { CRASH_REPORT_MS } from '../lib/cdp-firefox-scripting.js';
import { ERROR_PAGE_MS } from '../lib/cdp-firefox-page.js';
import { WireError } from '../lib/frames.js';
import { startService } from '../lib/service.js';
import { fakeChrome, fakeFirefox, FakeTimers, settle, until } from './fakes.js';

function adapter(opts = {}) {
  const browser = fakeFirefox(opts);
  let n = 0;
  const cdp = createFirefoxCdp(browser, {
    // Waits shortened so a test that leaves one pending still ends quickly.
    timers: opts.timers ?? { setTimeout: (fn, ms) => setTimeout(fn, Math.min(ms, 1000)), clearTimeout },
    log: { warn() {} },
    randomId: () => `00000000-0000-4000-8000-${String(++n).padStart(12, '0')}`,
    fetch: async () => ({ ok: true, text: async () => opts.helper ?? 'HELPER' }),
  });
  const events = [];
  cdp.onEvent((tabId, method, params) => events.push([tabId, method, params]));
  return { cdp, browser, events };
}

async function rejectsCode(p, code, re) {
  await assert.rejects(p, (err) => {
    assert.ok(err instanceof WireError, `not a WireError: ${err}`);
    assert.equal(err.code, code);
    if (re) assert.match(err.message, re);
    return true;
  });
}

test('the Firefox seam has the Chromium seam shape', async () => {
  const { cdp } = adapter();
  assert.equal(cdp.engine, 'firefox');
  for (const k of ['attach', 'send', 'detach', 'onEvent', 'onDetach', 'attachedTabs']) assert.equal(typeof cdp[k], 'function', k);
  assert.deepEqual(await cdp.attachedTabs(), []);
  await assert.rejects(cdp.send(1, 'Page.enable'), /not attached/, 'the manager re-attaches on this message');
  await cdp.attach(1);
  assert.deepEqual(await cdp.attachedTabs(), [1]);
  await cdp.detach(1);
  assert.deepEqual(await cdp.attachedTabs(), []);
});

test('unsupported methods fail with unknown_method naming the method', async () => {
  const { cdp } = adapter();
  await cdp.attach(1);
  await rejectsCode(cdp.send(1, 'DOM.getDocument', {}), 'unknown_method', /Firefox adapter does not support DOM\.getDocument/);
  await rejectsCode(cdp.send(1, 'Emulation.setDeviceMetricsOverride', {}), 'unknown_method', /Emulation\.setDeviceMetricsOverride/);
  await rejectsCode(cdp.send(1, 'Page.enable', {}, 'S1'), 'bad_params', /sessionId/);
});

test('a page that opens a tab reports Page.windowOpen when its Page domain is on', async () => {
  const { cdp, browser, events } = adapter();
  await cdp.attach(1);
  browser.webNavigation.onCreatedNavigationTarget.fire({ sourceTabId: 1, sourceFrameId: 0, tabId: 2, url: 'http://127.0.0.1:9/popup' });
  assert.deepEqual(events, [], 'nothing before Page.enable');
  await cdp.send(1, 'Page.enable');
  browser.webNavigation.onCreatedNavigationTarget.fire({ sourceTabId: 1, sourceFrameId: 0, tabId: 2, url: 'http://127.0.0.1:9/popup' });
  browser.webNavigation.onCreatedNavigationTarget.fire({ sourceTabId: 7, sourceFrameId: 0, tabId: 8, url: 'http://127.0.0.1:9/other' });
  assert.deepEqual(events, [[1, 'Page.windowOpen', { url: 'http://127.0.0.1:9/popup', windowName: '', windowFeatures: [], userGesture: false }]]);
  // The tab event often comes first; the navigation event after it for the
  // same tab is not a second window.
  browser.tabs.onCreated.fire({ id: 3, openerTabId: 1, url: 'about:blank' });
  browser.webNavigation.onCreatedNavigationTarget.fire({ sourceTabId: 1, sourceFrameId: 0, tabId: 3, url: 'http://127.0.0.1:9/third' });
  browser.tabs.onCreated.fire({ id: 4, url: 'about:blank' });
  assert.deepEqual(events.slice(1), [[1, 'Page.windowOpen', { url: '', windowName: '', windowFeatures: [], userGesture: false }]]);
});

test('the adapter remembers the last 256 opened tabs it reported', async () => {
  const { cdp, browser, events } = adapter();
  await cdp.attach(1);
  await cdp.send(1, 'Page.enable');
  for (let id = 10; id < 10 + 257; id++) browser.tabs.onCreated.fire({ id, openerTabId: 1 });
  assert.equal(events.length, 257);
  browser.tabs.onCreated.fire({ id: 11, openerTabId: 1 });
  assert.equal(events.length, 257, 'a tab still remembered is not reported again');
  browser.tabs.onCreated.fire({ id: 10, openerTabId: 1 });
  assert.equal(events.length, 258, 'the oldest was forgotten to stay within the bound');
});

test('attached tabs survive a background restart through storage.session', async () => {
  const { cdp, browser } = adapter();
  await cdp.attach(1);
  await cdp.send(1, 'Page.enable');
  await settle();
  const again = createFirefoxCdp(browser, { log: { warn() {} } });
  assert.deepEqual(await again.attachedTabs(), [1]);
});

test('Page.navigate refuses Mozilla pages before navigating', async () => {
  const { cdp, browser } = adapter();
  await cdp.attach(1);
  for (const url of ['about:preferences', 'https://addons.mozilla.org/', 'moz-extension://x/options.html']) {
    await rejectsCode(cdp.send(1, 'Page.navigate', { url }), 'restricted_url');
  }
  assert.ok(!browser._calls.some(([c]) => c === 'tabs.update'), 'no navigation started');
});

test('Page.navigate answers with the loader its commit and load events carry', async () => {
  const { cdp, browser, events } = adapter();
  await cdp.attach(1);
  await cdp.send(1, 'Page.enable');
  await cdp.send(1, 'Page.setLifecycleEventsEnabled', { enabled: true });
  const nav = cdp.send(1, 'Page.navigate', { url: 'http://127.0.0.1:9/next' });
  await settle();
  browser.webNavigation.onBeforeNavigate.fire({ tabId: 1, frameId: 0, url: 'http://127.0.0.1:9/next' });
  // Firefox aborts and restarts a navigation that changes process.
  browser.webNavigation.onErrorOccurred.fire({ tabId: 1, frameId: 0, error: 'Error code 2152398850' });
  browser.webNavigation.onCommitted.fire({ tabId: 1, frameId: 0, url: 'http://127.0.0.1:9/next', documentId: 'doc-2', transitionType: 'link', transitionQualifiers: [] });
  browser.webNavigation.onDOMContentLoaded.fire({ tabId: 1, frameId: 0, url: 'http://127.0.0.1:9/next', documentId: 'doc-2' });
  const res = await nav;
  assert.equal(res.frameId, 'main-1');
  assert.ok(res.loaderId);
  assert.equal(res.errorText, undefined);
  browser.webNavigation.onCompleted.fire({ tabId: 1, frameId: 0 });
  const navigated = events.find(([, m]) => m === 'Page.frameNavigated');
  assert.equal(navigated[2].frame.loaderId, res.loaderId);
  assert.equal(navigated[2].frame.id, 'main-1');
  const load = events.find(([, m, p]) => m === 'Page.lifecycleEvent' && p.name === 'load');
  assert.equal(load[2].loaderId, res.loaderId);
  assert.ok(events.some(([, m]) => m === 'Page.loadEventFired'));
});

test("Page.getNavigationHistory names the current entry's title, as Chromium does", async () => {
  let refuse = false;
  const { cdp, browser } = adapter({
    run: (d) => {
      if (d.func?.name !== 'pageHistory') return {};
      if (refuse) throw new Error('Missing host permission for the tab');
      return { result: { length: 2, url: 'http://127.0.0.1:9/', title: 'Page B' } };
    },
  });
  await cdp.attach(1);
  const h = await cdp.send(1, 'Page.getNavigationHistory');
  assert.equal(h.entries.length, 2);
  assert.equal(h.entries[h.currentIndex].url, 'http://127.0.0.1:9/');
  assert.equal(h.entries[h.currentIndex].title, 'Page B');
  assert.equal(h.entries[0].title, '', 'an older entry, whose title Firefox does not tell');
  // A page that refuses scripts: the tab's own title.
  refuse = true;
  const get = browser.tabs.get;
  browser.tabs.get = async (id) => ({ ...(await get(id)), title: 'Tab title' });
  const r = await cdp.send(1, 'Page.getNavigationHistory');
  assert.equal(r.entries[r.currentIndex].title, 'Tab title');
});

test('a failed navigation reports its net:: error once its error page is in the tab', async () => {
  const { cdp, browser } = adapter();
  await cdp.attach(1);
  const nav = cdp.send(1, 'Page.navigate', { url: 'https://127.0.0.1:9/' });
  let res = null;
  nav.then((r) => { res = r; });
  await settle();
  browser.webNavigation.onErrorOccurred.fire({ tabId: 1, frameId: 0, error: 'Error code 2153398258' });
  await settle();
  // Firefox commits its error page after it reported the failure; the next
  // navigation must not take that for its own.
  assert.equal(res, null, 'waits for the error page');
  browser.webNavigation.onCommitted.fire({ tabId: 1, frameId: 0, url: 'https://127.0.0.1:9/', documentId: 'doc-err' });
  await settle();
  assert.equal(res, null, 'waits for the error page');
  browser.webNavigation.onDOMContentLoaded.fire({ tabId: 1, frameId: 0, url: 'about:certerror?e=nssBadCert&u=https%3A//127.0.0.1%3A9/', documentId: 'doc-err' });
  assert.equal((await nav).errorText, 'net::ERR_CERT_AUTHORITY_INVALID', 'the failure names the error better than its page');
});

test(`a failed navigation without an error page answers ${ERROR_PAGE_MS} ms after the failure`, async () => {
  const timers = new FakeTimers();
  const { cdp, browser } = adapter({ timers });
  await cdp.attach(1);
  const nav = cdp.send(1, 'Page.navigate', { url: 'http://nowhere.invalid/' });
  let res = null;
  nav.then((r) => { res = r; });
  await settle();
  browser.webNavigation.onErrorOccurred.fire({ tabId: 1, frameId: 0, error: 'Error code 2152398878' });
  await timers.advance(ERROR_PAGE_MS - 1);
  assert.equal(res, null);
  await timers.advance(1);
  assert.equal(res.errorText, 'net::ERR_NAME_NOT_RESOLVED');
});

test('Page.navigate names the failure of a document Firefox commits and then shows as an error page', async () => {
  for (const [page, want] of [
    ['about:neterror?e=deniedPortAccess&u=http%3A//127.0.0.1%3A1/&c=UTF-8&d=%20', 'net::ERR_UNSAFE_PORT'],
    ['about:certerror?e=nssBadCert&u=https%3A//127.0.0.1%3A9/&c=UTF-8&d=%20', 'net::ERR_CERT_INVALID'],
    ['about:neterror?e=somethingNew&u=x', 'net::ERR_FAILED (Firefox: somethingNew)'],
  ]) {
    const { cdp, browser, events } = adapter();
    await cdp.attach(1);
    await cdp.send(1, 'Page.enable');
    const nav = cdp.send(1, 'Page.navigate', { url: 'http://127.0.0.1:1/' });
    await settle();
    browser.webNavigation.onCommitted.fire({ tabId: 1, frameId: 0, url: 'http://127.0.0.1:1/', documentId: 'doc-2' });
    await settle();
    browser.webNavigation.onDOMContentLoaded.fire({ tabId: 1, frameId: 0, url: page, documentId: 'doc-2' });
    const res = await nav;
    assert.equal(res.errorText, want, page);
    assert.ok(res.loaderId);
    // Its load is the document's: what waits for one ends.
    assert.ok(events.some(([, m]) => m === 'Page.loadEventFired'), page);
    // Firefox runs no script in its error page; a page call says which page
    // the tab shows, until the next document.
    const run = browser.scripting.executeScript;
    browser.scripting.executeScript = async () => [null];
    await rejectsCode(cdp.send(1, 'Page.createIsolatedWorld', { frameId: 'main-1' }), 'navigation_failed', new RegExp(`error page for ${want.replace(/[()]/g, '\\$&')}`));
    browser.scripting.executeScript = run;
    browser.webNavigation.onCommitted.fire({ tabId: 1, frameId: 0, url: 'http://127.0.0.1:9/', documentId: 'doc-3' });
    assert.ok((await cdp.send(1, 'Page.createIsolatedWorld', { frameId: 'main-1' })).executionContextId > 0);
  }
});

test(`a committed document that shows no error page within ${ERROR_PAGE_MS} ms is Page.navigate's answer`, async () => {
  const timers = new FakeTimers();
  const { cdp, browser } = adapter({ timers });
  await cdp.attach(1);
  const nav = cdp.send(1, 'Page.navigate', { url: 'http://127.0.0.1:9/slow' });
  let res = null;
  nav.then((r) => { res = r; });
  await settle();
  browser.webNavigation.onCommitted.fire({ tabId: 1, frameId: 0, url: 'http://127.0.0.1:9/slow', documentId: 'doc-2' });
  await timers.advance(ERROR_PAGE_MS - 1);
  assert.equal(res, null, 'waits for the first load event');
  await timers.advance(1);
  assert.ok(res.loaderId);
  assert.equal(res.errorText, undefined);
});

test('events flow only for enabled domains', async () => {
  const { cdp, browser, events } = adapter();
  await cdp.attach(1);
  browser.webNavigation.onCompleted.fire({ tabId: 1, frameId: 0 });
  assert.equal(events.length, 0);
  await cdp.send(1, 'Network.enable');
  browser.webRequest.onBeforeRequest.fire({ tabId: 1, frameId: 0, requestId: '5', url: 'http://127.0.0.1:9/a.js', type: 'script', method: 'GET' });
  browser.webRequest.onBeforeRequest.fire({ tabId: 2, frameId: 0, requestId: '6', url: 'http://127.0.0.1:9/b.js', type: 'script', method: 'GET' });
  assert.deepEqual(events.map(([t, m]) => [t, m]), [[1, 'Network.requestWillBeSent']]);
});

test('console records from the relay become Runtime events', async () => {
  const { cdp, browser, events } = adapter();
  await cdp.attach(1);
  await cdp.send(1, 'Runtime.enable');
  const sender = { id: 'reins@reins.dev', tab: { id: 1 }, frameId: 0 };
  browser.runtime.onMessage.fire({ reinsFirefoxPage: { kind: 'console', type: 'warning', args: [{ type: 'string', value: 'hi' }], timestamp: 5, loc: { url: 'http://127.0.0.1:9/', lineNumber: 3, columnNumber: 1 } } }, sender);
  browser.runtime.onMessage.fire({ reinsFirefoxPage: { kind: 'exception', promise: true, thrown: { isError: true, name: 'Error', message: 'x' } } }, sender);
  browser.runtime.onMessage.fire({ reinsFirefoxPage: { kind: 'console', type: 'log', args: [] } }, { ...sender, id: 'other@x' });
  const frames = Array.from({ length: 12 }, (_, i) => ({ functionName: `f${i}`, url: 'http://127.0.0.1:9/app.js', lineNumber: i, columnNumber: 2 }));
  browser.runtime.onMessage.fire({ reinsFirefoxPage: { kind: 'console', type: 'error', args: [], timestamp: 6, loc: { ...frames[0], frames } } }, sender);
  const [c, deep] = events.filter(([, m]) => m === 'Runtime.consoleAPICalled').map(([, , p]) => p);
  assert.equal(c.type, 'warning');
  assert.equal(c.stackTrace.callFrames[0].lineNumber, 3);
  // A whole stack comes through, innermost first and bounded.
  assert.equal(deep.stackTrace.callFrames.length, 8);
  assert.deepEqual(deep.stackTrace.callFrames[1], { functionName: 'f1', scriptId: '0', url: 'http://127.0.0.1:9/app.js', lineNumber: 1, columnNumber: 2 });
  const e = events.find(([, m]) => m === 'Runtime.exceptionThrown')[2];
  assert.equal(e.exceptionDetails.text, 'Uncaught (in promise)');
  assert.equal(events.filter(([, m]) => m === 'Runtime.consoleAPICalled').length, 2, 'other senders are ignored');
});

test("the tool engine's isolated world: its helper is injected as the shipped file, its calls by name", async () => {
  const { cdp, browser } = adapter({
    helper: 'HELPER SOURCE',
    run: (d) => (d.func && d.func.name === 'helperInvoke' ? { result: { ok: { w: 800 }, href: 'http://127.0.0.1:9/' } } : {}),
  });
  await cdp.attach(1);
  const { executionContextId: ctx } = await cdp.send(1, 'Page.createIsolatedWorld', { frameId: 'main-1', worldName: 'reins' });
  assert.ok(ctx > 0);
  await rejectsCode(cdp.send(1, 'Runtime.evaluate', { expression: 'something else', contextId: ctx }), 'unknown_method', /page helper/);
  assert.deepEqual(await cdp.send(1, 'Runtime.evaluate', { expression: 'HELPER SOURCE', contextId: ctx, returnByValue: true }), { result: { type: 'undefined' } });
  const injected = browser._calls.filter(([c]) => c === 'executeScript').map(([, d]) => d);
  assert.deepEqual(injected.at(-1).files, [TOOLS_HELPER_FILE]);
  assert.deepEqual(injected.at(-1).target, { tabId: 1, documentIds: ['doc-1'] }, 'only into the document the world was made in');
  const r = await cdp.send(1, 'Runtime.callFunctionOn', {
    functionDeclaration: 'function(...a){return globalThis.__reins.call("viewport", a)}',
    executionContextId: ctx,
    arguments: [{ value: 1 }],
    returnByValue: true,
  });
  assert.deepEqual(r, { result: { type: 'object', value: { ok: { w: 800 }, href: 'http://127.0.0.1:9/' } } });
  assert.deepEqual(browser._calls.at(-1)[1].args, ['viewport', [1]]);
  await rejectsCode(cdp.send(1, 'Runtime.callFunctionOn', { functionDeclaration: 'function(){return document.cookie}', executionContextId: ctx }), 'unknown_method');
  await rejectsCode(cdp.send(1, 'Runtime.evaluate', { expression: '1', contextId: 999 }), 'internal', /Cannot find context/);
});

test('a new document ends the isolated worlds of the old one', async () => {
  const { cdp, browser } = adapter();
  await cdp.attach(1);
  const { executionContextId: ctx } = await cdp.send(1, 'Page.createIsolatedWorld', { frameId: 'main-1' });
  browser.webNavigation.onCommitted.fire({ tabId: 1, frameId: 0, url: 'http://127.0.0.1:9/2', documentId: 'doc-2' });
  await rejectsCode(cdp.send(1, 'Runtime.callFunctionOn', { functionDeclaration: 'function(...a){return globalThis.__reins.call("info", a)}', executionContextId: ctx }), 'internal', /Cannot find context/);
});

test('MAIN-world results: exceptions become exceptionDetails, objects get ids of this tab', async () => {
  let answer;
  const { cdp } = adapter({ run: () => answer });
  await cdp.attach(1);
  answer = { result: { thrown: { isError: true, name: 'TypeError', message: 'boom', stack: 'f@http://x/:1:2' } } };
  const thrown = await cdp.send(1, 'Runtime.evaluate', { expression: 'f()' });
  assert.equal(thrown.exceptionDetails.exception.description, 'TypeError: boom\n    at f (http://x/:1:2)');
  answer = { result: { result: { type: 'object', className: 'Object', description: 'Object', objectId: '3' } } };
  const obj = await cdp.send(1, 'Runtime.evaluate', { expression: '({})' });
  assert.equal(obj.result.objectId, 'ff.1.3');
  await rejectsCode(cdp.send(1, 'Runtime.callFunctionOn', { functionDeclaration: 'function(){}', objectId: 'ff.2.3' }), 'bad_params');
  answer = { result: { thrown: { isError: true, name: 'EvalError', message: 'call to eval() blocked by CSP' } } };
  const csp = await cdp.send(1, 'Runtime.evaluate', { expression: '1' });
  assert.match(csp.exceptionDetails.exception.description, /Content-Security-Policy forbids eval/);
});

test('input is planned in the background and dispatched by the page script, installing it once', async () => {
  let installed = false;
  const { cdp, browser } = adapter({
    run: (d) => {
      if (d.files) {
        installed = true;
        return {};
      }
      return { result: installed ? { value: { target: 'button' } } : { missing: true } };
    },
  });
  await cdp.attach(1);
  await cdp.send(1, 'Input.dispatchMouseEvent', { type: 'mouseReleased', x: 3, y: 4, button: 'left', clickCount: 2 });
  const scripts = browser._calls.filter(([c]) => c === 'executeScript').map(([, d]) => d);
  assert.deepEqual(scripts.map((d) => d.files?.[0] ?? d.func.name), ['isolatedCall', ISOLATED_FILE, 'isolatedCall']);
  const [op, [plan]] = scripts[2].args;
  assert.equal(op, 'mouse');
  assert.deepEqual(plan.after, ['click', 'dblclick']);
  await cdp.send(1, 'Input.dispatchKeyEvent', { type: 'keyDown', key: 'a', text: 'a' });
  assert.equal(browser._calls.at(-1)[1].args[0], 'key');
  await rejectsCode(cdp.send(1, 'Input.dispatchMouseEvent', { type: 'mouseMoved', x: 'no', y: 1 }), 'bad_params');
});

test('screenshots come from captureTab with the clip as its rect', async () => {
  const { cdp, browser } = adapter();
  await cdp.attach(1);
  const r = await cdp.send(1, 'Page.captureScreenshot', { format: 'jpeg', quality: 40, clip: { x: 1, y: 2, width: 30, height: 40, scale: 0.5 } });
  assert.deepEqual(r, { data: 'AAAA' });
  assert.deepEqual(browser._calls.at(-1), ['captureTab', 1, { format: 'jpeg', quality: 40, rect: { x: 1, y: 2, width: 30, height: 40 }, scale: 0.5 }]);
});

test('with the Firefox seam the hello says firefox and Firefox', async () => {
  const chrome = fakeChrome();
  delete chrome.debugger;
  const browser = fakeFirefox();
  const sockets = [];
  class Socket {
    constructor(url) {
      this.url = url;
      this.sent = [];
      sockets.push(this);
    }
    send(t) {
      this.sent.push(JSON.parse(t));
    }
    close() {}
  }
  const timers = new FakeTimers();
  const cdp = createFirefoxCdp(browser, { log: { warn() {} } });
  startService({
    chrome,
    WebSocket: Socket,
    navigator: { userAgent: 'Mozilla/5.0 (X11; Linux x86_64; rv:153.0) Gecko/20100101 Firefox/153.0' },
    crypto: { randomUUID: () => '00000000-0000-4000-8000-000000000001', subtle: webcrypto.subtle, getRandomValues: (a) => webcrypto.getRandomValues(a) },
    timers,
    log: { warn() {} },
    cdp,
  });
  await settle();
  sockets[0].onopen();
  await until(() => sockets[0].sent.length > 0, 'hello');
  const hello = sockets[0].sent[0];
  assert.equal(hello.event, 'hello');
  assert.equal(hello.params.browserEngine, 'firefox');
  assert.equal(hello.params.browser, 'Firefox');
});

test('a tab between documents drops input and reports a lost context, not a restricted page', async () => {
  const { cdp } = adapter({
    run: (d) => {
      if (d.func && ['isolatedCall', 'helperInvoke'].includes(d.func.name)) throw new Error('Missing host permission for the tab');
      return {};
    },
  });
  await cdp.attach(1);
  const { executionContextId: ctx } = await cdp.send(1, 'Page.createIsolatedWorld', { frameId: 'main-1' });
  assert.deepEqual(await cdp.send(1, 'Input.dispatchKeyEvent', { type: 'keyUp', key: 'Enter' }), {});
  await rejectsCode(
    cdp.send(1, 'Runtime.callFunctionOn', { functionDeclaration: 'function(...a){return globalThis.__reins.call("info", a)}', executionContextId: ctx }),
    'internal',
    /Cannot find context/,
  );
});

test('Runtime.awaitPromise settles a promise this tab holds, by its page id', async () => {
  let answer;
  const { cdp, browser } = adapter({ run: () => answer });
  await cdp.attach(1);
  answer = { result: { result: { type: 'object', className: 'Object', description: 'Object', objectId: '8' } } };
  const r = await cdp.send(1, 'Runtime.awaitPromise', { promiseObjectId: 'ff.1.5', returnByValue: false });
  assert.equal(r.result.objectId, 'ff.1.8');
  const [op, o] = browser._calls.at(-1)[1].args;
  assert.equal(op, 'await');
  assert.equal(o.objectId, '5');
  assert.equal(o.returnByValue, false);
  answer = { result: { thrown: { isError: true, name: 'Error', message: 'nope' } } };
  assert.match((await cdp.send(1, 'Runtime.awaitPromise', { promiseObjectId: 'ff.1.5' })).exceptionDetails.exception.description, /^Error: nope/);
  answer = { result: { missing: true } };
  await rejectsCode(cdp.send(1, 'Runtime.awaitPromise', { promiseObjectId: 'ff.1.6' }), 'bad_params', /Could not find promise/);
  const before = browser._calls.length;
  await rejectsCode(cdp.send(1, 'Runtime.awaitPromise', { promiseObjectId: 'ff.2.5' }), 'bad_params', /Could not find promise/);
  assert.equal(browser._calls.length, before, "another tab's object never reaches this page");
});

test(`at most ${MAX_PENDING_REDIRECTS} redirects wait for their next hop`, async () => {
  const { cdp, browser, events } = adapter();
  await cdp.attach(1);
  await cdp.send(1, 'Network.enable');
  const hop = (i) => ({ tabId: 1, frameId: 0, requestId: `r${i}`, url: `http://127.0.0.1:9/${i}`, type: 'script', statusCode: 302, statusLine: 'HTTP/1.1 302 Found' });
  for (let i = 0; i <= MAX_PENDING_REDIRECTS; i++) browser.webRequest.onBeforeRedirect.fire(hop(i));
  browser.webRequest.onBeforeRequest.fire({ ...hop(0), url: 'http://127.0.0.1:9/next0' });
  browser.webRequest.onBeforeRequest.fire({ ...hop(1), url: 'http://127.0.0.1:9/next1' });
  const sent = events.filter(([, m]) => m === 'Network.requestWillBeSent').map(([, , p]) => p);
  assert.equal(sent[0].redirectResponse, undefined, 'the oldest redirect was dropped');
  assert.equal(sent[1].redirectResponse.status, 302, 'the next one was kept');
});

test('a download is reported on the attached tab that loaded its URL, as Chromium reports it', async () => {
  const { cdp, browser, events } = adapter();
  await cdp.attach(1);
  await cdp.send(1, 'Page.enable');
  browser.webRequest.onBeforeRequest.fire({ tabId: 1, frameId: 0, requestId: '9', url: 'http://127.0.0.1:9/report.csv', type: 'main_frame', method: 'GET' });
  // Another tab's download, and one of a URL this tab never asked for, are not this tab's.
  browser.downloads.onCreated.fire({ id: 3, url: 'http://127.0.0.1:9/other.bin', filename: '/home/p/Downloads/other.bin', state: 'in_progress' });
  browser.downloads.onCreated.fire({ id: 4, url: 'http://127.0.0.1:9/report.csv', filename: '/home/p/Downloads/report.csv', state: 'in_progress' });
  browser.downloads.onChanged.fire({ id: 3, state: { current: 'complete' } });
  browser.downloads.onChanged.fire({ id: 4, bytesReceived: { current: 8 }, totalBytes: { current: 8 }, state: { current: 'complete' } });
  const got = events.filter(([, m]) => m.startsWith('Page.download'));
  assert.deepEqual(got, [
    [1, 'Page.downloadWillBegin', { frameId: 'main-1', guid: 'firefox-4', url: 'http://127.0.0.1:9/report.csv', suggestedFilename: 'report.csv', downloadId: 4 }],
    [1, 'Page.downloadProgress', { guid: 'firefox-4', state: 'completed', receivedBytes: 8, totalBytes: 8 }],
  ]);
});

// Firefox keeps a page the tab leaves frozen in the back/forward cache and
// never settles a script waiting there (the page helper's "quiet" after a
// click that submits a form): the new document must fail the call at once,
// not leave it to the companion's 30 s request timeout.
test('a helper call waiting in a page the tab leaves fails when the new document commits', async () => {
  const { cdp, browser } = adapter();
  await cdp.attach(1);
  const { executionContextId: ctx } = await cdp.send(1, 'Page.createIsolatedWorld', { frameId: 'main-1', worldName: 'reins' });
  const run = browser.scripting.executeScript;
  browser.scripting.executeScript = (d) => (d.func && d.func.name === 'helperInvoke' ? new Promise(() => {}) : run(d));
  const quiet = cdp.send(1, 'Runtime.callFunctionOn', { functionDeclaration: 'function(...a){return globalThis.__reins.call("quiet", a)}', executionContextId: ctx, arguments: [{ value: 30 }, { value: 1000 }] });
  let settled = false;
  quiet.catch(() => {}).finally(() => { settled = true; });
  await settle();
  assert.equal(settled, false, 'the call waits while the page stays');
  browser.webNavigation.onCommitted.fire({ tabId: 1, frameId: 0, url: 'http://127.0.0.1:9/welcome', documentId: 'doc-2' });
  await rejectsCode(quiet, 'internal', /Execution context was destroyed/);

  const { executionContextId: ctx2 } = await cdp.send(1, 'Page.createIsolatedWorld', { frameId: 'main-1', worldName: 'reins' });
  const waiting = cdp.send(1, 'Runtime.callFunctionOn', { functionDeclaration: 'function(...a){return globalThis.__reins.call("quiet", a)}', executionContextId: ctx2 });
  await settle();
  browser.tabs.onRemoved.fire(1);
  await rejectsCode(waiting, 'no_such_tab');
});

const helperCall = (ctx) => ({ functionDeclaration: 'function(...a){return globalThis.__reins.call("info", a)}', executionContextId: ctx });
const crashPage = { tabId: 1, frameId: 0, url: 'about:tabcrashed?e=tabcrashed&u=http%3A//127.0.0.1%3A9/&c=UTF-8&d=%20', documentId: 'doc-crashed' };

test('a crashed content process: the call under way and every page call after it fail as a crash until the next document', async () => {
  let dead = false;
  const { cdp, browser, events } = adapter({
    run: (d) => {
      // A script running when the process dies fails with no reason named.
      if (dead && d.func?.name === 'helperInvoke') throw new Error('An unexpected error occurred');
      return d.func?.name === 'helperInvoke' ? { result: { ok: 1, href: 'http://127.0.0.1:9/' } } : {};
    },
  });
  await cdp.attach(1);
  await cdp.send(1, 'Page.enable');
  const { executionContextId: ctx } = await cdp.send(1, 'Page.createIsolatedWorld', { frameId: 'main-1', worldName: 'reins' });
  dead = true;
  const underWay = cdp.send(1, 'Runtime.callFunctionOn', helperCall(ctx));
  let settled = false;
  underWay.catch(() => {}).finally(() => { settled = true; });
  await settle();
  assert.equal(settled, false, 'the failure waits to learn whether the tab crashed');
  // Firefox then shows its crashed-tab page, which reports a load and no commit.
  browser.webNavigation.onDOMContentLoaded.fire(crashPage);
  browser.webNavigation.onCompleted.fire(crashPage);
  await rejectsCode(underWay, 'attach_failed', /^the page crashed; navigate to load it again$/);
  assert.deepEqual(events.filter(([, m]) => m === 'Inspector.targetCrashed'), [[1, 'Inspector.targetCrashed', {}]], 'reported once');
  assert.ok(!events.some(([, m]) => m === 'Page.domContentEventFired' || m === 'Page.loadEventFired'), 'the crashed-tab page is no load of the tab');

  // The crashed-tab page takes scripts and runs none.
  const run = browser.scripting.executeScript;
  browser.scripting.executeScript = async () => [null];
  await rejectsCode(cdp.send(1, 'Runtime.callFunctionOn', helperCall(ctx)), 'attach_failed', /crashed/);
  browser.scripting.executeScript = run;
  await rejectsCode(cdp.send(1, 'Runtime.callFunctionOn', helperCall(ctx)), 'attach_failed', /crashed/);

  // A new document ends it.
  dead = false;
  browser.webNavigation.onCommitted.fire({ tabId: 1, frameId: 0, url: 'http://127.0.0.1:9/', documentId: 'doc-2' });
  const { executionContextId: ctx2 } = await cdp.send(1, 'Page.createIsolatedWorld', { frameId: 'main-1', worldName: 'reins' });
  assert.deepEqual((await cdp.send(1, 'Runtime.callFunctionOn', { ...helperCall(ctx2), returnByValue: true })).result.value.ok, 1);
});

test(`a script that fails for no reason named is an internal error once ${CRASH_REPORT_MS} ms pass without a crash`, async () => {
  const timers = new FakeTimers();
  const { cdp, events } = adapter({
    timers,
    run: (d) => {
      if (d.func?.name === 'helperInvoke') throw new Error('An unexpected error occurred');
      return {};
    },
  });
  await cdp.attach(1);
  const { executionContextId: ctx } = await cdp.send(1, 'Page.createIsolatedWorld', { frameId: 'main-1', worldName: 'reins' });
  const call = cdp.send(1, 'Runtime.callFunctionOn', helperCall(ctx));
  let settled = false;
  call.catch(() => {}).finally(() => { settled = true; });
  await timers.advance(CRASH_REPORT_MS - 1);
  assert.equal(settled, false);
  await timers.advance(1);
  await rejectsCode(call, 'internal', /scripting tab 1 failed: An unexpected error occurred/);
  assert.ok(!events.some(([, m]) => m === 'Inspector.targetCrashed'));
});

test('a tab that is not attached when it crashes reports nothing, and its first page call says it crashed', async () => {
  const { cdp, browser, events } = adapter();
  browser.webNavigation.onDOMContentLoaded.fire(crashPage);
  await cdp.attach(1);
  browser.scripting.executeScript = async () => [null];
  await rejectsCode(cdp.send(1, 'Page.createIsolatedWorld', { frameId: 'main-1', worldName: 'reins' }), 'attach_failed', /crashed/);
  assert.ok(!events.some(([, m]) => m === 'Inspector.targetCrashed'));
});

test(`a download is laid at a tab only for its last ${MAX_RECENT} requests of the last ${RECENT_MS / 1000} s`, async () => {
  const browser = fakeFirefox();
  let now = 1_000_000;
  const cdp = createFirefoxCdp(browser, { timers: { setTimeout, clearTimeout }, log: { warn() {} }, now: () => now, fetch: async () => ({ ok: true, text: async () => '' }) });
  const events = [];
  cdp.onEvent((tabId, method, params) => events.push([tabId, method, params]));
  await cdp.attach(1);
  await cdp.send(1, 'Page.enable');
  const req = (url) => browser.webRequest.onBeforeRequest.fire({ tabId: 1, frameId: 0, requestId: url, url, type: 'main_frame', method: 'GET' });
  req('http://127.0.0.1:9/old.csv');
  for (let i = 0; i < MAX_RECENT; i++) req(`http://127.0.0.1:9/p${i}`);
  browser.downloads.onCreated.fire({ id: 1, url: 'http://127.0.0.1:9/old.csv', filename: '/d/old.csv' });
  req('http://127.0.0.1:9/late.csv');
  now += RECENT_MS + 1;
  browser.downloads.onCreated.fire({ id: 2, url: 'http://127.0.0.1:9/late.csv', filename: '/d/late.csv' });
  req('http://127.0.0.1:9/fresh.csv');
  browser.downloads.onCreated.fire({ id: 3, url: 'http://127.0.0.1:9/fresh.csv', filename: '/d/fresh.csv' });
  assert.deepEqual(events.filter(([, m]) => m === 'Page.downloadWillBegin').map(([, , p]) => p.downloadId), [3]);
});

// webNavigation tells of a link's navigation only after a moment; the
// engine must know at once that the click leaves the page (and may become a
// download), as Chromium tells it with Page.frameRequestedNavigation.
test('a click the page script says follows a link is reported as a requested navigation at once', async () => {
  let nav = 'http://127.0.0.1:9/files/report.csv';
  const { cdp, events } = adapter({ run: (d) => (d.func?.name === 'isolatedCall' ? { result: { value: { target: 'a', nav } } } : {}) });
  await cdp.attach(1);
  await cdp.send(1, 'Input.dispatchMouseEvent', { type: 'mouseReleased', x: 3, y: 4, button: 'left', clickCount: 1 });
  assert.equal(events.length, 0, 'nothing while Page is off');
  await cdp.send(1, 'Page.enable');
  await cdp.send(1, 'Input.dispatchMouseEvent', { type: 'mouseReleased', x: 3, y: 4, button: 'left', clickCount: 1 });
  assert.deepEqual(events, [[1, 'Page.frameRequestedNavigation', { frameId: 'main-1', reason: 'anchorClick', url: nav, disposition: 'currentTab' }]]);
  nav = '';
  await cdp.send(1, 'Input.dispatchMouseEvent', { type: 'mouseReleased', x: 3, y: 4, button: 'left', clickCount: 1 });
  assert.equal(events.length, 1, 'a click that stays on the page says nothing');
});

test('a download Firefox announces before its request is laid at the tab whose page is its referrer', async () => {
  const { cdp, browser, events } = adapter();
  await cdp.attach(1);
  await cdp.send(1, 'Page.enable');
  browser.webNavigation.onCommitted.fire({ tabId: 1, frameId: 0, url: 'http://127.0.0.1:9/task/download', documentId: 'doc-2' });
  // The link's navigation starts (and so the tab's pending URL changes) before the download is made.
  browser.webNavigation.onBeforeNavigate.fire({ tabId: 1, frameId: 0, url: 'http://127.0.0.1:9/code.txt' });
  browser.downloads.onCreated.fire({ id: 9, url: 'http://127.0.0.1:9/code.txt', referrer: 'http://127.0.0.1:9/elsewhere', filename: '/d/code.txt' });
  browser.downloads.onCreated.fire({ id: 10, url: 'http://127.0.0.1:9/code.txt', referrer: 'http://127.0.0.1:9/task/download', filename: '/d/code.txt' });
  assert.deepEqual(events.filter(([, m]) => m === 'Page.downloadWillBegin').map(([, , p]) => p.downloadId), [10]);
});

test('a frame of another origin gets an isolated world of its own, found by its webNavigation id', async () => {
  const { cdp, browser } = adapter({ helper: 'HELPER' });
  await cdp.attach(1);
  const { executionContextId: ctx } = await cdp.send(1, 'Page.createIsolatedWorld', { frameId: '17', worldName: 'reins' });
  const first = browser._calls.filter(([c]) => c === 'executeScript').at(-1)[1];
  assert.deepEqual(first.target, { tabId: 1, frameIds: [17] });
  await cdp.send(1, 'Runtime.evaluate', { expression: 'HELPER', contextId: ctx });
  assert.deepEqual(browser._calls.at(-1)[1].target, { tabId: 1, documentIds: ['doc-1'] }, 'the helper goes into that frame\'s document');
  // The network domain's names for frames are taken too; the main frame by its name.
  await cdp.send(1, 'Page.createIsolatedWorld', { frameId: 'sub-1-23' });
  assert.deepEqual(browser._calls.at(-1)[1].target, { tabId: 1, frameIds: [23] });
  await cdp.send(1, 'Page.createIsolatedWorld', { frameId: 'main-1' });
  assert.deepEqual(browser._calls.at(-1)[1].target, { tabId: 1, frameIds: [0] });
  for (const bad of ['sub-2-23', 'frame-x', '0x10', '-3']) {
    await rejectsCode(cdp.send(1, 'Page.createIsolatedWorld', { frameId: bad }), 'bad_params', /No frame/);
  }
});

test('a frame that left the page is reported as gone, as Chromium does', async () => {
  const { cdp } = adapter({
    run: (d) => {
      if (d.target.frameIds && d.target.frameIds[0] === 31) throw new Error('Frame not found, or missing host permission');
      return {};
    },
  });
  await cdp.attach(1);
  await rejectsCode(cdp.send(1, 'Page.createIsolatedWorld', { frameId: '31' }), 'bad_params', /No frame with given id found/);
});

test('input that lands on a frame of another origin is sent again inside that frame', async () => {
  const hops = [];
  const { cdp, browser } = adapter({
    run: (d) => {
      if (d.files) return {};
      const frame = d.target.frameIds?.[0] ?? 0;
      const [op, [plan]] = d.args;
      hops.push([frame, op, plan && plan.x, plan && plan.y]);
      // The top document finds a frame at the point; that frame handles it.
      if (frame === 0) return { result: { value: { target: 'iframe', forward: { frameId: 9, x: 15, y: 25 } } } };
      return { result: { value: { target: 'button' } } };
    },
  });
  await cdp.attach(1);
  await cdp.send(1, 'Input.dispatchMouseEvent', { type: 'mousePressed', x: 115, y: 225, button: 'left', clickCount: 1 });
  assert.deepEqual(hops, [[0, 'mouse', 115, 225], [9, 'mouse', 15, 25]]);
  const inner = browser._calls.filter(([c]) => c === 'executeScript').at(-1)[1].args[1][0];
  assert.equal(inner.init.clientX, 15, 'the event carries the frame\'s own coordinates');
  hops.length = 0;
  await cdp.send(1, 'Input.insertText', { text: 'hi' });
  assert.deepEqual(hops.map(([f, op]) => [f, op]), [[0, 'insertText'], [9, 'insertText']]);
});
