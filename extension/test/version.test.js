import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';

const manifest = JSON.parse(readFileSync(new URL('../manifest.json', import.meta.url), 'utf8'));
const toml = readFileSync(new URL('../../FyneApp.toml', import.meta.url), 'utf8');

test('manifest version equals FyneApp.toml Version', () => {
  const m = toml.match(/^\s*Version\s*=\s*"([^"]+)"/m);
  assert.ok(m, 'no Version in FyneApp.toml');
  assert.equal(manifest.version, m[1]);
});

test('manifest pins the id and loads as an MV3 module worker', () => {
  assert.equal(manifest.manifest_version, 3);
  assert.equal(manifest.background.type, 'module');
  assert.match(manifest.key, /^MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAu3\+2oAoWmR99/);
  assert.deepEqual(manifest.optional_permissions, ['management']);
  assert.ok(!manifest.permissions.includes('management'));
  const cs = manifest.content_scripts[0];
  assert.equal(cs.all_frames, false);
  assert.equal(cs.run_at, 'document_start');
});

test('every file the manifest names exists', () => {
  const files = [
    manifest.background.service_worker,
    manifest.action.default_popup,
    manifest.options_ui.page,
    ...manifest.content_scripts.flatMap((c) => c.js),
    ...Object.values(manifest.icons),
    ...Object.values(manifest.action.default_icon),
  ];
  for (const f of files) assert.doesNotThrow(() => readFileSync(new URL(`../${f}`, import.meta.url)), f);
});
