// Hand-rolled fakes of the chrome.* surface the worker uses, of the browser.*
// surface the Firefox adapter uses, and a manual clock. Test-only: nothing
// in the extension imports this.

export class FakeTimers {
  constructor() {
    this.now = 0;
    this.seq = 0;
    /** @type {Map<number, {at:number, fn:Function, every:number}>} */
    this.jobs = new Map();
    this.setTimeout = (fn, ms = 0) => this.add(fn, ms, 0);
    this.setInterval = (fn, ms = 0) => this.add(fn, ms, ms);
    this.clearTimeout = (id) => this.jobs.delete(id);
    this.clearInterval = (id) => this.jobs.delete(id);
  }

  add(fn, ms, every) {
    const id = ++this.seq;
    this.jobs.set(id, { at: this.now + ms, fn, every });
    return id;
  }

  /** Runs everything due within ms, in time order, letting promises settle between jobs. */
  async advance(ms) {
    const end = this.now + ms;
    for (;;) {
      await settle();
      let next = null;
      for (const [id, j] of this.jobs) if (j.at <= end && (!next || j.at < next[1].at)) next = [id, j];
      if (!next) break;
      const [id, job] = next;
      this.now = job.at;
      if (job.every > 0) job.at += job.every;
      else this.jobs.delete(id);
      job.fn();
    }
    this.now = end;
    await settle();
  }
}

export async function settle() {
  for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
}

/**
 * Waits, on the real clock, until cond holds: WebCrypto answers from a
 * thread pool, not within settle's turns.
 */
export async function until(cond, what, ms = 5000) {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 1));
  }
}

/** The link key the fake profile was paired with (base64 of 32 bytes). */
export const TEST_LINK_KEY = Buffer.alloc(32, 7).toString('base64');

function event() {
  const listeners = new Set();
  return {
    addListener: (fn) => listeners.add(fn),
    removeListener: (fn) => listeners.delete(fn),
    hasListener: (fn) => listeners.has(fn),
    fire: (...args) => [...listeners].map((fn) => fn(...args)),
    get size() {
      return listeners.size;
    },
  };
}

function area(onChanged, name) {
  const data = {};
  return {
    data,
    async get(keys) {
      const list = keys === undefined || keys === null ? Object.keys(data) : Array.isArray(keys) ? keys : [keys];
      const out = {};
      for (const k of list) if (k in data) out[k] = structuredClone(data[k]);
      return out;
    },
    async set(items) {
      const changes = {};
      for (const [k, v] of Object.entries(items)) {
        changes[k] = { oldValue: data[k], newValue: structuredClone(v) };
        data[k] = structuredClone(v);
      }
      onChanged.fire(changes, name);
    },
  };
}

/**
 * A browser with one window; tabs and debugger calls are recorded. Its
 * extension already holds the link key TEST_LINK_KEY unless linkKey says
 * otherwise (null: never paired).
 */
