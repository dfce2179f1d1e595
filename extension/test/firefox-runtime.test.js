import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { exceptionDetails, chromeStyleStack, helperCallName, argumentValues, explainEvalBlocked, netErrorText, isAbortError, errorPageText } from '../lib/firefox-runtime.js';
import { requestWillBeSent, responseReceived, loadingFailed, resourceType } from '../lib/firefox-network.js';

test('Firefox stacks read like Chromium ones', () => {
  assert.equal(chromeStyleStack('f@http://x/a.js:3:7\n@debugger eval code:1:1\n'), '    at f (http://x/a.js:3:7)\n    at <anonymous> (debugger eval code:1:1)');
  assert.equal(chromeStyleStack(''), '');
  assert.equal(chromeStyleStack(undefined), '');
});

test('an Error becomes Chromium-shaped exceptionDetails', () => {
  const d = exceptionDetails({ isError: true, name: 'TypeError', message: 'boom', stack: 'g@http://p/x.js:10:5', fileName: 'http://p/x.js', lineNumber: 10, columnNumber: 5 });
  assert.equal(d.text, 'Uncaught');
  assert.equal(d.exception.type, 'object');
  assert.equal(d.exception.subtype, 'error');
  assert.equal(d.exception.className, 'TypeError');
  assert.equal(d.exception.description, 'TypeError: boom\n    at g (http://p/x.js:10:5)');
  assert.equal(d.lineNumber, 9, 'zero-based like CDP');
  assert.equal(d.columnNumber, 4);
  assert.equal(d.url, 'http://p/x.js');
});

test('an error without a message or stack still reads', () => {
  assert.equal(exceptionDetails({ isError: true, name: 'Error', message: '' }).exception.description, 'Error');
});

test('thrown non-errors keep their value', () => {
  const s = exceptionDetails({ type: 'string', value: 'nope' });
  assert.deepEqual(s.exception, { type: 'string', value: 'nope', description: 'nope' });
  const n = exceptionDetails({ type: 'number', value: 42 });
  assert.deepEqual(n.exception, { type: 'number', value: 42, description: '42' });
  assert.deepEqual(exceptionDetails({ type: 'object', value: null }).exception, { type: 'object', subtype: 'null', value: null });
  assert.deepEqual(exceptionDetails({ type: 'undefined' }).exception, { type: 'undefined' });
  assert.equal(exceptionDetails('raw').exception.value, 'raw');
});

test('a CSP-blocked eval says why', () => {
  assert.match(explainEvalBlocked('EvalError: call to eval() blocked by CSP'), /Content-Security-Policy forbids eval/);
  assert.equal(explainEvalBlocked('TypeError: x'), 'TypeError: x');
});

// The declarations the engine writes (companion/tools/tabstate.go), from the
// fixture its Go test reads too.
const helperCalls = JSON.parse(readFileSync(new URL('../../companion/wire/testdata/helper_call.json', import.meta.url), 'utf8'));

test("the tool engine's helper calls are recognised, nothing else", () => {
  assert.ok(helperCalls.calls.length >= 5 && helperCalls.refused.length >= 5);
  for (const c of helperCalls.calls) assert.equal(helperCallName(c.declaration), c.fn, c.declaration);
  for (const r of helperCalls.refused) assert.equal(helperCallName(r), null, r);
  // Spacing the engine does not write is still the same call.
  assert.equal(helperCallName(' function ( ...args ) { return globalThis.__reins.call("form\\"Input", args); } '), 'form"Input');
  assert.equal(helperCallName(42), null);
});

test('call arguments decode values and unserializable numbers', () => {
  const v = argumentValues([{ value: 1 }, { value: { a: 'b' } }, { unserializableValue: 'NaN' }, { unserializableValue: '-0' }, {}]);
  assert.equal(v[0], 1);
  assert.deepEqual(v[1], { a: 'b' });
  assert.ok(Number.isNaN(v[2]));
  assert.ok(Object.is(v[3], -0));
  assert.equal(v[4], undefined);
  assert.deepEqual(argumentValues(undefined), []);
  assert.throws(() => argumentValues({}), TypeError);
});

