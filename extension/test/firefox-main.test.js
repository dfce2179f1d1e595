import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mainWorld } from '../lib/firefox-main.js';

// mainWorld runs in a page, where the global object is window.
globalThis.window ??= globalThis;
const storeKey = '__reinsObjects_test';

test('Runtime.awaitPromise: a promise held by id settles to its value', async () => {
  const held = await mainWorld('evaluate', { expression: 'Promise.resolve(42)', storeKey });
  assert.equal(held.result.subtype, 'promise');
  assert.match(held.result.objectId, /^\d+$/);
  assert.deepEqual(await mainWorld('await', { objectId: held.result.objectId, returnByValue: true, storeKey }), { result: { type: 'number', value: 42, description: '42' } });
});

test('Runtime.awaitPromise: a rejection is the thrown value', async () => {
  const held = await mainWorld('evaluate', { expression: 'Promise.reject(new TypeError("no"))', storeKey });
  const out = await mainWorld('await', { objectId: held.result.objectId, storeKey });
  assert.equal(out.thrown.name, 'TypeError');
  assert.equal(out.thrown.message, 'no');
});

test('Runtime.awaitPromise: only promises the page holds', async () => {
  const obj = await mainWorld('evaluate', { expression: '({a: 1})', storeKey });
  assert.deepEqual(await mainWorld('await', { objectId: obj.result.objectId, storeKey }), { missing: true });
  assert.deepEqual(await mainWorld('await', { objectId: '999999', storeKey }), { missing: true });
});

test('Runtime.awaitPromise: what it settles to joins the promise group, and goes with it', async () => {
  const held = await mainWorld('evaluate', { expression: 'Promise.resolve({a: 1})', objectGroup: 'g', storeKey });
  const settled = await mainWorld('await', { objectId: held.result.objectId, storeKey });
  assert.equal(settled.result.type, 'object');
  const id = settled.result.objectId;
  const read = await mainWorld('call', { objectId: id, functionDeclaration: 'function(){return this.a}', returnByValue: true, storeKey });
  assert.equal(read.result.value, 1);
  await mainWorld('release', { group: 'g', storeKey });
  const gone = await mainWorld('call', { objectId: id, functionDeclaration: 'function(){return this.a}', returnByValue: true, storeKey });
  assert.match(gone.thrown.message, /Could not find object/);
});

test('Runtime.evaluate settles a promise only with awaitPromise', async () => {
  assert.deepEqual(await mainWorld('evaluate', { expression: 'Promise.resolve(7)', awaitPromise: true, returnByValue: true, storeKey }), { result: { type: 'number', value: 7, description: '7' } });
  const held = await mainWorld('evaluate', { expression: 'Promise.resolve(7)', returnByValue: true, storeKey });
  assert.equal(held.result.subtype, 'promise');
  const slow = await mainWorld('evaluate', { expression: 'new Promise(() => {})', awaitPromise: true, timeout: 20, storeKey });
  assert.match(slow.thrown.message, /ran past its timeout/);
});
