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
const netErrors = new Map([
  [2152398850, 'net::ERR_ABORTED'], // NS_BINDING_ABORTED
  [2152398861, 'net::ERR_CONNECTION_REFUSED'], // NS_ERROR_CONNECTION_REFUSED
  [2152398862, 'net::ERR_TIMED_OUT'], // NS_ERROR_NET_TIMEOUT
  [2152398868, 'net::ERR_CONNECTION_RESET'], // NS_ERROR_NET_RESET
  [2152398878, 'net::ERR_NAME_NOT_RESOLVED'], // NS_ERROR_UNKNOWN_HOST
  [2152398864, 'net::ERR_INTERNET_DISCONNECTED'], // NS_ERROR_OFFLINE
  [2152398919, 'net::ERR_UNSAFE_PORT'], // NS_ERROR_PORT_ACCESS_NOT_ALLOWED
  [2153390067, 'net::ERR_CERT_INVALID'], // SEC_ERROR_UNKNOWN_ISSUER
  [2152398890, 'net::ERR_PROXY_CONNECTION_FAILED'], // NS_ERROR_PROXY_CONNECTION_REFUSED
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
  if (m && netErrors.has(Number(m[1]))) return netErrors.get(Number(m[1]));
  for (const [name, net] of namedNetErrors) if (s.includes(name)) return net;
  return s === '' ? 'net::ERR_FAILED' : s;
}

export function isAbortError(error) {
  return netErrorText(error) === 'net::ERR_ABORTED';
}
