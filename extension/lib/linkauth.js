// The link handshake, extension side (the companion's is
// companion/linkauth; both are checked against
// companion/wire/testdata/link_auth.json). The companion proves first: the
// extension answers a companion only after checking its proof, and obeys
// nothing before. WebCrypto is injected so node tests run the same code.
//
//   extension → hello     auth: {v: 1, nonce: Ne, mode: "key"|"code"}
//   companion → auth      {nonce: Nc, proof: MAC(S, companion ‖ port ‖ Ne ‖ Nc)}
//   extension → auth      {proof: MAC(S, extension ‖ port ‖ Ne ‖ Nc)}
//   companion → auth.key  code mode only: {key: K ⊕ MAC(S, wrap ‖ …), proof: MAC(K, companion ‖ …)}
//
// S is the link key K, or in code mode a secret derived from the pairing
// code and both nonces.

export const AUTH_VERSION = 1;
export const NONCE_BYTES = 32;
export const KEY_BYTES = 32;
export const CODE_LENGTH = 10;
export const CODE_ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

const LABEL_COMPANION = 'reins-link/1 companion';
const LABEL_EXTENSION = 'reins-link/1 extension';
const LABEL_CODE = 'reins-link/1 code';
const LABEL_WRAP = 'reins-link/1 wrap';

/** A handshake failure; the message is for the person. */
export class LinkAuthError extends Error {
  constructor(message) {
    super(message);
    this.name = 'LinkAuthError';
  }
}

/**
 * What a person typed, as a code: case, spaces and dashes do not matter,
 * and O, I and L read as 0, 1 and 1.
 * @returns {string}
 */
export function normalizeCode(typed) {
  let out = '';
  for (let ch of String(typed ?? '').toUpperCase()) {
    if (ch === ' ' || ch === '-' || ch === '\t') continue;
    if (ch === 'O') ch = '0';
    if (ch === 'I' || ch === 'L') ch = '1';
    if (!CODE_ALPHABET.includes(ch)) throw new LinkAuthError(`a pairing code has only the characters ${CODE_ALPHABET}`);
    out += ch;
  }
  if (out.length !== CODE_LENGTH) throw new LinkAuthError(`a pairing code has ${CODE_LENGTH} characters, not ${out.length}`);
  return out;
}

/** @param {Uint8Array} bytes */
export function toBase64(bytes) {
  let s = '';
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s);
}

/** @returns {Uint8Array|null} null when s is not base64 */
export function fromBase64(s) {
  if (typeof s !== 'string') return null;
  let bin;
  try {
    bin = atob(s);
  } catch {
    return null;
  }
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

/** Constant-time comparison of two byte strings. */
export function equalBytes(a, b) {
  if (!(a instanceof Uint8Array) || !(b instanceof Uint8Array) || a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a[i] ^ b[i];
  return diff === 0;
}

function transcript(label, port, ne, nc) {
  const l = new TextEncoder().encode(label);
  const out = new Uint8Array(l.length + 1 + 2 + ne.length + nc.length);
  out.set(l, 0);
  let i = l.length;
  out[i++] = 0;
  out[i++] = (port >> 8) & 0xff;
  out[i++] = port & 0xff;
  out.set(ne, i);
  out.set(nc, i + ne.length);
  return out;
}

async function mac(subtle, key, label, port, ne, nc) {
  const k = await subtle.importKey('raw', key, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  return new Uint8Array(await subtle.sign('HMAC', k, transcript(label, port, ne, nc)));
}

/**
 * One handshake toward the companion on port, with the link key or a
 * pairing code.
 */
export class LinkHandshake {
  /**
   * @param {object} o
   * @param {SubtleCrypto} o.subtle
   * @param {(n:number) => Uint8Array} o.randomBytes
   * @param {number} o.port the port this socket dialled
   * @param {Uint8Array} [o.key] the link key
   * @param {string} [o.code] a pairing code, as typed
   * @param {Uint8Array} [o.nonce] the extension's nonce (tests); random otherwise
   */
  constructor({ subtle, randomBytes, port, key, code, nonce }) {
    this.subtle = subtle;
    this.port = port;
    if (code !== undefined) {
      this.mode = 'code';
      this.code = normalizeCode(code);
    } else {
      if (!(key instanceof Uint8Array) || key.length !== KEY_BYTES) throw new LinkAuthError('no link key');
      this.mode = 'key';
      this.key = key;
    }
    this.ne = nonce ?? randomBytes(NONCE_BYTES);
    this.secret = null;
    /** The companion proved itself and the extension's proof was made. */
    this.answered = false;
  }

  /** hello's auth field. */
  hello() {
    return { v: AUTH_VERSION, nonce: toBase64(this.ne), mode: this.mode };
  }

  /**
   * Checks the companion's challenge and returns the auth event's params.
   * Throws LinkAuthError when the peer did not prove the key (or code).
   */
  async answer(params) {
    const nc = fromBase64(params?.nonce);
    const proof = fromBase64(params?.proof);
    if (!nc || nc.length !== NONCE_BYTES || !proof) throw new LinkAuthError(`the program on port ${this.port} answered without a valid proof`);
    this.nc = nc;
    this.secret =
      this.mode === 'code' ? await mac(this.subtle, new TextEncoder().encode(this.code), LABEL_CODE, this.port, this.ne, nc) : this.key;
    const want = await mac(this.subtle, this.secret, LABEL_COMPANION, this.port, this.ne, nc);
    if (!equalBytes(proof, want)) {
      throw new LinkAuthError(
        this.mode === 'code'
          ? 'the pairing code does not match the one the Reins app shows'
          : `the program on port ${this.port} could not prove it is the Reins app`,
      );
    }
    const answer = { proof: toBase64(await mac(this.subtle, this.secret, LABEL_EXTENSION, this.port, this.ne, nc)) };
    this.answered = true;
    return answer;
  }

  /** Code mode: unwraps the delivered link key and checks it. */
  async receiveKey(params) {
    if (this.mode !== 'code' || !this.secret) throw new LinkAuthError('no link key was expected');
    const wrapped = fromBase64(params?.key);
    const proof = fromBase64(params?.proof);
    if (!wrapped || wrapped.length !== KEY_BYTES || !proof) throw new LinkAuthError('the Reins app sent a malformed link key');
    const pad = await mac(this.subtle, this.secret, LABEL_WRAP, this.port, this.ne, this.nc);
    const key = wrapped.map((b, i) => b ^ pad[i]);
    const want = await mac(this.subtle, key, LABEL_COMPANION, this.port, this.ne, this.nc);
    if (!equalBytes(proof, want)) throw new LinkAuthError('the link key from the Reins app does not check out');
    return key;
  }
}