test('Firefox network errors get net:: names', () => {
  assert.equal(netErrorText('Error code 2152398878'), 'net::ERR_NAME_NOT_RESOLVED');
  assert.equal(netErrorText('Error code 2152398861'), 'net::ERR_CONNECTION_REFUSED');
  assert.equal(netErrorText('NS_BINDING_ABORTED'), 'net::ERR_ABORTED');
  assert.equal(netErrorText('Error code 2152398867'), 'net::ERR_UNSAFE_PORT', 'NS_ERROR_PORT_ACCESS_NOT_ALLOWED');
  assert.equal(netErrorText('Error code 2152398920'), 'net::ERR_PROXY_CONNECTION_FAILED', 'NS_ERROR_PROXY_CONNECTION_REFUSED');
  // Certificates: what Firefox said of a self-signed one, and one it has no name for.
  assert.equal(netErrorText('Error code 2153398258'), 'net::ERR_CERT_AUTHORITY_INVALID');
  assert.equal(netErrorText('Error code 2153390067'), 'net::ERR_CERT_AUTHORITY_INVALID');
  assert.equal(netErrorText('Error code 2153390064'), 'net::ERR_FAILED (Firefox security error -8176)');
  assert.equal(netErrorText('Error code 1'), 'Error code 1');
  assert.equal(netErrorText(''), 'net::ERR_FAILED');
  assert.ok(isAbortError('Error code 2152398850'));
  assert.ok(!isAbortError('Error code 2152398878'));
});

test('webRequest details become Network events', () => {
  const ctx = { loaderId: 'L1', frameId: 'main-3' };
  const req = requestWillBeSent({ requestId: '7', url: 'http://127.0.0.1:8/x', method: 'POST', type: 'main_frame', timeStamp: 2000 }, ctx);
  assert.equal(req.requestId, 'ff-7');
  assert.equal(req.loaderId, 'L1');
  assert.equal(req.type, 'Document');
  assert.equal(req.documentURL, 'http://127.0.0.1:8/x');
  assert.equal(req.request.method, 'POST');
  assert.equal(req.timestamp, 2);
  assert.equal(req.redirectResponse, undefined);
  const hop = requestWillBeSent({ requestId: '7', url: 'http://127.0.0.1:8/y', type: 'main_frame' }, ctx, { url: 'http://127.0.0.1:8/x', statusCode: 302, statusLine: 'HTTP/1.1 302 Found' });
  assert.deepEqual([hop.redirectResponse.status, hop.redirectResponse.statusText], [302, 'Found']);
  const res = responseReceived(
    { requestId: '7', url: 'http://127.0.0.1:8/y', type: 'main_frame', statusCode: 404, statusLine: 'HTTP/1.1 404 Not Found', responseHeaders: [{ name: 'Content-Type', value: 'text/html; charset=utf-8' }] },
    ctx,
  );
  assert.equal(res.response.status, 404);
  assert.equal(res.response.statusText, 'Not Found');
  assert.equal(res.response.mimeType, 'text/html');
  assert.equal(res.response.headers['Content-Type'], 'text/html; charset=utf-8');
  assert.equal(res.type, 'Document');
  assert.equal(res.loaderId, 'L1', 'the engine finds the document status by loader');
  assert.equal(loadingFailed({ requestId: '9', type: 'xmlhttprequest' }, 'net::ERR_ABORTED').canceled, true);
  assert.equal(resourceType('xmlhttprequest'), 'XHR');
  assert.equal(resourceType('imageset'), 'Image');
  assert.equal(resourceType('weird'), 'Other');
});

test('an error page Firefox shows names its error as Chromium would', () => {
  assert.equal(errorPageText('about:neterror?e=deniedPortAccess&u=http%3A//127.0.0.1%3A1/&c=UTF-8'), 'net::ERR_UNSAFE_PORT');
  assert.equal(errorPageText('about:neterror?e=connectionFailure&u=x'), 'net::ERR_CONNECTION_REFUSED');
  assert.equal(errorPageText('about:certerror?e=nssBadCert&u=x'), 'net::ERR_CERT_INVALID');
  assert.equal(errorPageText('about:neterror?u=x'), 'net::ERR_FAILED (Firefox: an error page)');
  for (const url of ['about:tabcrashed?e=tabcrashed', 'http://127.0.0.1:9/?e=netTimeout', 'about:blank', undefined]) {
    assert.equal(errorPageText(url), '', String(url));
  }
});
