// URL rules shared with the companion. This is a line-for-line mirror of
// companion/wire/urls.go, including the parts of Go's net/url.Parse that
// decide whether a URL parses and what its host and escaped path are, so
// that both sides refuse exactly the same tabs. Both are tested against
// companion/wire/testdata/url_rules.json.

const chromiumNewTabs = [
  'chrome://newtab',
  'chrome://new-tab-page',
  'chrome://new-tab-page-third-party',
  'chrome-search://local-ntp',
  'edge://newtab',
  'brave://newtab',
  'vivaldi://newtab',
  'opera://startpage',
];

const firefoxNewTabs = ['about:newtab', 'about:home', 'about:privatebrowsing'];

const chromiumInternalSchemes = new Set([
  'chrome', 'chrome-untrusted', 'chrome-search', 'devtools',
  'edge', 'brave', 'vivaldi', 'opera', 'view-source',
  'chrome-error', 'about',
]);

const extensionSchemes = new Set(['chrome-extension', 'moz-extension', 'extension']);

const webStores = [
  'chromewebstore.google.com',
  'chrome.google.com/webstore',
  'microsoftedge.microsoft.com/addons',
];

const mozillaProtected = new Set([
  'accounts-static.cdn.mozilla.net',
  'accounts.firefox.com',
  'addons.cdn.mozilla.net',
  'addons.mozilla.org',
  'api.accounts.firefox.com',
  'content.cdn.mozilla.net',
  'discovery.addons.mozilla.org',
  'install.mozilla.org',
  'oauth.accounts.firefox.com',
  'profile.accounts.firefox.com',
  'support.mozilla.org',
  'sync.services.mozilla.com',
]);

/** @param {string} url @returns {boolean} */
export function isNewTab(url) {
  const u = toBytes(trimSpace(String(url ?? '')));
  for (const p of [...chromiumNewTabs, ...firefoxNewTabs]) {
    if (hasPrefixFold(u, p)) {
      const rest = u.slice(p.length);
      if (rest === '' || rest[0] === '/' || rest[0] === '?' || rest[0] === '#') return true;
    }
  }
  return false;
}

/**
 * Why a tab at url cannot be automated on engine, or '' when it can.
 * New Tab pages and about:blank are supported: they can be navigated away from.
 * @param {string} url
 * @param {'chromium'|'firefox'} engine
 * @returns {string}
 */
export function unsupportedReason(url, engine) {
  const u = trimSpace(String(url ?? ''));
  if (u === '' || equalFoldASCIITarget(u, 'about:blank') || isNewTab(u)) return '';
  const parsed = goParse(toBytes(u));
  if (parsed === null || parsed.scheme === '') return 'unrecognized URL';
  const scheme = parsed.scheme.toLowerCase();
  if (extensionSchemes.has(scheme)) return 'extension pages cannot be automated';
  if (engine === 'firefox') {
    if (scheme !== 'http' && scheme !== 'https') return 'Firefox only automates http and https pages';
    if (mozillaProtected.has(goToLower(fromBytes(hostname(parsed.host))))) {
      return 'Firefox protects this Mozilla site from extensions';
    }
    return '';
  }
  if (chromiumInternalSchemes.has(scheme)) return 'browser-internal pages cannot be automated';
  const hostPath = goToLower(fromBytes(parsed.host + escapedPath(parsed)));
  for (const store of webStores) {
    if (hostPath === store || hostPath.startsWith(store + '/')) {
      return 'the browser forbids automating its extension store';
    }
  }
  return '';
}

/**
 * Why an agent may not open url on engine, or '' when it may. Where agents
 * go is an allowlist: http, https and about:blank. file: would read local
 * files (and file://host/share sends Windows credentials to that host), app
 * schemes such as vscode: hand the URL to local programs, and javascript:,
 * data: and blob: show content no site vouches for. Within http(s) the
 * unsupportedReason rules still apply. Mirrors NavigationRefusal in urls.go.
 * @param {string} url
 * @param {'chromium'|'firefox'} engine
 * @returns {string}
 */
