// Runtime helpers of the Firefox adapter: the CDP shapes of results and
// exceptions (Runtime.evaluate / callFunctionOn), the recognition of the tool
// engine's isolated-world calls, and error-text mapping. Pure, so tested in
// node.

/**
 * Firefox stacks read "fn@url:line:col"; tools and people expect Chromium's
 * "    at fn (url:line:col)".
 */
export function chromeStyleStack(stack) {
  if (typeof stack !== 'string' || stack === '') return '';
  const lines = [];
  for (const raw of stack.split('\n')) {
    const line = raw.trim();
    if (line === '') continue;
    const m = /^(.*?)@(.*):(\d+):(\d+)$/.exec(line);
    if (!m) {
      lines.push('    at ' + line);
      continue;
    }
    const fn = m[1] || '<anonymous>';
    lines.push(`    at ${fn} (${m[2]}:${m[3]}:${m[4]})`);
  }
  return lines.join('\n');
}

/**
 * CDP exceptionDetails for what a page function caught. thrown is the
 * plain description firefox-main.js / the adapter builds: {isError, name,
 * message, stack, fileName, lineNumber, columnNumber} for Error objects,
 * {value, type} for anything else thrown.
 */
export function exceptionDetails(thrown, exceptionId = 1) {
  const t = thrown && typeof thrown === 'object' ? thrown : { value: String(thrown), type: 'string' };
  const out = { exceptionId, text: 'Uncaught', lineNumber: 0, columnNumber: 0 };
  if (t.isError) {
    const name = typeof t.name === 'string' && t.name !== '' ? t.name : 'Error';
    const message = typeof t.message === 'string' ? t.message : '';
    const head = message === '' ? name : `${name}: ${message}`;
    const stack = chromeStyleStack(t.stack);
    out.exception = {
      type: 'object',
      subtype: 'error',
      className: name,
      description: stack ? `${head}\n${stack}` : head,
    };
    // Chromium's lines and columns are zero-based; Firefox's one-based.
    if (Number.isInteger(t.lineNumber) && t.lineNumber > 0) out.lineNumber = t.lineNumber - 1;
    if (Number.isInteger(t.columnNumber) && t.columnNumber > 0) out.columnNumber = t.columnNumber - 1;
    if (typeof t.fileName === 'string' && t.fileName !== '') out.url = t.fileName;
    return out;
  }
  const type = typeof t.type === 'string' ? t.type : 'string';
  if (type === 'undefined') out.exception = { type: 'undefined' };
  else if (type === 'object' && t.value === null) out.exception = { type: 'object', subtype: 'null', value: null };
  else out.exception = { type, value: t.value, description: String(t.value) };
  return out;
}

/**
 * A message for failures of scripting.executeScript itself (as opposed to
 * the page's own exceptions), with the blocked-eval case explained: Firefox
 * applies the page's Content-Security-Policy to the eval the adapter needs
 * for arbitrary expressions, and offers extensions no way around it.
 */
export function explainEvalBlocked(description) {
  if (typeof description === 'string' && /blocked by CSP/i.test(description)) {
    return `${description} (this page's Content-Security-Policy forbids eval, and Firefox gives extensions no way to run code strings there)`;
  }
  return description;
}

