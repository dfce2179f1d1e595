// Network.getCookies, setCookie and deleteCookies of the Firefox adapter,
// through browser.cookies in the tab's own cookie store (a container's or a
// private window's). Every command must name a URL or domain of the tab's
// own site, the same scope the companion keeps: an agent reads and changes
// the cookies its tab's page would carry, never the rest of the jar.

import { WireError, Codes, badParams } from './frames.js';

const sameSiteToCdp = { no_restriction: 'None', lax: 'Lax', strict: 'Strict' };
const sameSiteFromCdp = { None: 'no_restriction', Lax: 'lax', Strict: 'strict' };

/** The http(s) host of a URL, lowercased, or '' for anything else. */
export function hostOf(url) {
  try {
    const u = new URL(url);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.hostname.toLowerCase() : '';
  } catch {
    return '';
  }
}

/** Whether a cookie for domain is seen by host (RFC 6265 domain matching). */
export function domainMatches(host, domain) {
  const d = String(domain).replace(/^\./, '').toLowerCase();
  return host !== '' && d !== '' && (host === d || host.endsWith(`.${d}`));
}

/** Says why url is not on the tab's site, or ''. */
export function offSite(url, tabUrl) {
  const h = hostOf(url);
  if (h === '' || h !== hostOf(tabUrl)) return `${String(url).slice(0, 200)} is not on the tab's own site`;
  return '';
}

/** A browser.cookies.Cookie as the DevTools protocol's Network.Cookie. */
export function toCdpCookie(c) {
  return {
    name: c.name,
    value: c.value,
    domain: c.domain,
    path: c.path,
    expires: typeof c.expirationDate === 'number' ? c.expirationDate : -1,
    size: c.name.length + c.value.length,
    httpOnly: !!c.httpOnly,
    secure: !!c.secure,
    session: !!c.session,
    sameSite: sameSiteToCdp[c.sameSite],
  };
}

/** @param {import('./cdp-firefox.js').FirefoxShared} fx */
export function cookieMethods(fx) {
  const api = () => {
    if (!fx.browser.cookies) throw new WireError(Codes.unauthorized, 'this Firefox build gives Reins no cookies access');
    return fx.browser.cookies;
  };
  const tabOf = (tabId) => fx.browser.tabs.get(tabId);
  const check = (tab, p, method) => {
    if (typeof p.url === 'string' && p.url !== '') {
      const why = offSite(p.url, tab.url);
      if (why) throw new WireError(Codes.restrictedUrl, `${method}: ${why}`);
    } else if (typeof p.domain !== 'string' || p.domain === '') {
      throw badParams(`${method} needs a url of the tab's own site`);
    }
    if (typeof p.domain === 'string' && p.domain !== '' && !domainMatches(hostOf(tab.url), p.domain)) {
      throw new WireError(Codes.restrictedUrl, `${method}: domain ${p.domain.slice(0, 200)} is not one the tab's own site sees`);
    }
  };
  return {
    async 'Network.getCookies'(tabId, p) {
      const tab = await tabOf(tabId);
      if (!Array.isArray(p.urls) || p.urls.length === 0) throw badParams('Network.getCookies needs urls of the tab\'s own site');
      const seen = new Map();
      for (const url of p.urls) {
        const why = offSite(url, tab.url);
        if (why) throw new WireError(Codes.restrictedUrl, `Network.getCookies: ${why}`);
        for (const c of await api().getAll({ url, storeId: tab.cookieStoreId })) {
          seen.set(`${c.name}\u0000${c.domain}\u0000${c.path}`, toCdpCookie(c));
        }
      }
      return { cookies: [...seen.values()] };
    },

    async 'Network.setCookie'(tabId, p) {
      const tab = await tabOf(tabId);
      if (typeof p.name !== 'string' || typeof p.value !== 'string') throw badParams('Network.setCookie needs a name and a value');
      check(tab, p, 'Network.setCookie');
      const details = { url: p.url ?? `${new URL(tab.url).origin}/`, name: p.name, value: p.value, storeId: tab.cookieStoreId };
      if (typeof p.domain === 'string' && p.domain !== '') details.domain = p.domain;
      if (typeof p.path === 'string') details.path = p.path;
      if (typeof p.secure === 'boolean') details.secure = p.secure;
      if (typeof p.httpOnly === 'boolean') details.httpOnly = p.httpOnly;
      if (typeof p.expires === 'number' && p.expires > 0) details.expirationDate = p.expires;
      if (p.sameSite in sameSiteFromCdp) details.sameSite = sameSiteFromCdp[p.sameSite];
      const set = await api().set(details);
      return { success: !!set };
    },

    async 'Network.deleteCookies'(tabId, p) {
      const tab = await tabOf(tabId);
      if (typeof p.name !== 'string' || p.name === '') throw badParams('Network.deleteCookies needs a name');
      check(tab, p, 'Network.deleteCookies');
      const url = p.url ?? `${new URL(tab.url).origin}/`;
      const found = await api().getAll({ name: p.name, url, storeId: tab.cookieStoreId });
      for (const c of found) {
        if (typeof p.domain === 'string' && p.domain !== '' && c.domain !== p.domain) continue;
        if (typeof p.path === 'string' && p.path !== '' && c.path !== p.path) continue;
        const at = `${c.secure ? 'https' : 'http'}://${c.domain.replace(/^\./, '')}${c.path}`;
        await api().remove({ url: at, name: c.name, storeId: tab.cookieStoreId });
      }
      return {};
    },
  };
}