export function navigationRefusal(url, engine) {
  const u = trimSpace(String(url ?? ''));
  if (equalFoldASCIITarget(u, 'about:blank')) return '';
  const parsed = goParse(toBytes(u));
  if (parsed === null || parsed.scheme === '') return 'unrecognized URL';
  if (parsed.scheme !== 'http' && parsed.scheme !== 'https') return 'agents may open only http, https and about:blank';
  if (parsed.host === '') return 'the URL names no host';
  return unsupportedReason(u, engine);
}

/** DevTools commands that load a URL the caller chose, and the param that carries it (cdpURLParams in urls.go). */
export const CDP_URL_PARAMS = Object.freeze({
  'Page.navigate': 'url',
  'Target.createTarget': 'url',
  'Network.loadNetworkResource': 'url',
});

/**
 * navigationRefusal for a raw DevTools command: why it would load a URL no
 * agent may open, or '' when it names no URL or an allowed one.
 * @param {string} method
 * @param {unknown} params the decoded params
 * @param {'chromium'|'firefox'} engine
 * @returns {string}
 */
export function cdpNavigationRefusal(method, params, engine) {
  if (!Object.hasOwn(CDP_URL_PARAMS, method)) return '';
  const field = CDP_URL_PARAMS[method];
  if (params === undefined || params === null) return '';
  if (typeof params !== 'object' || Array.isArray(params)) return `${method} params are not an object`;
  // No URL, nothing to load: the browser refuses the command itself.
  if (!Object.hasOwn(params, field)) return '';
  if (typeof params[field] !== 'string') return `${method} ${field} is not a string`;
  return navigationRefusal(params[field], engine);
}

// --- Go string semantics -------------------------------------------------
// Go works on UTF-8 bytes; these helpers hold them as "binary strings" whose
// char codes are the bytes, so byte offsets match Go's.

const encoder = new TextEncoder();
// ignoreBOM keeps a leading U+FEFF, which Go does not strip either.
const decoder = new TextDecoder('utf-8', { ignoreBOM: true });

function toBytes(s) {
  let out = '';
  for (const b of encoder.encode(s)) out += String.fromCharCode(b);
  return out;
}

function fromBytes(b) {
  const arr = new Uint8Array(b.length);
  for (let i = 0; i < b.length; i++) arr[i] = b.charCodeAt(i);
  return decoder.decode(arr);
}

// unicode.IsSpace, which differs from String.prototype.trim (U+0085 yes, U+FEFF no).
function isGoSpace(c) {
  switch (c) {
    case 0x09: case 0x0a: case 0x0b: case 0x0c: case 0x0d: case 0x20:
    case 0x85: case 0xa0: case 0x1680: case 0x2028: case 0x2029:
    case 0x202f: case 0x205f: case 0x3000:
      return true;
  }
  return c >= 0x2000 && c <= 0x200a;
}

function trimSpace(s) {
  let start = 0;
  let end = s.length;
  while (start < end && isGoSpace(s.charCodeAt(start))) start++;
  while (end > start && isGoSpace(s.charCodeAt(end - 1))) end--;
  return s.slice(start, end);
}

function lowerASCII(c) {
  return c >= 0x41 && c <= 0x5a ? c + 0x20 : c;
}

// strings.EqualFold against an ASCII target. Among non-ASCII runes only the
// Kelvin sign and the long s fold onto ASCII letters.
function equalFoldASCIITarget(s, target) {
  const runes = [...s];
  if (runes.length !== target.length) return false;
  for (let i = 0; i < runes.length; i++) {
    let c = runes[i].codePointAt(0);
    if (c === 0x212a) c = 0x6b;
    else if (c === 0x17f) c = 0x73;
    if (lowerASCII(c) !== lowerASCII(target.charCodeAt(i))) return false;
  }
  return true;
}