// function(...a){return globalThis.__reins.call("name", a)}: the tool
// engine's only call into its isolated-world helper. Firefox runs that world
// as a content script, where eval is forbidden by the extension's CSP, so the
// adapter cannot compile the declaration; it recognises this exact shape and
// makes the same call from a function it ships. The engine writes it in
// companion/tools/tabstate.go (helperDeclaration); both sides are tested
// against companion/wire/testdata/helper_call.json.
const helperCallRE = /^\s*function\s*\(\s*\.\.\.\s*([A-Za-z_$][\w$]*)\s*\)\s*\{\s*return\s+globalThis\.__reins\.call\(\s*("(?:[^"\\]|\\.)*")\s*,\s*\1\s*\)\s*;?\s*\}\s*$/;

/** @returns {string|null} the helper function the declaration calls */
export function helperCallName(functionDeclaration) {
  if (typeof functionDeclaration !== 'string') return null;
  const m = helperCallRE.exec(functionDeclaration);
  if (!m) return null;
  try {
    const name = JSON.parse(m[2]);
    return typeof name === 'string' ? name : null;
  } catch {
    return null;
  }
}

/** Values of CDP CallArguments ({value} or {unserializableValue}); objectIds are resolved by the caller. */
export function argumentValues(args) {
  if (args === undefined || args === null) return [];
  if (!Array.isArray(args)) throw new TypeError('arguments must be an array');
  return args.map((a) => {
    if (!a || typeof a !== 'object') return undefined;
    if ('value' in a) return a.value;
    if (typeof a.unserializableValue === 'string') {
      const u = a.unserializableValue;
      if (u === 'NaN') return NaN;
      if (u === 'Infinity') return Infinity;
      if (u === '-Infinity') return -Infinity;
      if (u === '-0') return -0;
    }
    return undefined;
  });
}

// Firefox reports network failures as "Error code N" (an nsresult); CDP
// callers expect Chromium's net:: names.
// (The network module's codes are 0x804B0000 plus the number in Firefox's
// ErrorList.)
const netErrors = new Map([
  [2152398850, 'net::ERR_ABORTED'], // NS_BINDING_ABORTED (2)
  [2152398861, 'net::ERR_CONNECTION_REFUSED'], // NS_ERROR_CONNECTION_REFUSED (13)
  [2152398862, 'net::ERR_TIMED_OUT'], // NS_ERROR_NET_TIMEOUT (14)
  [2152398864, 'net::ERR_INTERNET_DISCONNECTED'], // NS_ERROR_OFFLINE (16)
  [2152398867, 'net::ERR_UNSAFE_PORT'], // NS_ERROR_PORT_ACCESS_NOT_ALLOWED (19)
  [2152398868, 'net::ERR_CONNECTION_RESET'], // NS_ERROR_NET_RESET (20)
  [2152398878, 'net::ERR_NAME_NOT_RESOLVED'], // NS_ERROR_UNKNOWN_HOST (30)
  [2152398879, 'net::ERR_TOO_MANY_REDIRECTS'], // NS_ERROR_REDIRECT_LOOP (31)
  [2152398890, 'net::ERR_PROXY_CONNECTION_FAILED'], // NS_ERROR_UNKNOWN_PROXY_HOST (42)
  [2152398919, 'net::ERR_CONNECTION_CLOSED'], // NS_ERROR_NET_INTERRUPT (71)
  [2152398920, 'net::ERR_PROXY_CONNECTION_FAILED'], // NS_ERROR_PROXY_CONNECTION_REFUSED (72)
]);

// The security module's codes are 0x805A0000 plus minus an NSS error.
const SECURITY_MODULE = 0x805a0000;
const securityErrors = new Map([
  [8179, 'net::ERR_CERT_AUTHORITY_INVALID'], // SEC_ERROR_UNKNOWN_ISSUER
  [8181, 'net::ERR_CERT_DATE_INVALID'], // SEC_ERROR_EXPIRED_CERTIFICATE
  [12276, 'net::ERR_CERT_COMMON_NAME_INVALID'], // SSL_ERROR_BAD_CERT_DOMAIN
  [16370, 'net::ERR_CERT_AUTHORITY_INVALID'], // MOZILLA_PKIX_ERROR_SELF_SIGNED_CERT
  [16379, 'net::ERR_CERT_DATE_INVALID'], // MOZILLA_PKIX_ERROR_NOT_YET_VALID_CERTIFICATE
]);

const namedNetErrors = new Map([
  ['NS_BINDING_ABORTED', 'net::ERR_ABORTED'],
  ['NS_ERROR_CONNECTION_REFUSED', 'net::ERR_CONNECTION_REFUSED'],
  ['NS_ERROR_UNKNOWN_HOST', 'net::ERR_NAME_NOT_RESOLVED'],
  ['NS_ERROR_NET_TIMEOUT', 'net::ERR_TIMED_OUT'],
  ['NS_ERROR_NET_RESET', 'net::ERR_CONNECTION_RESET'],
  ['NS_ERROR_ABORT', 'net::ERR_ABORTED'],
]);

export function netErrorText(error) {
  const s = typeof error === 'string' ? error : String(error ?? '');
  const m = /Error code (\d+)/.exec(s);
  if (m) {
    const n = Number(m[1]);
    if (netErrors.has(n)) return netErrors.get(n);
    if (n > SECURITY_MODULE && n <= SECURITY_MODULE + 0xffff) {
      return securityErrors.get(n - SECURITY_MODULE) ?? `net::ERR_FAILED (Firefox security error -${n - SECURITY_MODULE})`;
    }
  }
  for (const [name, net] of namedNetErrors) if (s.includes(name)) return net;
  return s === '' ? 'net::ERR_FAILED' : s;
}

// Firefox shows some failures as an error page in the tab it committed
// (about:neterror or about:certerror, with the kind of error as e=).
const errorPages = new Map([
  ['connectionFailure', 'net::ERR_CONNECTION_REFUSED'],
  ['netTimeout', 'net::ERR_TIMED_OUT'],
  ['dnsNotFound', 'net::ERR_NAME_NOT_RESOLVED'],
  ['deniedPortAccess', 'net::ERR_UNSAFE_PORT'],
  ['netReset', 'net::ERR_CONNECTION_RESET'],
  ['netInterrupt', 'net::ERR_CONNECTION_CLOSED'],
  ['netOffline', 'net::ERR_INTERNET_DISCONNECTED'],
  ['proxyConnectFailure', 'net::ERR_PROXY_CONNECTION_FAILED'],
  ['proxyResolveFailure', 'net::ERR_PROXY_CONNECTION_FAILED'],
  ['redirectLoop', 'net::ERR_TOO_MANY_REDIRECTS'],
  ['nssBadCert', 'net::ERR_CERT_INVALID'],
  ['nssFailure2', 'net::ERR_SSL_PROTOCOL_ERROR'],
  ['unknownProtocolFound', 'net::ERR_UNKNOWN_URL_SCHEME'],
  ['malformedURI', 'net::ERR_INVALID_URL'],
  ['contentEncodingError', 'net::ERR_CONTENT_DECODING_FAILED'],
  ['corruptedContentErrorv2', 'net::ERR_INVALID_RESPONSE'],
]);

/** The net:: error an error page shows, or '' when url is no error page. */
export function errorPageText(url) {
  if (typeof url !== 'string' || !/^about:(neterror|certerror)\?/.test(url)) return '';
  const e = new URLSearchParams(url.slice(url.indexOf('?') + 1)).get('e') ?? '';
  return errorPages.get(e) ?? `net::ERR_FAILED (Firefox: ${e || 'an error page'})`;
}

export function isAbortError(error) {
  return netErrorText(error) === 'net::ERR_ABORTED';
}
