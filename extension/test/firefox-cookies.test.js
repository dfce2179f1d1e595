import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createFirefoxCdp } from '../lib/cdp-firefox.js';
import { domainMatches, offSite, toCdpCookie } from '../lib/firefox-cookies.js';
import { fakeFirefox } from './fakes.js';

const quiet = { warn() {} };

// A cookie jar with two sites, in the tab's container store and the default
// one, answering getAll the way Firefox does (by url, name and store).
function jar() {
  const cookies = [
    { name: 'sid', value: 'mine', domain: '127.0.0.1', path: '/', secure: false, httpOnly: true, session: true, hostOnly: true, storeId: 'firefox-container-1' },
    { name: 'pref', value: 'dark', domain: '127.0.0.1', path: '/app', secure: false, httpOnly: false, session: false, expirationDate: 2000000000, storeId: 'firefox-container-1' },
    { name: 'sid', value: 'bank-secret', domain: 'bank.test', path: '/', secure: true, httpOnly: true, session: true, storeId: 'firefox-container-1' },
    { name: 'sid', value: 'default-store', domain: '127.0.0.1', path: '/', secure: false, httpOnly: false, session: true, storeId: 'firefox-default' },
  ];
  const calls = [];
  const visible = (c, url) => {
    const u = new URL(url);
    return domainMatches(u.hostname, c.domain) && u.pathname.startsWith(c.path) && (!c.secure || u.protocol === 'https:');
  };
  return {
    cookies,
    calls,
    api: {
      async getAll(q) {
        calls.push(['getAll', q]);
        return cookies.filter((c) => c.storeId === q.storeId && (!q.url || visible(c, q.url)) && (!q.name || c.name === q.name));
      },
      async set(d) {
        calls.push(['set', d]);
        const c = { name: d.name, value: d.value, domain: d.domain ?? new URL(d.url).hostname, path: d.path ?? '/', storeId: d.storeId, session: !d.expirationDate };
        cookies.push(c);
        return c;
      },
      async remove(d) {
        calls.push(['remove', d]);
        const i = cookies.findIndex((c) => c.storeId === d.storeId && c.name === d.name && visible(c, d.url));
        if (i >= 0) cookies.splice(i, 1);
        return i >= 0 ? d : null;
      },
    },
  };
}

async function adapter() {
  const browser = fakeFirefox();
  const j = jar();
  browser.cookies = j.api;
  browser.tabs.get = async (id) => ({ id, url: 'http://127.0.0.1:9/app/page', windowId: 1, cookieStoreId: 'firefox-container-1' });
  const cdp = createFirefoxCdp(browser, { timers: globalThis, log: quiet, randomId: () => '00000000-0000-4000-8000-000000000001', fetch: async () => ({ ok: false }) });
  await cdp.attach(1);
  return { cdp, j };
}

test('Network.getCookies returns the tab site\'s cookies from the tab\'s own store', async () => {
  const { cdp } = await adapter();
  const { cookies } = await cdp.send(1, 'Network.getCookies', { urls: ['http://127.0.0.1:9/app/page'] });
  assert.deepEqual(cookies.map((c) => `${c.name}=${c.value}`).sort(), ['pref=dark', 'sid=mine']);
  const pref = cookies.find((c) => c.name === 'pref');
  assert.equal(pref.expires, 2000000000);
  assert.equal(pref.session, false);
});

// The attack: a command naming another site's URL, as a confused or hostile
// caller would send to read the bank's session cookie, is refused before
// the cookie store is asked.
test('Network.getCookies for another site is refused', async () => {
  const { cdp, j } = await adapter();
  for (const urls of [['https://bank.test/'], ['http://127.0.0.1:9/', 'https://bank.test/'], ['file:///etc/passwd']]) {
    await assert.rejects(cdp.send(1, 'Network.getCookies', { urls }), (err) => err.code === 'restricted_url', JSON.stringify(urls));
  }
  await assert.rejects(cdp.send(1, 'Network.getCookies', {}), (err) => err.code === 'bad_params');
  assert.ok(!j.calls.some(([, q]) => q.url?.includes('bank')), 'the store was asked for the other site');
});

test('Network.setCookie sets on the tab\'s site only', async () => {
  const { cdp, j } = await adapter();
  const res = await cdp.send(1, 'Network.setCookie', { name: 'seed', value: 'v1', url: 'http://127.0.0.1:9/', path: '/', httpOnly: false, expires: 1900000000 });
  assert.equal(res.success, true);
  const set = j.calls.find(([k]) => k === 'set')[1];
  assert.deepEqual(set, { url: 'http://127.0.0.1:9/', name: 'seed', value: 'v1', storeId: 'firefox-container-1', path: '/', httpOnly: false, expirationDate: 1900000000 });
  await assert.rejects(cdp.send(1, 'Network.setCookie', { name: 'x', value: 'y', url: 'https://bank.test/' }), (err) => err.code === 'restricted_url');
  await assert.rejects(cdp.send(1, 'Network.setCookie', { name: 'x', value: 'y', url: 'http://127.0.0.1:9/', domain: 'bank.test' }), (err) => err.code === 'restricted_url');
  await assert.rejects(cdp.send(1, 'Network.setCookie', { name: 'x', value: 'y' }), (err) => err.code === 'bad_params');
});

test('Network.deleteCookies removes the named cookie of the tab\'s site, not another site\'s', async () => {
  const { cdp, j } = await adapter();
  await assert.rejects(cdp.send(1, 'Network.deleteCookies', { name: 'sid', url: 'https://bank.test/' }), (err) => err.code === 'restricted_url');
  await cdp.send(1, 'Network.deleteCookies', { name: 'sid', url: 'http://127.0.0.1:9/', domain: '127.0.0.1', path: '/' });
  const left = j.cookies.map((c) => `${c.storeId}:${c.domain}:${c.name}`).sort();
  assert.deepEqual(left, ['firefox-container-1:127.0.0.1:pref', 'firefox-container-1:bank.test:sid', 'firefox-default:127.0.0.1:sid']);
});

test('cookie scope helpers', () => {
  assert.ok(domainMatches('a.example.com', '.example.com'));
  assert.ok(domainMatches('example.com', 'example.com'));
  assert.ok(!domainMatches('badexample.com', 'example.com'));
  assert.ok(!domainMatches('example.com', 'a.example.com'));
  assert.equal(offSite('http://127.0.0.1:1/x', 'http://127.0.0.1:9/'), '');
  assert.notEqual(offSite('http://localhost:9/', 'http://127.0.0.1:9/'), '');
  assert.equal(toCdpCookie({ name: 'a', value: 'b', domain: 'h', path: '/', sameSite: 'no_restriction', session: true }).sameSite, 'None');
});