// hasPrefixFold in urls.go compares a byte slice of the same length as the
// ASCII prefix, so only ASCII bytes can match.
function hasPrefixFold(b, prefix) {
  if (b.length < prefix.length) return false;
  for (let i = 0; i < prefix.length; i++) {
    if (lowerASCII(b.charCodeAt(i)) !== lowerASCII(prefix.charCodeAt(i))) return false;
  }
  return true;
}

// strings.ToLower maps rune by rune; JavaScript's toLowerCase applies
// special casing that can turn one rune into two.
function goToLower(s) {
  let out = '';
  for (const r of s) {
    const cp = r.codePointAt(0);
    if (cp < 0x80) {
      out += String.fromCharCode(lowerASCII(cp));
      continue;
    }
    if (cp === 0x130) {
      out += 'i';
      continue;
    }
    const l = r.toLowerCase();
    out += [...l].length === 1 ? l : r;
  }
  return out;
}

// --- net/url.Parse ------------------------------------------------------

const encodePath = 1;
const encodeHost = 4;
const encodeZone = 8;
const encodeUserPassword = 16;
const encodeFragment = 64;

function isAlnum(c) {
  return (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a) || (c >= 0x30 && c <= 0x39);
}

function shouldEscape(c, mode) {
  if (isAlnum(c)) return false;
  const ch = String.fromCharCode(c);
  if (mode === encodeHost || mode === encodeZone) {
    if ('!$&\'()*+,;=:[]<>"'.includes(ch)) return false;
  }
  if ('-_.~'.includes(ch)) return false;
  if ('$&+,/:;=?@'.includes(ch)) {
    switch (mode) {
      case encodePath: return ch === '?';
      case encodeUserPassword: return ch === '@' || ch === '/' || ch === '?' || ch === ':';
      case encodeFragment: return false;
    }
  }
  if (mode === encodeFragment && '!()*'.includes(ch)) return false;
  return true;
}

function ishex(c) {
  return (c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x66) || (c >= 0x41 && c <= 0x46);
}

function unhex(c) {
  return 9 * (c >> 6) + (c & 15);
}

class ParseError extends Error {}

function unescape(s, mode) {
  let n = 0;
  for (let i = 0; i < s.length;) {
    const c = s.charCodeAt(i);
    if (c === 0x25) {
      n++;
      if (i + 2 >= s.length || !ishex(s.charCodeAt(i + 1)) || !ishex(s.charCodeAt(i + 2))) {
        throw new ParseError('invalid URL escape');
      }
      if (mode === encodeHost && unhex(s.charCodeAt(i + 1)) < 8 && s.slice(i, i + 3) !== '%25') {
        throw new ParseError('invalid URL escape');
      }
      if (mode === encodeZone) {
        const v = (unhex(s.charCodeAt(i + 1)) << 4) | unhex(s.charCodeAt(i + 2));
        if (s.slice(i, i + 3) !== '%25' && v !== 0x20 && shouldEscape(v, encodeHost)) {
          throw new ParseError('invalid URL escape');
        }
      }
      i += 3;
    } else {
      if ((mode === encodeHost || mode === encodeZone) && c < 0x80 && shouldEscape(c, mode)) {
        throw new ParseError('invalid character in host name');
      }
      i++;
    }
  }
  if (n === 0) return s;
  let t = '';
  for (let i = 0; i < s.length; i++) {
    if (s.charCodeAt(i) === 0x25) {
      t += String.fromCharCode((unhex(s.charCodeAt(i + 1)) << 4) | unhex(s.charCodeAt(i + 2)));
      i += 2;
    } else {
      t += s[i];
    }
  }
  return t;
}

const upperhex = '0123456789ABCDEF';

