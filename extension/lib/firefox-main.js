// Functions the Firefox adapter runs in a page's MAIN world through
// scripting.executeScript({func}). Firefox sends each one to the page as
// source text, so every function here is self-contained: it may use only
// its parameters and the page's globals, never anything else of this module.

/**
 * Runtime.evaluate, Runtime.callFunctionOn and Runtime.awaitPromise in the
 * page's own world. Results that are objects stay in a per-page store under
 * storeKey (a non-enumerable window property the adapter names at random) so
 * a later call can use them by objectId, as CDP allows.
 *
 * @param {'evaluate'|'call'|'await'|'release'} op
 * @param {object} o
 */
export async function mainWorld(op, o) {
  const store = (() => {
    let s = window[o.storeKey];
    if (!s) {
      s = { next: 1, objects: new Map() };
      Object.defineProperty(window, o.storeKey, { value: s, enumerable: false, configurable: true });
    }
    return s;
  })();

  const thrownOf = (e) => {
    if (e instanceof Error || (e && typeof e === 'object' && typeof e.message === 'string' && typeof e.name === 'string')) {
      return {
        isError: true,
        name: String(e.name),
        message: String(e.message),
        stack: typeof e.stack === 'string' ? e.stack : '',
        fileName: typeof e.fileName === 'string' ? e.fileName : '',
        lineNumber: typeof e.lineNumber === 'number' ? e.lineNumber : 0,
        columnNumber: typeof e.columnNumber === 'number' ? e.columnNumber : 0,
      };
    }
    let type = typeof e;
    let value = e;
    if (type === 'bigint' || type === 'symbol' || type === 'function') {
      value = String(e);
      type = 'string';
    } else if (type === 'object' && e !== null) {
      try {
        value = JSON.parse(JSON.stringify(e));
      } catch {
        value = String(e);
      }
    }
    return { type, value };
  };

  const describe = (v) => {
    try {
      if (Array.isArray(v)) return `Array(${v.length})`;
      if (typeof Node !== 'undefined' && v instanceof Node) {
        if (v.nodeType === 1) return v.localName + (v.id ? '#' + v.id : '') + (v.classList && v.classList.length ? '.' + [...v.classList].join('.') : '');
        return v.nodeName;
      }
      if (v instanceof Error) return `${v.name}: ${v.message}`;
      if (v instanceof Date) return v.toString();
      if (v instanceof RegExp) return v.toString();
      if (v instanceof Map) return `Map(${v.size})`;
      if (v instanceof Set) return `Set(${v.size})`;
      if (typeof v === 'function') return String(v).slice(0, 1000);
      const c = v && v.constructor && v.constructor.name;
      return c || 'Object';
    } catch {
      return 'Object';
    }
  };

  const subtypeOf = (v) => {
    if (Array.isArray(v)) return 'array';
    if (typeof Node !== 'undefined' && v instanceof Node) return 'node';
    if (v instanceof Error) return 'error';
    if (v instanceof Date) return 'date';
    if (v instanceof RegExp) return 'regexp';
    if (v instanceof Map) return 'map';
    if (v instanceof Set) return 'set';
    if (v instanceof Promise) return 'promise';
    return undefined;
  };

  const remote = (v, byValue, group) => {
    const t = typeof v;
    if (t === 'undefined') return { type: 'undefined' };
    if (v === null) return { type: 'object', subtype: 'null', value: null };
    if (t === 'boolean' || t === 'string') return { type: t, value: v };
    if (t === 'number') {
      if (Number.isNaN(v) || v === Infinity || v === -Infinity || Object.is(v, -0)) {
        const u = Object.is(v, -0) ? '-0' : String(v);
        return { type: 'number', unserializableValue: u, description: u };
      }
      return { type: 'number', value: v, description: String(v) };
    }
    if (t === 'bigint') return { type: 'bigint', unserializableValue: v + 'n', description: v + 'n' };
    if (t === 'symbol') return { type: 'symbol', description: v.toString() };
    const out = { type: t === 'function' ? 'function' : 'object', className: describe(v).split(/[(:#. ]/)[0] || 'Object', description: describe(v) };
    const sub = subtypeOf(v);
    if (sub && t !== 'function') out.subtype = sub;
    if (byValue) {
      try {
        const json = JSON.stringify(v);
        out.value = json === undefined ? undefined : JSON.parse(json);
      } catch {
        out.value = undefined;
      }
      return out;
    }
    const id = store.next++;
    store.objects.set(id, { value: v, group: group || '' });
    out.objectId = String(id);
    return out;
  };

  // Only awaitPromise settles a promise; without it the promise is held like
  // any object, as in CDP, for a later Runtime.awaitPromise. The value
  // travels boxed: an async function would adopt a promise it returned.
  const settle = async (v) => {
    if (!o.awaitPromise || !v || typeof v.then !== 'function') return { v };
    if (!(o.timeout > 0)) return { v: await v };
    let timer;
    try {
      return {
        v: await Promise.race([
          v,
          new Promise((_, reject) => {
            timer = setTimeout(() => reject(new Error('Execution was terminated: the script ran past its timeout')), o.timeout);
          }),
        ]),
      };
    } finally {
      clearTimeout(timer);
    }
  };

  // Indirect eval runs in global scope, like a DevTools console expression.
  const geval = (src) => (0, eval)(src);

  if (op === 'release') {
    if (o.objectId) store.objects.delete(Number(o.objectId));
    if (o.group) for (const [id, e] of store.objects) if (e.group === o.group) store.objects.delete(id);
    if (o.all) store.objects.clear();
    return { ok: true };
  }

  let value;
  let group = o.objectGroup;
  if (op === 'await') {
    // What the promise settles to joins the promise's group, as in CDP.
    const held = store.objects.get(Number(o.objectId));
    if (!held || !held.value || typeof held.value.then !== 'function') return { missing: true };
    value = held.value;
    group = held.group;
  }
  try {
    if (op === 'await') {
      value = await value;
    } else if (op === 'evaluate') {
      try {
        value = geval(o.expression);
      } catch (e) {
        // replMode allows top-level await and return, which plain eval does
        // not; such scripts are retried as the body of an async function.
        const syntax = e instanceof SyntaxError && /await|return|async/i.test(String(e.message));
        if (!o.replMode || !syntax) throw e;
        try {
          value = geval('(async () => (\n' + o.expression + '\n))()');
        } catch {
          value = geval('(async () => {\n' + o.expression + '\n})()');
        }
      }
    } else if (op === 'call') {
      const self = o.objectId ? store.objects.get(Number(o.objectId)) : undefined;
      if (o.objectId && !self) throw new Error('Could not find object with given id');
      const args = (o.args || []).map((a) => {
        if (a && a.objectId) {
          const e = store.objects.get(Number(a.objectId));
          if (!e) throw new Error('Could not find object with given id');
          return e.value;
        }
        return a ? a.value : undefined;
      });
      const fn = geval('(' + o.functionDeclaration + '\n)');
      if (typeof fn !== 'function') throw new TypeError('functionDeclaration is not a function');
      value = fn.apply(self ? self.value : undefined, args);
    } else {
      throw new Error('unknown operation ' + op);
    }
    value = (await settle(value)).v;
  } catch (e) {
    return { thrown: thrownOf(e) };
  }
  return { result: remote(value, o.returnByValue, group) };
}
