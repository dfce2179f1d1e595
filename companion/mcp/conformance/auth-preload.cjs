// Loaded into the conformance runner with `node --require`. The suite has
// no option for request headers, and /mcp refuses requests without an agent
// token, so this adds "Authorization: Bearer $REINS_TOKEN" to every request
// the runner sends to $REINS_MCP_URL's host: through fetch (the MCP SDK
// client and most scenarios) and through undici's global dispatcher (the
// scenarios that set Host and Origin by hand). Requests to other hosts are
// left alone, so the token never leaves 127.0.0.1.
'use strict';

const { createRequire } = require('node:module');
const path = require('node:path');

const token = process.env.REINS_TOKEN;
const target = process.env.REINS_MCP_URL && new URL(process.env.REINS_MCP_URL);
if (!token || !target) {
  throw new Error('auth-preload: REINS_TOKEN and REINS_MCP_URL must be set');
}
const auth = `Bearer ${token}`;

function sameHost(url) {
  try {
    return new URL(String(url)).host === target.host;
  } catch {
    return false;
  }
}

// undici passes headers as a plain object, a flat [k, v, k, v] array, an
// array of pairs, or an iterable of pairs.
function withAuth(headers) {
  if (headers == null) return { authorization: auth };
  if (Array.isArray(headers)) {
    const pairs = Array.isArray(headers[0]) ? headers.map((p) => [p[0], p[1]]) : [];
    if (!Array.isArray(headers[0])) {
      for (let i = 0; i < headers.length; i += 2) pairs.push([headers[i], headers[i + 1]]);
    }
    const kept = pairs.filter(([k]) => String(k).toLowerCase() !== 'authorization');
    return [...kept.flat(), 'authorization', auth];
  }
  if (typeof headers[Symbol.iterator] === 'function' && typeof headers !== 'string') {
    return withAuth([...headers]);
  }
  const out = {};
  for (const [k, v] of Object.entries(headers)) {
    if (k.toLowerCase() !== 'authorization') out[k] = v;
  }
  out.authorization = auth;
  return out;
}

const modules = process.env.REINS_CONFORMANCE_MODULES;
const requireFrom = createRequire(path.join(modules || process.cwd(), 'noop.js'));
const undici = requireFrom('undici');
const dispatcher = new undici.Agent().compose((dispatch) => (opts, handler) => {
  if (sameHost(opts.origin)) {
    opts = { ...opts, headers: withAuth(opts.headers) };
  }
  return dispatch(opts, handler);
});
undici.setGlobalDispatcher(dispatcher);

const realFetch = globalThis.fetch;
globalThis.fetch = function fetchWithAuth(input, init) {
  const url = typeof input === 'string' || input instanceof URL ? input : input.url;
  if (!sameHost(url)) return realFetch(input, init);
  const headers = new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined));
  headers.set('authorization', auth);
  return realFetch(input, { ...init, headers });
};