function escape(s, mode) {
  let t = '';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    t += shouldEscape(c, mode) ? '%' + upperhex[c >> 4] + upperhex[c & 15] : s[i];
  }
  return t;
}

function validEncoded(s, mode) {
  for (let i = 0; i < s.length; i++) {
    const ch = s[i];
    if ('!$&\'()*+,;=:@[]%'.includes(ch)) continue;
    if (shouldEscape(s.charCodeAt(i), mode)) return false;
  }
  return true;
}

function validOptionalPort(port) {
  if (port === '') return true;
  if (port[0] !== ':') return false;
  for (let i = 1; i < port.length; i++) {
    const c = port.charCodeAt(i);
    if (c < 0x30 || c > 0x39) return false;
  }
  return true;
}

function validUserinfo(s) {
  // Go ranges over runes here; any non-ASCII rune is invalid, as is any
  // non-ASCII byte of it, so a byte-wise check is equivalent.
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (isAlnum(c)) continue;
    if ('-._:~!$&\'()*+,;=%@'.includes(s[i])) continue;
    return false;
  }
  return true;
}

function getScheme(raw) {
  for (let i = 0; i < raw.length; i++) {
    const c = raw.charCodeAt(i);
    if ((c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a)) continue;
    if ((c >= 0x30 && c <= 0x39) || c === 0x2b || c === 0x2d || c === 0x2e) {
      if (i === 0) return ['', raw];
      continue;
    }
    if (c === 0x3a) {
      if (i === 0) throw new ParseError('missing protocol scheme');
      return [raw.slice(0, i), raw.slice(i + 1)];
    }
    return ['', raw];
  }
  return ['', raw];
}

function parseHost(scheme, host) {
  const open = host.lastIndexOf('[');
  if (open > 0) throw new ParseError('invalid IP-literal');
  if (open === 0) {
    const close = host.lastIndexOf(']');
    if (close < 0) throw new ParseError("missing ']' in host");
    const colonPort = host.slice(close + 1);
    if (!validOptionalPort(colonPort)) throw new ParseError('invalid port');
    const unescapedColonPort = unescape(colonPort, encodeHost);
    const name = host.slice(1, close);
    const zoneIdx = name.indexOf('%25');
    let unescapedName;
    if (zoneIdx >= 0) {
      unescapedName = unescape(name.slice(0, zoneIdx), encodeHost) + unescape(name.slice(zoneIdx), encodeZone);
    } else {
      unescapedName = unescape(name, encodeHost);
    }
    if (!isIPv6Literal(unescapedName)) throw new ParseError('invalid host');
    return '[' + unescapedName + ']' + unescapedColonPort;
  }
  let i = host.indexOf(':');
  if (i !== -1) {
    const last = host.lastIndexOf(':');
    // Go is strict about extra colons only for http(s) hosts.
    if (last !== i && scheme !== 'http' && scheme !== 'https') i = last;
    if (!validOptionalPort(host.slice(i))) throw new ParseError('invalid port');
  }
  return unescape(host, encodeHost);
}

// netip.ParseAddr accepting an IPv6 address (optionally with a zone) and
// refusing IPv4, as Go requires inside brackets.
function isIPv6Literal(s) {
  let addr = s;
  const pct = addr.indexOf('%');
  if (pct >= 0) {
    if (pct === addr.length - 1) return false;
    addr = addr.slice(0, pct);
  }
  if (!addr.includes(':')) return false;
  let groups = 0;
  let ellipsis = false;
  let i = 0;
  if (addr.startsWith('::')) {
    ellipsis = true;
    i = 2;
    if (i === addr.length) return true;
  }
  while (i < addr.length) {
    let j = i;
    while (j < addr.length && j - i < 5 && ishex(addr.charCodeAt(j))) j++;
    if (j === i || j - i > 4) {
      return false;
    }
    if (j < addr.length && addr[j] === '.') {
      if (groups > 6) return false;
      if (!isIPv4(addr.slice(i))) return false;
      groups += 2;
      i = addr.length;
      break;
    }
    groups++;
    i = j;
    if (i === addr.length) break;
    if (addr[i] !== ':' || i + 1 === addr.length) return false;
    i++;
    if (addr[i] === ':') {
      if (ellipsis) return false;
      ellipsis = true;
      i++;
      if (i === addr.length) break;
    }
    if (groups > 8) return false;
  }
  return ellipsis ? groups < 8 : groups === 8;
}