export function fakeChrome({ tabs = [], permissions = [], linkKey = TEST_LINK_KEY } = {}) {
  const calls = [];
  const state = {
    tabs: new Map(),
    groups: new Map(),
    nextTab: 100,
    nextGroup: 500,
    nextWindow: 900,
    attached: new Set(),
    granted: new Set(permissions),
    badge: '',
    cdpResults: new Map(),
  };
  for (const t of tabs) state.tabs.set(t.id, { windowId: 1, groupId: -1, title: '', status: 'complete', ...t });
  const onChanged = event();
  const tab = (id) => {
    const t = state.tabs.get(id);
    if (!t) throw new Error(`No tab with id: ${id}.`);
    return t;
  };

  const chrome = {
    _state: state,
    _calls: calls,
    runtime: {
      id: 'cahakjcjmollcmebjjnhhlhcdhipahla',
      getManifest: () => ({ version: '0.1.0' }),
      getURL: (p) => `chrome-extension://cahakjcjmollcmebjjnhhlhcdhipahla/${p}`,
      sendMessage: async (...args) => {
        calls.push(['runtime.sendMessage', ...args]);
        return undefined;
      },
      sendNativeMessage: async () => {
        throw new Error('Specified native messaging host not found.');
      },
      onMessage: event(),
      onConnect: event(),
    },
    storage: {
      onChanged,
      local: area(onChanged, 'local'),
      session: area(onChanged, 'session'),
    },
    tabs: {
      onCreated: event(),
      onUpdated: event(),
      onRemoved: event(),
      onAttached: event(),
      onDetached: event(),
      onReplaced: event(),
      async query() {
        return [...state.tabs.values()].map((t) => ({ ...t }));
      },
      async get(id) {
        return { ...tab(id) };
      },
      async create({ url, active }) {
        calls.push(['tabs.create', { url, active }]);
        const t = { id: state.nextTab++, url: '', pendingUrl: url, title: '', windowId: 1, groupId: -1, status: 'loading', active };
        state.tabs.set(t.id, t);
        return { ...t };
      },
      async update(id, props) {
        calls.push(['tabs.update', id, props]);
        const t = tab(id);
        if (props.url) Object.assign(t, { url: props.url, status: 'complete' });
        return { ...t };
      },
      async remove(id) {
        calls.push(['tabs.remove', id]);
        tab(id);
        state.tabs.delete(id);
        chrome.tabs.onRemoved.fire(id, { windowId: 1 });
      },
      async group({ tabIds, groupId, createProperties }) {
        calls.push(['tabs.group', { tabIds, groupId, createProperties }]);
        let gid = groupId;
        if (gid === undefined) {
          gid = state.nextGroup++;
          state.groups.set(gid, { id: gid, title: '', windowId: createProperties?.windowId ?? 1 });
        }
        for (const id of tabIds) tab(id).groupId = gid;
        return gid;
      },
      async ungroup(id) {
        calls.push(['tabs.ungroup', id]);
        tab(id).groupId = -1;
      },
      async sendMessage(id, msg) {
        calls.push(['tabs.sendMessage', id, msg]);
        throw new Error('Could not establish connection. Receiving end does not exist.');
      },
    },
    tabGroups: {
      async query({ windowId }) {
        return [...state.groups.values()].filter((g) => windowId === undefined || g.windowId === windowId);
      },
      async update(id, props) {
        calls.push(['tabGroups.update', id, props]);
        Object.assign(state.groups.get(id), props);
      },
      async get(id) {
        const g = state.groups.get(id);
        if (!g) throw new Error(`No group with id: ${id}.`);
        return { ...g };
      },
    },
    webNavigation: { onCreatedNavigationTarget: event() },
    windows: {
      async create(props) {
        calls.push(['windows.create', props]);
        const id = state.nextWindow++;
        const tabs = [];
        if (props.tabId !== undefined) {
          const t = tab(props.tabId);
          Object.assign(t, { windowId: id, groupId: -1, active: true });
          tabs.push({ ...t });
        }
        return { id, tabs };
      },
      async update(id, props) {
        calls.push(['windows.update', id, props]);
        return { id, width: props.width ?? 1200, height: props.height ?? 800 };
      },
      async get(id) {
        return { id, width: 1200, height: 800 };
      },
    },
    debugger: {
      onEvent: event(),
      onDetach: event(),
      async attach({ tabId }, version) {
        calls.push(['debugger.attach', tabId, version]);
        const t = tab(tabId);
        if (/^chrome:/.test(t.url)) throw new Error('Cannot access a chrome:// URL');
        if (state.attached.has(tabId)) throw new Error(`Another debugger is already attached to the tab with id: ${tabId}.`);
        state.attached.add(tabId);
      },
      async detach({ tabId }) {
        calls.push(['debugger.detach', tabId]);
        if (!state.attached.delete(tabId)) throw new Error(`Debugger is not attached to the tab with id: ${tabId}.`);
      },
      async sendCommand(target, method, params) {
        calls.push(['debugger.sendCommand', target, method, params]);
        if (!state.attached.has(target.tabId)) throw new Error(`Debugger is not attached to the tab with id: ${target.tabId}.`);
        if (state.cdpResults.has(method)) {
          const r = state.cdpResults.get(method);
          if (r instanceof Error) throw r;
          return r;
        }
        return {};
      },
      async getTargets() {
        return [...state.tabs.values()].map((t) => ({ tabId: t.id, attached: state.attached.has(t.id) }));
      },
    },
    permissions: {
      async contains({ permissions: wanted }) {
        return wanted.every((p) => state.granted.has(p));
      },
      onAdded: event(),
      onRemoved: event(),
    },
    downloads: {
      async search() {
        return [{ id: 1, filename: '/tmp/a.txt', state: 'complete' }];
      },
    },
    action: {
      async setBadgeText({ text }) {
        state.badge = text;
      },
      async setBadgeBackgroundColor() {},
    },
    alarms: {
      onAlarm: event(),
      create: (...args) => calls.push(['alarms.create', ...args]),
    },
  };
  if (linkKey) chrome.storage.local.data.linkKey = linkKey;
  return chrome;
}

/** The parts of Firefox's `browser` the Firefox adapter uses; executeScript answers from run(details). */
export function fakeFirefox({ run } = {}) {
  const calls = [];
  const session = {};
  return {
    _calls: calls,
    runtime: { id: 'reins@reins.dev', getURL: (p) => `moz-extension://u/${p}`, onMessage: event() },
    storage: {
      session: {
        async get(k) {
          return k in session ? { [k]: structuredClone(session[k]) } : {};
        },
        async set(items) {
          Object.assign(session, structuredClone(items));
        },
      },
    },
    tabs: {
      onRemoved: event(),
      onCreated: event(),
      async get(id) {
        if (id !== 1) throw new Error(`Invalid tab ID: ${id}`);
        return { id, url: 'http://127.0.0.1:9/', windowId: 1, active: true };
      },
      async update(id, props) {
        calls.push(['tabs.update', id, props]);
        return { id, windowId: 1, ...props };
      },
      async captureTab(id, opts) {
        calls.push(['captureTab', id, opts]);
        return 'data:image/png;base64,AAAA';
      },
    },
    scripting: {
      async executeScript(details) {
        calls.push(['executeScript', details]);
        return [{ frameId: 0, documentId: 'doc-1', ...(run ? run(details) : {}) }];
      },
    },
    webNavigation: Object.fromEntries(
      ['onBeforeNavigate', 'onCommitted', 'onDOMContentLoaded', 'onCompleted', 'onErrorOccurred', 'onReferenceFragmentUpdated', 'onHistoryStateUpdated', 'onCreatedNavigationTarget'].map((n) => [n, event()]),
    ),
    webRequest: Object.fromEntries(['onBeforeRequest', 'onBeforeRedirect', 'onResponseStarted', 'onCompleted', 'onErrorOccurred'].map((n) => [n, event()])),
    downloads: { onCreated: event(), onChanged: event() },
  };
}
