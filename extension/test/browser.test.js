import { test } from 'node:test';
import assert from 'node:assert/strict';
import { detectBrowser } from '../lib/browser.js';

const b = (...names) => names.map((brand) => ({ brand, version: '120' }));
const chromeUA = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36';

test('browser names from brands', () => {
  assert.equal(detectBrowser({ brands: b('Not_A Brand', 'Chromium', 'Google Chrome'), userAgent: chromeUA }), 'Google Chrome');
  assert.equal(detectBrowser({ brands: b('Not_A Brand', 'Chromium'), userAgent: chromeUA }), 'Chromium');
  assert.equal(detectBrowser({ brands: b('Chromium', 'Microsoft Edge', 'Not_A Brand'), userAgent: chromeUA }), 'Microsoft Edge');
  assert.equal(detectBrowser({ brands: b('Brave', 'Chromium', 'Not_A Brand'), userAgent: chromeUA }), 'Brave');
  assert.equal(detectBrowser({ brands: b('Opera', 'Chromium', 'Not_A Brand'), userAgent: chromeUA }), 'Opera');
  assert.equal(detectBrowser({ brands: b('Chromium', 'Not_A Brand'), userAgent: chromeUA, isBrave: true }), 'Brave');
});

test('browser names from the user agent when brands say little', () => {
  assert.equal(detectBrowser({ userAgent: chromeUA + ' Edg/120.0.0.0' }), 'Microsoft Edge');
  assert.equal(detectBrowser({ userAgent: chromeUA + ' OPR/106.0.0.0' }), 'Opera');
  assert.equal(detectBrowser({ userAgent: chromeUA + ' Vivaldi/6.5' }), 'Vivaldi');
  assert.equal(detectBrowser({ brands: b('Chromium', 'Not_A Brand'), userAgent: chromeUA + ' Vivaldi/6.5' }), 'Vivaldi');
  assert.equal(detectBrowser({ userAgent: chromeUA }), 'Google Chrome');
  assert.equal(detectBrowser({}), 'Chromium');
});
