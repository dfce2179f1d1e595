import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { webcrypto } from 'node:crypto';
import { LinkHandshake, LinkAuthError, normalizeCode, toBase64, fromBase64, equalBytes } from '../lib/linkauth.js';

// The contract with the companion (companion/linkauth writes and checks it).
const v = JSON.parse(readFileSync(new URL('../../companion/wire/testdata/link_auth.json', import.meta.url), 'utf8'));
const subtle = webcrypto.subtle;
const randomBytes = (n) => webcrypto.getRandomValues(new Uint8Array(n));
const b = (s) => fromBase64(s);

test('key mode matches the companion', async () => {
  const hs = new LinkHandshake({ subtle, randomBytes, port: v.port, key: b(v.key), nonce: b(v.extensionNonce) });
  assert.deepEqual(hs.hello(), { v: 1, nonce: v.extensionNonce, mode: 'key' });
  const answer = await hs.answer({ nonce: v.companionNonce, proof: v.keyMode.companionProof });
  assert.equal(answer.proof, v.keyMode.extensionProof);
});

test('a companion that does not hold the key is refused before the extension proves anything', async () => {
  const wrongKey = new Uint8Array(32).fill(9);
  const hs = new LinkHandshake({ subtle, randomBytes, port: v.port, key: wrongKey, nonce: b(v.extensionNonce) });
  await assert.rejects(hs.answer({ nonce: v.companionNonce, proof: v.keyMode.companionProof }), LinkAuthError);
});

test('a relay on another port is refused', async () => {
  // The extension dialled port+1; the real companion, behind the relay, proves for its own port.
  const hs = new LinkHandshake({ subtle, randomBytes, port: v.port + 1, key: b(v.key), nonce: b(v.extensionNonce) });
  await assert.rejects(hs.answer({ nonce: v.companionNonce, proof: v.keyMode.companionProof }), /could not prove it is the Reins app/);
  // And the companion on port+1 would have made this proof.
  const there = new LinkHandshake({ subtle, randomBytes, port: v.port + 1, key: b(v.key), nonce: b(v.extensionNonce) });
  await there.answer({ nonce: v.companionNonce, proof: v.keyMode.companionProofOtherPort });
});

test('garbage challenges are refused', async () => {
  for (const params of [undefined, null, {}, { nonce: v.companionNonce }, { proof: v.keyMode.companionProof }, { nonce: 'AAAA', proof: v.keyMode.companionProof }, { nonce: '!!', proof: '!!' }, { nonce: 5, proof: [] }]) {
    const hs = new LinkHandshake({ subtle, randomBytes, port: v.port, key: b(v.key), nonce: b(v.extensionNonce) });
    await assert.rejects(hs.answer(params), LinkAuthError, JSON.stringify(params));
  }
});

test('code mode matches the companion and unwraps the key', async () => {
  for (const typed of v.codeMode.typed) {
    const hs = new LinkHandshake({ subtle, randomBytes, port: v.port, code: typed, nonce: b(v.extensionNonce) });
    assert.equal(hs.hello().mode, 'code');
    const answer = await hs.answer({ nonce: v.companionNonce, proof: v.codeMode.companionProof });
    assert.equal(answer.proof, v.codeMode.extensionProof);
    const key = await hs.receiveKey({ key: v.codeMode.wrappedKey, proof: v.codeMode.keyProof });
    assert.equal(toBase64(key), v.key);
  }
});

test('a wrong code is found out before the extension proves anything', async () => {
  const hs = new LinkHandshake({ subtle, randomBytes, port: v.port, code: '00000-00000', nonce: b(v.extensionNonce) });
  await assert.rejects(hs.answer({ nonce: v.companionNonce, proof: v.codeMode.companionProof }), /does not match the one the Reins app shows/);
});

test('a tampered key delivery is refused', async () => {
  const hs = new LinkHandshake({ subtle, randomBytes, port: v.port, code: v.codeMode.code, nonce: b(v.extensionNonce) });
  await hs.answer({ nonce: v.companionNonce, proof: v.codeMode.companionProof });
  const bad = b(v.codeMode.wrappedKey);
  bad[0] ^= 1;
  await assert.rejects(hs.receiveKey({ key: toBase64(bad), proof: v.codeMode.keyProof }), LinkAuthError);
  // And a key before any proof is refused.
  const early = new LinkHandshake({ subtle, randomBytes, port: v.port, code: v.codeMode.code });
  await assert.rejects(early.receiveKey({ key: v.codeMode.wrappedKey, proof: v.codeMode.keyProof }), LinkAuthError);
});

test('codes are normalised like the companion does', () => {
  assert.equal(normalizeCode('7k3qh w2m9x'), '7K3QHW2M9X');
  assert.equal(normalizeCode('OOIIL-23456'), '0011123456');
  for (const bad of v.codeMode.invalid) assert.throws(() => normalizeCode(bad), LinkAuthError, bad);
});

test('fresh nonces and constant-time comparison', () => {
  const a = new LinkHandshake({ subtle, randomBytes, port: 1, key: new Uint8Array(32) });
  const c = new LinkHandshake({ subtle, randomBytes, port: 1, key: new Uint8Array(32) });
  assert.notEqual(a.hello().nonce, c.hello().nonce);
  assert.equal(fromBase64(a.hello().nonce).length, 32);
  assert.equal(equalBytes(new Uint8Array([1, 2]), new Uint8Array([1, 2])), true);
  assert.equal(equalBytes(new Uint8Array([1, 2]), new Uint8Array([1, 3])), false);
  assert.equal(equalBytes(new Uint8Array([1]), new Uint8Array([1, 2])), false);
  assert.throws(() => new LinkHandshake({ subtle, randomBytes, port: 1, key: new Uint8Array(5) }), LinkAuthError);
});
