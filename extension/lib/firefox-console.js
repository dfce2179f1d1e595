// Console capture for the Firefox adapter, in a page's MAIN world. Firefox
// offers extensions no console API, so this wraps console.* and listens for
// uncaught errors. It runs at document_start on the origins of tabs whose
// console an agent reads (a registered content script), or is injected into
// the current document when capture starts.
//
// Records go out as "reins:console" events that the isolated-world relay
// (firefox-isolated.js) forwards to the adapter; the last records are kept
// and replayed when the relay asks ("reins:console-flush"), because the
// relay may arrive after the page's first scripts ran. A page can listen to
// or fake these events, but only about its own console, which it controls
// anyway.
//
// A classic script, once per document.

(() => {
  if (window.__reinsConsoleHook) return;
  const MAX = 200;
  const id = Math.random().toString(36).slice(2);
  Object.defineProperty(window, '__reinsConsoleHook', { value: id, enumerable: false });
  // Kept before the page can replace them.
  const CE = window.CustomEvent;
  const dispatch = window.dispatchEvent.bind(window);
  const addListener = window.addEventListener.bind(window);
  const stringify = JSON.stringify;
  const buffer = [];
  let seq = 0;

  const send = (rec) => {
    try {
      dispatch(new CE('reins:console', { detail: stringify(rec) }));
    } catch {
      // logging must never throw into the page
    }
  };
  const post = (rec) => {
    rec.hook = id;
    rec.seq = ++seq;
    buffer.push(rec);
    if (buffer.length > MAX) buffer.shift();
    send(rec);
  };
  addListener('reins:console-flush', () => {
    for (const rec of buffer) send(rec);
  });

  const lite = (v) => {
    const t = typeof v;
    if (t === 'undefined') return { type: 'undefined' };
    if (v === null) return { type: 'object', subtype: 'null', value: null };
    if (t === 'string' || t === 'boolean') return { type: t, value: v };
    if (t === 'number') {
      return Number.isFinite(v) && !Object.is(v, -0) ? { type: t, value: v } : { type: t, unserializableValue: Object.is(v, -0) ? '-0' : String(v), description: String(v) };
    }
    if (t === 'bigint' || t === 'symbol') return { type: t, description: String(v) };
    if (t === 'function') return { type: 'function', description: String(v).slice(0, 200) };
    let description;
    try {
      if (v instanceof Error) description = `${v.name}: ${v.message}`;
      else if (typeof Node !== 'undefined' && v instanceof Node) description = v.nodeType === 1 ? '<' + v.localName + (v.id ? ' id="' + v.id + '"' : '') + '>' : v.nodeName;
      else {
        description = stringify(v);
        if (description && description.length > 1000) description = description.slice(0, 1000) + '…';
      }
    } catch {
      description = Object.prototype.toString.call(v);
    }
    return { type: 'object', subtype: Array.isArray(v) ? 'array' : v instanceof Error ? 'error' : undefined, description };
  };

  // The page's call stack, innermost first: at most MAX_FRAMES frames.
  const MAX_FRAMES = 8;
  const where = () => {
    const stack = String(new Error().stack || '').split('\n');
    // [0] is where(), [1] the wrapper, [2] on the page's callers.
    const frames = [];
    for (const line of stack.slice(2)) {
      const m = /^(.*)@(.*):(\d+):(\d+)$/.exec(line);
      if (!m) continue;
      if (frames.length === MAX_FRAMES) break;
      frames.push({ functionName: m[1].slice(0, 200), url: m[2].slice(0, 2000), lineNumber: Number(m[3]) - 1, columnNumber: Number(m[4]) - 1 });
    }
    return frames.length ? { ...frames[0], frames } : null;
  };

  const types = { log: 'log', info: 'info', warn: 'warning', error: 'error', debug: 'debug', trace: 'trace', dir: 'dir', table: 'table', assert: 'assert' };
  for (const [name, type] of Object.entries(types)) {
    const orig = console[name];
    if (typeof orig !== 'function') continue;
    const wrapped = {
      [name](...args) {
        if (name !== 'assert' || !args[0]) {
          const shown = name === 'assert' ? ['Assertion failed:', ...args.slice(1)] : args;
          post({ kind: 'console', type, args: shown.map(lite), timestamp: Date.now(), loc: where() });
        }
        return orig.apply(this, args);
      },
    }[name];
    console[name] = wrapped;
  }

  const thrownOf = (err, message) =>
    err instanceof Error
      ? { isError: true, name: String(err.name), message: String(err.message), stack: String(err.stack || '') }
      : { type: 'string', value: err === undefined ? String(message) : typeof err === 'object' && err !== null ? stringify(err) ?? String(err) : String(err) };

  addListener(
    'error',
    (e) => {
      // Resource load errors reach window in the capture phase too.
      if (e.target && e.target !== window) return;
      post({ kind: 'exception', timestamp: Date.now(), thrown: thrownOf(e.error, e.message), url: e.filename, line: e.lineno, col: e.colno });
    },
    true,
  );
  addListener('unhandledrejection', (e) => {
    post({ kind: 'exception', promise: true, timestamp: Date.now(), thrown: thrownOf(e.reason, e.reason) });
  });
})();