function isIPv4(s) {
  const parts = s.split('.');
  if (parts.length !== 4) return false;
  for (const p of parts) {
    if (!/^[0-9]{1,3}$/.test(p)) return false;
    if (p.length > 1 && p[0] === '0') return false;
    if (Number(p) > 255) return false;
  }
  return true;
}

function goParse(raw) {
  try {
    const hash = raw.indexOf('#');
    const u = hash >= 0 ? raw.slice(0, hash) : raw;
    const parsed = parse(u);
    if (hash >= 0) unescape(raw.slice(hash + 1), encodeFragment);
    return parsed;
  } catch (err) {
    if (err instanceof ParseError) return null;
    throw err;
  }
}

function parse(raw) {
  for (let i = 0; i < raw.length; i++) {
    const b = raw.charCodeAt(i);
    if (b < 0x20 || b === 0x7f) throw new ParseError('invalid control character in URL');
  }
  const url = { scheme: '', host: '', rawPath: '' };
  if (raw === '*') return url;
  let [scheme, rest] = getScheme(raw);
  url.scheme = scheme.toLowerCase();
  if (rest.endsWith('?') && rest.indexOf('?') === rest.length - 1) {
    rest = rest.slice(0, -1);
  } else {
    const q = rest.indexOf('?');
    if (q >= 0) rest = rest.slice(0, q);
  }
  if (!rest.startsWith('/')) {
    if (url.scheme !== '') return url; // opaque
    const slash = rest.indexOf('/');
    const segment = slash >= 0 ? rest.slice(0, slash) : rest;
    if (segment.includes(':')) throw new ParseError('first path segment in URL cannot contain colon');
  }
  if ((url.scheme !== '' || !rest.startsWith('///')) && rest.startsWith('//')) {
    let authority = rest.slice(2);
    rest = '';
    const slash = authority.indexOf('/');
    if (slash >= 0) {
      rest = authority.slice(slash);
      authority = authority.slice(0, slash);
    }
    url.host = parseAuthority(url.scheme, authority);
  }
  unescape(rest, encodePath);
  url.rawPath = rest;
  return url;
}

function parseAuthority(scheme, authority) {
  const at = authority.lastIndexOf('@');
  const host = parseHost(scheme, at < 0 ? authority : authority.slice(at + 1));
  if (at < 0) return host;
  const userinfo = authority.slice(0, at);
  if (!validUserinfo(userinfo)) throw new ParseError('invalid userinfo');
  const colon = userinfo.indexOf(':');
  if (colon < 0) {
    unescape(userinfo, encodeUserPassword);
  } else {
    unescape(userinfo.slice(0, colon), encodeUserPassword);
    unescape(userinfo.slice(colon + 1), encodeUserPassword);
  }
  return host;
}

// URL.EscapedPath: the raw path when it is a valid encoding, otherwise Go's
// own escaping of the decoded path.
function escapedPath(parsed) {
  const raw = parsed.rawPath;
  const path = unescape(raw, encodePath);
  if (validEncoded(raw, encodePath)) return raw;
  if (path === '*') return '*';
  return escape(path, encodePath);
}

function hostname(host) {
  let h = host;
  const colon = h.lastIndexOf(':');
  if (colon !== -1 && validOptionalPort(h.slice(colon))) h = h.slice(0, colon);
  if (h.startsWith('[') && h.endsWith(']')) h = h.slice(1, -1);
  return h;
}
