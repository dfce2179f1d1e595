// Options: port, profile label, graph and overlay. Saving writes
// storage.local; the worker reconnects when port or profile change.

import { normalizeOptions, parsePort } from './lib/settings.js';

const $ = (id) => document.getElementById(id);

async function load() {
  const opts = normalizeOptions(await chrome.storage.local.get(['port', 'profile', 'graph', 'overlay']));
  $('port').value = opts.port === '' ? '' : String(opts.port);
  $('profile').value = opts.profile;
  $('graph').checked = opts.graph;
  $('overlay').checked = opts.overlay;
}

$('form').addEventListener('submit', async (e) => {
  e.preventDefault();
  const raw = $('port').value.trim();
  const port = parsePort(raw);
  if (raw !== '' && port === null) {
    $('saved').textContent = 'The port must be a number from 1 to 65535, or empty.';
    return;
  }
  await chrome.storage.local.set({
    port: port ?? '',
    profile: $('profile').value.trim(),
    graph: $('graph').checked,
    overlay: $('overlay').checked,
  });
  try {
    await chrome.runtime.sendMessage({ type: 'reconnect' });
    $('saved').textContent = 'Saved. Reconnecting…';
  } catch {
    $('saved').textContent = 'Saved.';
  }
});

load();
