import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { ISOLATED_FILE, CONSOLE_FILE } from '../lib/cdp-firefox.js';

const root = new URL('../', import.meta.url);
const manifest = JSON.parse(readFileSync(new URL('manifest.json', root), 'utf8'));

const firefoxOnly = (path) => /(^|\/)(cdp-)?firefox[-.]/.test(path) || /background-firefox/.test(path);

/** The source without comments, so prose about imports is not read as one. */
function code(path) {
  return readFileSync(new URL(path, root), 'utf8')
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/^\s*\/\/.*$/gm, '');
}

/** Every module path (relative to the extension) that entry loads, itself included, and the dynamic imports met. */
function importGraph(entry) {
  const seen = new Set();
  const dynamic = [];
  const visit = (path) => {
    if (seen.has(path)) return;
    seen.add(path);
    const src = code(path);
    const specs = [
      ...[...src.matchAll(/^\s*(?:import|export)\b[^;'"]*?\bfrom\s*['"]([^'"]+)['"]/gm)].map((m) => m[1]),
      ...[...src.matchAll(/^\s*import\s*['"]([^'"]+)['"]/gm)].map((m) => m[1]),
    ];
    for (const m of src.matchAll(/\bimport\s*\(\s*([^)]*)\)/g)) dynamic.push(`${path}: import(${m[1]})`);
    for (const spec of specs) {
      assert.ok(spec.startsWith('./') || spec.startsWith('../'), `${path} imports ${spec}: the extension has no bare modules`);
      visit(new URL(spec, new URL(path, root)).pathname.slice(root.pathname.length));
    }
  };
  visit(entry);
  return { modules: [...seen].sort(), dynamic };
}

test('the Chromium worker never loads a Firefox module', () => {
  assert.equal(manifest.background.service_worker, 'background.js');
  const { modules, dynamic } = importGraph(manifest.background.service_worker);
  // The walk sees the whole service: a walker that stopped early would pass.
  for (const m of ['lib/service.js', 'lib/core.js', 'lib/debugger.js', 'lib/cdp-chromium.js', 'lib/dispatcher.js']) {
    assert.ok(modules.includes(m), `the worker's graph lacks ${m}: ${modules.join(', ')}`);
  }
  assert.deepEqual(modules.filter(firefoxOnly), [], 'Firefox-only modules in the Chromium worker');
  // A service worker cannot import() at all; one would also hide a module from this walk.
  assert.deepEqual(dynamic, []);
});

test('the Firefox entry loads the adapter and every one of its domain modules', () => {
  const { modules, dynamic } = importGraph('background-firefox.js');
  assert.deepEqual(dynamic, [], 'listeners must be registered synchronously, so nothing is imported late');
  assert.ok(modules.includes('lib/service.js'));
  const lib = readdirSync(new URL('lib/', root)).map((f) => `lib/${f}`);
  // The page-side scripts are injected by path, never imported.
  const injected = [ISOLATED_FILE, CONSOLE_FILE];
  for (const f of lib.filter(firefoxOnly)) {
    if (injected.includes(f)) assert.ok(!modules.includes(f), `${f} runs in pages, not in the background`);
    else assert.ok(modules.includes(f), `${f} is loaded by neither browser: dead, or its import is missing`);
  }
});

test('a Firefox module is recognised as one', () => {
  for (const p of ['lib/cdp-firefox.js', 'lib/cdp-firefox-page.js', 'lib/firefox-main.js', 'background-firefox.js']) assert.ok(firefoxOnly(p), p);
  for (const p of ['lib/cdp-chromium.js', 'lib/service.js', 'background.js']) assert.ok(!firefoxOnly(p), p);
});
