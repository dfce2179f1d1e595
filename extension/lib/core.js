// The worker's state and the operations requests and UI share: sharing,
// grouping, tab listings, overlay and badge. chrome is injected so tests can
// drive it with a fake.

import { SharingState, validOwner } from './sharing.js';
import { DebuggerManager } from './debugger.js';
import { createChromiumCdp } from './cdp-chromium.js';
import { toTabInfo, tabRestriction } from './tabinfo.js';
import { WireError, Codes, eventFrame } from './frames.js';
import { DEFAULT_GROUP, normalizeOptions } from './settings.js';

const TABS_COALESCE_MS = 50;

export class Core {
  /**
   * @param {object} o
   * @param {any} o.chrome
   * @param {import('./cdp-chromium.js').CdpAdapter} [o.cdp]
   * @param {{setTimeout:Function, clearTimeout:Function}} [o.timers]
   * @param {number} [o.idleMs]
   * @param {{warn:Function}} [o.log]
   */
  constructor({ chrome, cdp, timers = globalThis, idleMs, log = console }) {
    this.chrome = chrome;
    this.timers = timers;
    this.log = log;
    this.cdp = cdp ?? createChromiumCdp(chrome);
    this.engine = this.cdp.engine;
    this.sharing = new SharingState();
    /** @type {Set<number>} tab groups this extension made or filled */
    this.groups = new Set();
    /**
     * @type {Map<number, string>} group → the principal whose tabs it holds.
     * Groups are matched by owner, never by title, so two agents that show
     * the same name never share a group.
     */
    this.groupOwners = new Map();
    this.options = normalizeOptions();
    /** @type {{paused:boolean, overlay:boolean, disabled?:string[]}|null} */
    this.policy = null;
    this.haveCatalog = false;
    /** @type {Set<number>} opened tabs being shared (tabOpened) */
    this.opening = new Set();
    /** Set by the service: delivers a frame to the companion if connected. */
    this.send = (_frame) => false;
    /** Set by the service: tells open extension pages that state changed. */
    this.onStateChange = () => {};
    this.tabsTimer = null;
    /**
     * @type {Map<number, any>} shared tabs as the browser last described
     * them; any tabs event for a tab drops its entry (forgetTab), so a
     * request on a tab that did not change needs no tabs.get.
     */
    this.tabCache = new Map();
    /** Counts forgetTab calls: a description read across one is not kept. */
    this.tabEvents = 0;
    this.groupLock = Promise.resolve();
    this.debugger = new DebuggerManager({
      cdp: this.cdp,
      sharing: () => this.sharing,
      changed: () => this.changed(),
      emit: (event, params) => this.emit(event, params),
      timers,
      idleMs,
    });
    /**
     * Settles once what storage holds is read (options, sharing): enough
     * for the link to the companion, which starts at once and need not wait
     * for the tab checks that complete ready.
     */
    this.stored = this.loadStored();
    this.ready = this.load();
  }

  async loadStored() {
    const chrome = this.chrome;
    const [session, local] = await Promise.all([
      chrome.storage.session.get(['sharing', 'groups', 'groupOwners', 'policy']),
      chrome.storage.local.get(['port', 'profile', 'graph', 'overlay', 'toolsCatalog']),
    ]);
    this.sharing = SharingState.from(session.sharing);
    if (Array.isArray(session.groups)) this.groups = new Set(session.groups.filter(Number.isSafeInteger));
    if (Array.isArray(session.groupOwners)) {
      for (const pair of session.groupOwners) {
        if (Array.isArray(pair) && Number.isSafeInteger(pair[0]) && validOwner(pair[1])) this.groupOwners.set(pair[0], pair[1]);
      }
    }
    if (session.policy && typeof session.policy === 'object') this.policy = session.policy;
    this.options = normalizeOptions(local);
    this.haveCatalog = Boolean(local.toolsCatalog);
  }

