// Requests from the companion: one table, sorted by method name, each
// handler checking its params and the tab's sharing on its first lines.

import { WireError, Codes, badParams, resultFrame, errorFrame } from './frames.js';
import { cdpNavigationRefusal, isNewTab, navigationRefusal, unsupportedReason } from './urlrules.js';
import { tabRestriction, tabUrl } from './tabinfo.js';
import { graphProblem } from './graph.js';
import { extensionHandlers } from './extensions.js';
import { downloadHandlers } from './downloads.js';
import { DEFAULT_GROUP } from './settings.js';
import { MAX_OWNER, validOwner } from './sharing.js';

const PREPARE_TIMEOUT_MS = 10_000;
const MAX_GROUP_TITLE = 100;

function obj(params) {
  if (params === undefined || params === null) return {};
  if (typeof params !== 'object' || Array.isArray(params)) throw badParams('params must be an object');
  return params;
}

function tabIdOf(params) {
  const { tabId } = obj(params);
  if (!Number.isSafeInteger(tabId)) throw badParams('tabId must be an integer');
  return tabId;
}

function optionalBool(v, name) {
  if (v === undefined) return undefined;
  if (typeof v !== 'boolean') throw badParams(`${name} must be a boolean`);
  return v;
}

function optionalSize(v, name) {
  if (v === undefined || v === null || v === 0) return undefined;
  if (!Number.isSafeInteger(v) || v < 1 || v > 100_000) throw badParams(`${name} must be a positive integer`);
  return v;
}

/**
 * @param {import('./core.js').Core} core
 * @returns {Record<string, (params:any) => Promise<any>>}
 */
export function createHandlers(core) {
  const chrome = core.chrome;
  const ctx = {
    chrome,
    timers: core.timers,
    urlSupported: (u) => unsupportedReason(u, core.engine) === '',
  };
  const ext = (name) => (params) => extensionHandlers[name](obj(params), ctx);
  const downloads = downloadHandlers(chrome, core.timers);

  return {
    async cdp(params) {
      const p = obj(params);
      const tabId = tabIdOf(p);
      if (typeof p.method !== 'string' || p.method === '') throw badParams('method must be a non-empty string');
      if (p.params !== undefined && p.params !== null && (typeof p.params !== 'object' || Array.isArray(p.params))) {
        throw badParams('params must be an object');
      }
      if (p.sessionId !== undefined && p.sessionId !== null && typeof p.sessionId !== 'string') {
        throw badParams('sessionId must be a string');
      }
      // Sharing is re-checked on every call: the person may have stopped
      // sharing since the companion last looked.
      const tab = await core.sharedTab(tabId);
      const reason = tabRestriction(tab, core.engine);
      if (reason !== '') throw new WireError(Codes.restrictedUrl, `tab ${tabId} cannot be automated: ${reason}`);
      // Where the command would take the tab, checked again here (defence in depth).
      const refusal = cdpNavigationRefusal(p.method, p.params, core.engine);
      if (refusal !== '') throw new WireError(Codes.restrictedUrl, `${p.method} refused: ${refusal}`);
      return core.debugger.call(tabId, p.method, p.params ?? {}, p.sessionId || undefined);
    },

    'downloads.list': downloads['downloads.list'],
    'downloads.wait': downloads['downloads.wait'],

    'extensions.info': ext('extensions.info'),
    'extensions.list': ext('extensions.list'),
    'extensions.message': ext('extensions.message'),
    'extensions.options': ext('extensions.options'),
    'extensions.setEnabled': ext('extensions.setEnabled'),
    'extensions.uninstall': ext('extensions.uninstall'),

    async 'graph.state'(params) {
      if (!core.options.graph) return { received: false };
      const problem = graphProblem(params);
      if (problem !== '') throw badParams(problem);
      await chrome.storage.session.set({ graph: params });
      core.onStateChange();
      return { received: true };
    },

    async 'tabs.activate'(params) {
      // Any tab: bringing a tab to the front reads and changes nothing in
      // it, and the dashboard uses it to show the person a tab.
      const tab = await core.getTab(tabIdOf(params));
      await chrome.windows.update(tab.windowId, { focused: true });
      const updated = await chrome.tabs.update(tab.id, { active: true });
      return core.info(updated ?? tab);
    },

    async 'tabs.close'(params) {
      const tab = await core.sharedTab(tabIdOf(params));
      await chrome.tabs.remove(tab.id);
      return { closed: true };
    },

    async 'tabs.create'(params) {
      const p = obj(params);
      const url = p.url === undefined || p.url === '' ? 'about:blank' : p.url;
      if (typeof url !== 'string') throw badParams('url must be a string');
      const reason = navigationRefusal(url, core.engine);
      if (reason !== '') throw new WireError(Codes.restrictedUrl, `cannot open ${url}: ${reason}`);
      const active = optionalBool(p.active, 'active') ?? true;
      const group = p.group === undefined || p.group === '' ? DEFAULT_GROUP : p.group;
      if (typeof group !== 'string' || group.length > MAX_GROUP_TITLE) {
        throw badParams(`group must be a string of at most ${MAX_GROUP_TITLE} characters`);
      }
      // The principal the tab is for (Reins addition). Kept with the tab
      // and reported in every listing, so it outlives this connection.
      const owner = p.owner === undefined || p.owner === '' ? '' : p.owner;
      if (owner !== '' && !validOwner(owner)) throw badParams(`owner must be a string of at most ${MAX_OWNER} characters`);
      let tab;
      try {
        tab = await chrome.tabs.create({ url, active });
      } catch (err) {
        // With every window closed (macOS keeps running) there is no current window.
        const win = await chrome.windows.create({ url, focused: active });
        tab = win.tabs?.[0];
        if (!tab) throw new WireError(Codes.internal, `cannot open a tab: ${err?.message ?? err}`);
      }
      try {
        await core.share(tab.id, { agent: true, owner, group });
      } catch (err) {
        // A New Tab URL can land on a page that may not be shared (a
        // third-party New Tab page); an unshared agent tab would be litter.
        await chrome.tabs.remove(tab.id).catch(() => {});
        throw err;
      }
      return core.info(await core.getTab(tab.id));
    },

    async 'tabs.hold'(params) {
      const p = obj(params);
      const tabId = tabIdOf(p);
      if (typeof p.hold !== 'boolean') throw badParams('hold must be a boolean');
      await core.sharedTab(tabId);
      if (core.sharing.setHeld(tabId, p.hold)) core.persist();
      core.debugger.holdChanged(tabId);
      return { tabId, held: core.sharing.isHeld(tabId) };
    },

    async 'tabs.list'() {
      return core.listTabs();
    },

    async 'tabs.prepare'(params) {
      const tabId = tabIdOf(params);
      const tab = await core.sharedTab(tabId);
      if (!isNewTab(tabUrl(tab))) return core.info(tab);
      return core.info(await navigateAndWait(chrome, core.timers, tabId, 'about:blank'));
    },

    async 'tabs.share'(params) {
      const p = obj(params);
      const tabId = tabIdOf(p);
      if (typeof p.shared !== 'boolean') throw badParams('shared must be a boolean');
      if (p.shared) await core.share(tabId);
      else {
        await core.getTab(tabId);
        await core.unshare(tabId);
      }
      return core.info(await core.getTab(tabId));
    },

    async 'tools.catalog'(params) {
      const p = obj(params);
      if (!Array.isArray(p.tools)) throw badParams('tools must be an array');
      for (const t of p.tools) {
        if (!t || typeof t !== 'object' || typeof t.name !== 'string') throw badParams('every tool needs a name');
      }
      if (p.version !== undefined && typeof p.version !== 'string' && typeof p.version !== 'number') {
        throw badParams('version must be a string');
      }
      await chrome.storage.local.set({ toolsCatalog: { tools: p.tools, version: p.version ?? '' } });
      if (!core.haveCatalog) {
        core.haveCatalog = true;
        core.emit('tools.policy', core.toolsPolicy());
      }
      return { stored: true };
    },

    async 'window.size'(params) {
      const p = obj(params);
      const tab = await core.sharedTab(tabIdOf(p));
      const width = optionalSize(p.width, 'width');
      const height = optionalSize(p.height, 'height');
      let win;
      if (width !== undefined || height !== undefined) {
        const update = { state: 'normal' };
        if (width !== undefined) update.width = width;
        if (height !== undefined) update.height = height;
        win = await chrome.windows.update(tab.windowId, update);
      } else {
        win = await chrome.windows.get(tab.windowId);
      }
      return { width: win.width, height: win.height };
    },
  };
}

