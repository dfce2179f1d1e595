// The toolbar popup: connection state, pairing with a code (for a browser
// without the native host), share/stop sharing for the current tab, the
// shared tab list and the management grant.

import { connectionText } from './lib/status.js';

const $ = (id) => document.getElementById(id);
let activeTabId = null;
let state = null;
let ticker = null;
let pairAsked = false;

async function ask(msg) {
  const answer = await chrome.runtime.sendMessage({ ...msg, tabId: msg.tabId ?? activeTabId });
  if (!answer || !answer.ok) throw new Error(answer?.error ?? 'the Reins worker did not answer');
  return answer.result;
}

function render() {
  if (!state) return;
  const skew = state.now - Date.now();
  const paint = () => {
    const el = $('status');
    const { text, kind } = connectionText(state.connection, Date.now() + skew);
    el.textContent = text;
    el.dataset.kind = kind;
  };
  paint();
  clearInterval(ticker);
  // Only the countdown needs a clock; everything else waits for the worker's news.
  if (state.connection.state === 'waiting') ticker = setInterval(paint, 1000);

  // Pairing: offered when the browser holds no link key, or on request.
  const link = state.link ?? {};
  $('pair').hidden = !(pairAsked || !link.paired || link.error);
  // A code being tried can be replaced by another one at any time.
  $('pair-go').textContent = link.pairing ? 'Pairing…' : 'Pair';
  const pairError = $('pair-error');
  pairError.textContent = link.error ? `Pairing failed: ${link.error}. Get a new code from the app.` : '';
  pairError.hidden = !link.error;

  const offer = $('offer');
  if (state.offer) {
    const from = state.offer.origin ? ` from ${state.offer.origin}` : '';
    offer.textContent = state.offer.forwarded
      ? `Pairing offer${from} waiting — approve it in the Reins app.`
      : `Pairing offer${from} will go to the Reins app once it is running.`;
    offer.hidden = false;
  } else {
    offer.hidden = true;
  }
  $('paused').hidden = !state.policy?.paused;

  const button = $('share');
  const reason = $('share-reason');
  const tab = state.activeTab;
  reason.hidden = true;
  if (!tab) {
    button.disabled = true;
    button.textContent = 'Share this tab';
  } else if (tab.shared) {
    button.disabled = false;
    button.textContent = 'Stop sharing';
  } else {
    button.textContent = 'Share this tab';
    button.disabled = Boolean(tab.unsupported);
    if (tab.unsupported) {
      reason.textContent = `This tab cannot be shared: ${tab.unsupported}.`;
      reason.hidden = false;
    }
  }

  const list = $('shared');
  list.replaceChildren();
  for (const t of state.sharedTabs) {
    const li = document.createElement('li');
    const b = document.createElement('button');
    b.type = 'button';
    b.className = 'link';
    b.title = t.url;
    b.textContent = (t.agent ? '🤖 ' : '') + (t.title || t.url || `tab ${t.id}`);
    b.addEventListener('click', () => ask({ type: 'focus', tabId: t.id }).catch(showError));
    li.append(b);
    if (t.attached) {
      const badge = document.createElement('span');
      badge.className = 'pill';
      badge.textContent = 'driven';
      li.append(badge);
    }
    list.append(li);
  }
  $('none').hidden = state.sharedTabs.length > 0;
  $('management-section').hidden = state.management;
}

function showError(err) {
  const el = $('share-reason');
  el.textContent = err.message;
  el.hidden = false;
}

async function refresh(type = 'popup.state') {
  try {
    state = await ask({ type });
    render();
  } catch (err) {
    $('status').textContent = `error: ${err.message}`;
    $('status').dataset.kind = 'error';
  }
}

$('share').addEventListener('click', async () => {
  if (!state?.activeTab) return;
  try {
    state = await ask({ type: 'share', shared: !state.activeTab.shared });
    render();
  } catch (err) {
    showError(err);
  }
});

$('management').addEventListener('click', async () => {
  // Must run in the click handler: permission prompts need a user gesture.
  try {
    await chrome.permissions.request({ permissions: ['management'] });
  } catch (err) {
    showError(err);
  }
  refresh();
});

$('pair').addEventListener('submit', async (e) => {
  e.preventDefault();
  const el = $('pair-error');
  try {
    state = await ask({ type: 'pair.code', code: $('pair-code').value });
    $('pair-code').value = '';
    render();
  } catch (err) {
    el.textContent = err.message;
    el.hidden = false;
  }
});

$('pair-show').addEventListener('click', (e) => {
  e.preventDefault();
  pairAsked = true;
  render();
  $('pair-code').focus();
});

$('options').addEventListener('click', (e) => {
  e.preventDefault();
  chrome.runtime.openOptionsPage();
});

$('reconnect').addEventListener('click', (e) => {
  e.preventDefault();
  refresh('reconnect');
});

chrome.runtime.onMessage.addListener((msg) => {
  if (msg && msg.type === 'reins.changed') refresh();
});

const [tab] = await chrome.tabs.query({ active: true, currentWindow: true });
activeTabId = tab?.id ?? null;
refresh('popup.opened');