  async load() {
    await this.stored;
    // Tabs closed while the worker slept never reached onRemoved.
    const tabs = await this.chrome.tabs.query({});
    let dirty = this.sharing.retainOnly(tabs.map((t) => t.id));
    dirty = (await this.pruneGroups()) || dirty;
    try {
      const attachedNow = new Set(await this.cdp.attachedTabs());
      for (const id of [...this.sharing.attached]) {
        if (!attachedNow.has(id)) dirty = this.sharing.setAttached(id, false) || dirty;
      }
    } catch (err) {
      this.log.warn('reins: cannot list debugger targets', err);
    }
    if (dirty) this.persist();
    this.debugger.rearmAll();
    this.updateBadge();
  }

  persist() {
    this.chrome.storage.session
      .set({ sharing: this.sharing.toJSON(), groups: [...this.groups], groupOwners: [...this.groupOwners] })
      .catch((err) => this.log.warn('reins: cannot save sharing state', err));
  }

  /** Forgets groups that no longer exist. @returns {Promise<boolean>} whether any was forgotten */
  async pruneGroups() {
    if (!this.chrome.tabGroups || (this.groups.size === 0 && this.groupOwners.size === 0)) return false;
    let live;
    try {
      live = new Set((await this.chrome.tabGroups.query({})).map((g) => g.id));
    } catch (err) {
      this.log.warn('reins: cannot list tab groups', err);
      return false;
    }
    let changed = false;
    for (const id of [...this.groups]) if (!live.has(id)) changed = this.groups.delete(id) || changed;
    for (const id of [...this.groupOwners.keys()]) if (!live.has(id)) changed = this.groupOwners.delete(id) || changed;
    return changed;
  }

  /** Sharing or attachment changed: save it and tell everyone. */
  changed() {
    this.persist();
    this.scheduleTabs();
    this.onStateChange();
  }

  emit(event, params) {
    return this.send(eventFrame(event, params));
  }

  scheduleTabs() {
    if (this.tabsTimer !== null) return;
    this.tabsTimer = this.timers.setTimeout(async () => {
      this.tabsTimer = null;
      try {
        this.emit('tabs', await this.listTabs());
      } catch (err) {
        this.log.warn('reins: cannot list tabs', err);
      }
    }, TABS_COALESCE_MS);
  }

  async listTabs() {
    const tabs = await this.chrome.tabs.query({});
    return tabs.filter((t) => typeof t.id === 'number').map((t) => this.info(t));
  }

  info(tab) {
    return toTabInfo(tab, this.sharing, this.engine);
  }

  async getTab(tabId) {
    if (!Number.isSafeInteger(tabId)) throw new WireError(Codes.badParams, 'tabId must be an integer');
    try {
      return await this.chrome.tabs.get(tabId);
    } catch {
      throw new WireError(Codes.noSuchTab, `no tab with id ${tabId}`);
    }
  }

  /** The shared tab, or an error saying why it may not be used. */
  async sharedTab(tabId) {
    const cached = this.sharing.isShared(tabId) ? this.tabCache.get(tabId) : undefined;
    if (cached) return cached;
    const seen = this.tabEvents;
    const tab = await this.getTab(tabId);
    if (!this.sharing.isShared(tabId)) {
      throw new WireError(Codes.notShared, `tab ${tabId} is not shared with agents`);
    }
    // A tabs event while the browser answered may mean the answer is
    // already out of date: use it for this request, but do not keep it.
    if (this.tabEvents === seen) this.tabCache.set(tabId, tab);
    return tab;
  }

  /** A tabs event for tabId: its cached description may be out of date. */
  forgetTab(tabId) {
    this.tabEvents++;
    this.tabCache.delete(tabId);
  }

  /**
   * Shares a tab: for an agent (agent, with the principal it is for as
   * owner), or by hand (the popup, the dashboard), which makes it the
   * person's and so every agent's, and clears any owner.
   * @param {number} tabId
   * @param {{agent?: boolean, owner?: string, group?: string}} [opts]
   */
  async share(tabId, { agent = false, owner = '', group = DEFAULT_GROUP } = {}) {
    await this.ready;
    const tab = await this.getTab(tabId);
    const reason = tabRestriction(tab, this.engine);
    if (reason !== '') throw new WireError(Codes.restrictedUrl, `tab ${tabId} cannot be shared: ${reason}`);
    if (this.sharing.share(tabId, { agent, owner })) this.changed();
    await this.groupTab(tab, group || DEFAULT_GROUP, this.sharing.ownerOf(tabId));
    this.pushOverlay(tabId);
    return tab;
  }

