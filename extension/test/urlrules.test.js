import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { unsupportedReason, isNewTab, navigationRefusal, cdpNavigationRefusal, CDP_URL_PARAMS } from '../lib/urlrules.js';

// The same file the Go side tests against, so the two cannot drift apart.
const rules = JSON.parse(
  readFileSync(new URL('../../companion/wire/testdata/url_rules.json', import.meta.url), 'utf8'),
);
const cases = rules.cases;

test('url_rules.json has enough cases', () => {
  assert.ok(cases.length >= 50, `only ${cases.length} cases`);
  assert.ok(rules.cdpCases.length >= 10, `only ${rules.cdpCases.length} cdp cases`);
});

for (const c of cases) {
  test(`url rule ${c.engine} ${JSON.stringify(c.url)}`, () => {
    const reason = unsupportedReason(c.url, c.engine);
    assert.equal(reason !== '', c.unsupported, `unsupportedReason = ${JSON.stringify(reason)}`);
    assert.equal(isNewTab(c.url), c.newTab);
    const refusal = navigationRefusal(c.url, c.engine);
    assert.equal(refusal === '', c.navigable, `navigationRefusal = ${JSON.stringify(refusal)}`);
  });
}

test('the cdp methods that load a url are the ones the companion checks', () => {
  assert.deepEqual({ ...CDP_URL_PARAMS }, rules.cdpURLParams);
});

for (const c of rules.cdpCases) {
  test(`cdp rule ${c.method} ${c.params}`, () => {
    // The extension sees params as the companion's frame decoded them.
    const reason = cdpNavigationRefusal(c.method, JSON.parse(c.params), 'chromium');
    assert.equal(reason !== '', c.refused, `cdpNavigationRefusal = ${JSON.stringify(reason)}`);
  });
}

test('go url parsing corner cases', () => {
  const chromium = (u) => unsupportedReason(u, 'chromium');
  assert.equal(chromium('https://exa mple.com/'), 'unrecognized URL');
  assert.equal(chromium('https://example.com/%zz'), 'unrecognized URL');
  assert.equal(chromium('https://example.com:80x/'), 'unrecognized URL');
  assert.equal(chromium('https://[::1]:8080/'), '');
  assert.equal(chromium('https://[1.2.3.4]/'), 'unrecognized URL');
  assert.equal(chromium('://x'), 'unrecognized URL');
  assert.equal(chromium('/relative/path'), 'unrecognized URL');
  assert.equal(chromium('https://example.com/\u0001'), 'unrecognized URL');
  assert.equal(chromium('  about:blank  '), '');
  assert.equal(chromium('ABOUT:BLANK'), '');
  assert.equal(chromium('HTTPS://ChromeWebStore.Google.com/detail'), 'the browser forbids automating its extension store');
  assert.equal(chromium('https://user:pw@chromewebstore.google.com/'), 'the browser forbids automating its extension store');
  assert.equal(chromium('https://chrome.google.com/webstorefront'), '');
  assert.equal(chromium('https://example.com/#%zz'), 'unrecognized URL');
  assert.equal(unsupportedReason('https://ADDONS.mozilla.org:443/x', 'firefox'), 'Firefox protects this Mozilla site from extensions');
  assert.equal(isNewTab('CHROME://NEWTAB?x=1'), true);
  assert.equal(isNewTab('chrome://newtab#x'), true);
  assert.equal(isNewTab(' chrome://newtab/ '), true);
});