/** Navigates a tab and resolves with it once the new page has loaded. */
function navigateAndWait(chrome, timers, tabId, url) {
  return new Promise((resolve, reject) => {
    let done = false;
    const finish = (fn, value) => {
      if (done) return;
      done = true;
      timers.clearTimeout(timer);
      chrome.tabs.onUpdated.removeListener(onUpdated);
      chrome.tabs.onRemoved.removeListener(onRemoved);
      fn(value);
    };
    const onUpdated = (id, change, tab) => {
      if (id === tabId && change.status === 'complete' && tab.url === url) finish(resolve, tab);
    };
    const onRemoved = (id) => {
      if (id === tabId) finish(reject, new WireError(Codes.noSuchTab, `tab ${tabId} closed while loading`));
    };
    const timer = timers.setTimeout(
      () => finish(reject, new WireError(Codes.timeout, `tab ${tabId} did not finish loading ${url}`)),
      PREPARE_TIMEOUT_MS,
    );
    chrome.tabs.onUpdated.addListener(onUpdated);
    chrome.tabs.onRemoved.addListener(onRemoved);
    chrome.tabs
      .update(tabId, { url })
      .then((tab) => {
        // about:blank can finish before the listener sees it.
        if (tab && tab.url === url && tab.status === 'complete') finish(resolve, tab);
      })
      .catch((err) => finish(reject, new WireError(Codes.internal, `cannot navigate tab ${tabId}: ${err?.message ?? err}`)));
  });
}

/**
 * @param {import('./core.js').Core} core
 * @returns {{handle: (req: {id:number, method:string, params:any}) => Promise<object>, methods: string[]}}
 */
export function createDispatcher(core) {
  const handlers = createHandlers(core);
  return {
    methods: Object.keys(handlers),
    async handle(req) {
      try {
        await core.ready;
        const handler = Object.hasOwn(handlers, req.method) ? handlers[req.method] : null;
        if (!handler) throw new WireError(Codes.unknownMethod, `unknown method ${JSON.stringify(req.method)}`);
        return resultFrame(req.id, await handler(req.params));
      } catch (err) {
        if (!(err instanceof WireError)) core.log.warn('reins: request failed', req.method, err);
        return errorFrame(req.id, err);
      }
    },
  };
}