  /**
   * A tab was opened from another (a target=_blank link, window.open, a
   * middle-click). From a shared tab it is shared the same way: an agent's
   * tab's opens are that agent's, in its group; a tab the person shared by
   * hand opens tabs the person shares, which every agent sees. Both the
   * tab event and the navigation event report the opener, so this runs once
   * per tab whichever comes first.
   *
   * A page opened from an agent's tab that took the front of its opener's
   * window first moves to a window of its own: a browser hides the
   * background tabs of a window (Chromium stops rendering them, Firefox
   * throttles their timers), so input and screenshots there stall, and the
   * agent usually keeps working in both. It is shared once it has moved,
   * under the id it has then.
   * @param {number} tabId
   * @param {number} openerId
   */
  async tabOpened(tabId, openerId) {
    await this.ready;
    if (!Number.isSafeInteger(tabId) || !Number.isSafeInteger(openerId) || tabId === openerId) return;
    if (this.opening.has(tabId) || this.sharing.isShared(tabId) || !this.sharing.isShared(openerId)) return;
    this.opening.add(tabId);
    try {
      let tab;
      let opener;
      try {
        [tab, opener] = await Promise.all([this.chrome.tabs.get(tabId), this.chrome.tabs.get(openerId)]);
      } catch {
        return; // one of them closed already
      }
      if (this.sharing.isAgent(openerId) && tab.active && tab.windowId === opener.windowId) {
        try {
          const win = await this.chrome.windows.create({ tabId });
          // Firefox may give the tab it moves a new id.
          tab = win.tabs?.length === 1 ? win.tabs[0] : await this.chrome.tabs.get(tabId);
        } catch (err) {
          this.log.warn('reins: cannot move an opened tab to its own window', tabId, err);
        }
      }
      if (!this.sharing.shareOpened(tab.id, openerId)) return;
      this.persist();
      // Tell the companion now rather than after the coalescing delay: the
      // action that opened the tab is waiting to name it.
      this.emit('tabs', await this.listTabs());
      this.onStateChange();
      await this.groupTab(tab, await this.groupTitleOf(opener), this.sharing.ownerOf(tab.id));
      this.pushOverlay(tab.id);
    } catch (err) {
      this.log.warn('reins: cannot share an opened tab', tabId, err);
    } finally {
      this.opening.delete(tabId);
    }
  }

  /** The title of the group a tab is in, or the default group's. */
  async groupTitleOf(tab) {
    if (!this.chrome.tabGroups || typeof tab.groupId !== 'number' || tab.groupId < 0) return DEFAULT_GROUP;
    try {
      return (await this.chrome.tabGroups.get(tab.groupId)).title || DEFAULT_GROUP;
    } catch {
      return DEFAULT_GROUP;
    }
  }

  async unshare(tabId, reason = 'unshared') {
    await this.ready;
    if (!this.sharing.isShared(tabId)) return;
    await this.debugger.detach(tabId, reason);
    this.sharing.unshare(tabId);
    this.tabCache.delete(tabId);
    this.changed();
    this.pushOverlay(tabId);
    try {
      const tab = await this.chrome.tabs.get(tabId);
      if (typeof tab.groupId === 'number' && this.groups.has(tab.groupId)) {
        await this.chrome.tabs.ungroup(tabId);
      }
    } catch (err) {
      this.log.warn('reins: cannot ungroup tab', tabId, err);
    }
  }

