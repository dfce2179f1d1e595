// Frame shapes of the browspark v3 link plus Reins' `code` beside `error`.

export const PROTOCOL_VERSION = 3;

// The codes the extension sends. Each is a row of the companion's one error
// table (companion/wire/errors.go, copied to testdata/error_codes.json, which
// frames.test.js reads).
export const Codes = Object.freeze({
  unknownMethod: 'unknown_method',
  badParams: 'bad_params',
  noSuchTab: 'no_such_tab',
  attachFailed: 'attach_failed',
  restrictedUrl: 'restricted_url',
  notShared: 'not_shared',
  timeout: 'timeout',
  navigationFailed: 'navigation_failed',
  internal: 'internal',
  paused: 'paused',
  unauthorized: 'unauthorized',
});

const knownCodes = new Set(Object.values(Codes));

/** An error that travels to the companion with a machine-readable code. */
export class WireError extends Error {
  /** @param {string} code @param {string} message */
  constructor(code, message) {
    super(message);
    this.name = 'WireError';
    this.code = code;
  }
}

/**
 * A call on a page whose renderer (Chromium) or content process (Firefox)
 * crashed. The call names its tab; the browser's own id for it would only
 * confuse.
 */
export function crashedError() {
  return new WireError(Codes.attachFailed, 'the page crashed; navigate to load it again');
}

export function badParams(message) {
  return new WireError(Codes.badParams, message);
}

/**
 * Classifies an incoming text frame from the companion.
 * @param {string} text
 * @returns {{kind:'request', id:number, method:string, params:any}
 *   | {kind:'event', event:string, params:any}
 *   | {kind:'response', id:number}
 *   | {kind:'invalid', reason:string}}
 */
export function parseFrame(text) {
  let msg;
  try {
    msg = JSON.parse(text);
  } catch {
    return { kind: 'invalid', reason: 'frame is not json' };
  }
  if (msg === null || typeof msg !== 'object' || Array.isArray(msg)) {
    return { kind: 'invalid', reason: 'frame is not a json object' };
  }
  if (typeof msg.event === 'string' && msg.event !== '') {
    return { kind: 'event', event: msg.event, params: msg.params };
  }
  if ('id' in msg) {
    if (typeof msg.id !== 'number' || !Number.isSafeInteger(msg.id)) {
      return { kind: 'invalid', reason: 'frame id is not an integer' };
    }
    if (typeof msg.method === 'string') {
      return { kind: 'request', id: msg.id, method: msg.method, params: msg.params };
    }
    if ('method' in msg) return { kind: 'invalid', reason: 'request method is not a string' };
    return { kind: 'response', id: msg.id };
  }
  return { kind: 'invalid', reason: 'frame is neither a request nor an event' };
}

export function resultFrame(id, result) {
  // The Go side decodes result as raw JSON; null is clearer than a missing key.
  return { id, result: result === undefined ? null : result };
}

/** Builds an error answer; anything that is not a WireError is internal. */
export function errorFrame(id, err) {
  const code = err instanceof WireError && knownCodes.has(err.code) ? err.code : Codes.internal;
  let message = err && typeof err.message === 'string' ? err.message : String(err);
  if (message === '') message = 'internal error';
  return { id, error: message, code };
}

export function eventFrame(event, params) {
  return params === undefined ? { event } : { event, params };
}
