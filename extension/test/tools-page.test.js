import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import vm from 'node:vm';

// The tool engine's page helper (companion/tools/page.js, shipped to
// Firefox as lib/tools-page.js) refuses an action when the page's origin is
// not the one the engine recorded. The engine computes that origin with its
// Go originOf; both read origins.json, so the two cannot drift apart.
const cases = JSON.parse(readFileSync(new URL('../../companion/wire/testdata/origins.json', import.meta.url), 'utf8'));
const source = readFileSync(new URL('../../companion/tools/page.js', import.meta.url), 'utf8');

/** page.js installed in a page at href; nothing on the page, so actions past the guard fail for want of a target. */
function pageAt(href) {
  const g = vm.createContext({
    URL,
    location: { href },
    document: { title: 'T', elementFromPoint: () => null },
  });
  vm.runInContext(source, g, { filename: 'page.js' });
  return g.__reins;
}

/** dropMark checks the origin first; past it, the empty page answers bad_params. */
function drop(helper, expect) {
  return helper.call('dropMark', ['', 1, 1, 'token', expect]);
}

test('origins.json has enough cases', () => {
  assert.ok(cases.length >= 20, `only ${cases.length} cases`);
});

for (const c of cases) {
  test(`page.js origin of ${JSON.stringify(c.url)} is ${JSON.stringify(c.origin)}`, () => {
    const helper = pageAt(c.url);
    if (c.origin !== '') {
      const same = drop(helper, c.origin);
      assert.equal(same.code, 'bad_params', `refused on its own origin: ${same.err}`);
    }
    const other = drop(helper, c.origin === 'https://elsewhere.example' ? 'https://example.org' : 'https://elsewhere.example');
    assert.equal(other.code, 'navigated_away', `accepted another origin: ${JSON.stringify(other)}`);
  });
}