  /**
   * Puts a shared tab in its group in its window: the group of its owner
   * (titled with the owner's label) for an agent tab, or the group with this
   * title that no agent owns for the person's tabs. A group is a visual cue
   * only, so failing to group (a popup window, an API the browser lacks)
   * never fails the request.
   * @param {{id: number}} tab
   * @param {string} title
   * @param {string} [owner]
   */
  groupTab(tab, title, owner = '') {
    const chrome = this.chrome;
    if (!chrome.tabGroups || typeof chrome.tabs.group !== 'function') return Promise.resolve();
    const run = async () => {
      const current = await chrome.tabs.get(tab.id);
      // tabGroups.query treats title as a pattern, so match exactly here.
      const groups = await chrome.tabGroups.query({ windowId: current.windowId });
      const existing = groups.find((g) =>
        owner !== '' ? this.groupOwners.get(g.id) === owner : g.title === title && !this.groupOwners.has(g.id));
      if (existing && current.groupId === existing.id) return;
      let groupId;
      if (existing) {
        groupId = await chrome.tabs.group({ tabIds: [tab.id], groupId: existing.id });
      } else {
        groupId = await chrome.tabs.group({ tabIds: [tab.id], createProperties: { windowId: current.windowId } });
        await chrome.tabGroups.update(groupId, { title, color: 'blue' });
      }
      const known = this.groups.has(groupId) && (owner === '' || this.groupOwners.get(groupId) === owner);
      if (!known) {
        this.groups.add(groupId);
        if (owner !== '') this.groupOwners.set(groupId, owner);
        this.persist();
      }
    };
    // Serialised so two tabs created at once share one new group.
    const next = this.groupLock.then(run).catch((err) => this.log.warn('reins: cannot group tab', tab.id, err));
    this.groupLock = next;
    return next;
  }

  tabClosed(tabId) {
    this.debugger.lost(tabId, 'target_closed');
    if (this.sharing.forget(tabId)) this.persist();
    this.scheduleTabs();
    this.onStateChange();
  }

  tabReplaced(addedId, removedId) {
    this.debugger.lost(removedId, 'target_closed');
    if (this.sharing.replace(removedId, addedId)) this.changed();
    else this.scheduleTabs();
    this.pushOverlay(addedId);
  }

  setPolicy(params) {
    if (!params || typeof params !== 'object') return;
    this.policy = {
      paused: params.paused === true,
      overlay: params.overlay !== false,
    };
    if (Array.isArray(params.disabled)) this.policy.disabled = params.disabled.filter((d) => typeof d === 'string');
    this.chrome.storage.session.set({ policy: this.policy }).catch(() => {});
    this.updateBadge();
    this.pushOverlayAll();
    this.onStateChange();
  }

  /** What the page overlay of a tab should show. */
  overlayFor(tabId) {
    const shared = this.sharing.isShared(tabId);
    const paused = this.policy?.paused === true;
    // The person's local choice and the companion's policy must both allow it.
    const enabled = this.options.overlay && this.policy?.overlay !== false;
    // shared: the tab's content script holds a port that wakes a stopped
    // worker (content.js).
    return { show: shared && enabled, paused, shared };
  }

  pushOverlay(tabId) {
    const msg = { type: 'reins.overlay', ...this.overlayFor(tabId) };
    Promise.resolve()
      .then(() => this.chrome.tabs.sendMessage(tabId, msg, { frameId: 0 }))
      .catch(() => {
        // Pages opened before the extension loaded have no content script.
      });
  }

  pushOverlayAll() {
    for (const tabId of this.sharing.shared) this.pushOverlay(tabId);
  }

  toolsPolicy() {
    return {
      disabled: [],
      haveCatalog: this.haveCatalog,
      graph: this.options.graph,
      overlay: this.options.overlay,
    };
  }

  /** Pairing notices win over the paused sign: they need the person to act. */
  async updateBadge() {
    const action = this.chrome.action;
    if (!action) return;
    let text = '';
    let color = '#5f6368';
    try {
      const { offerNotice } = await this.chrome.storage.session.get('offerNotice');
      if (offerNotice && !offerNotice.seen) {
        text = '1';
        color = '#d93025';
      } else if (this.policy?.paused) {
        text = 'II';
      }
      await action.setBadgeText({ text });
      if (text !== '') await action.setBadgeBackgroundColor({ color });
    } catch (err) {
      this.log.warn('reins: cannot update badge', err);
    }
  }
}
