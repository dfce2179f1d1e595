// Which tabs the person shared with agents, and which agent each agent tab
// belongs to. This is the extension's half of the security boundary: every
// cdp call is checked against it. The state is plain data so it can live in
// storage.session and survive a service-worker restart within one browser
// run (tab ids are only stable that long). Because it outlives the
// connection, so does ownership: after a reconnect or a companion restart the
// companion learns each agent tab's owner from the tab listings again.

/** Longest principal id kept as an owner ("agent:<id>", "backend:<id>"). */
export const MAX_OWNER = 200;

/** @param {any} owner */
export function validOwner(owner) {
  return typeof owner === 'string' && owner !== '' && owner.length <= MAX_OWNER;
}

export class SharingState {
  constructor() {
    /** @type {Set<number>} */ this.shared = new Set();
    /** @type {Set<number>} tabs opened by agents (always shared) */ this.agent = new Set();
    /** @type {Map<number, string>} agent tab → the principal it was opened for */ this.owners = new Map();
    /** @type {Map<number, number>} tab shared because a shared tab opened it → that opener */ this.openers = new Map();
    /** @type {Set<number>} tabs whose debugger stays attached past the idle timer */ this.held = new Set();
    /** @type {Set<number>} tabs our debugger is attached to */ this.attached = new Set();
    /** @type {Set<number>} tabs whose renderer crashed and that have not loaded since (debugger.js) */ this.crashed = new Set();
  }

  /** @param {any} data a value produced by toJSON, possibly from an older version */
  static from(data) {
    const s = new SharingState();
    if (data && typeof data === 'object') {
      for (const key of ['shared', 'agent', 'held', 'attached', 'crashed']) {
        if (Array.isArray(data[key])) {
          for (const id of data[key]) if (Number.isSafeInteger(id)) s[key].add(id);
        }
      }
      if (Array.isArray(data.owners)) {
        for (const pair of data.owners) {
          if (Array.isArray(pair) && Number.isSafeInteger(pair[0]) && validOwner(pair[1])) s.owners.set(pair[0], pair[1]);
        }
      }
      if (Array.isArray(data.openers)) {
        for (const pair of data.openers) {
          if (Array.isArray(pair) && Number.isSafeInteger(pair[0]) && Number.isSafeInteger(pair[1])) s.openers.set(pair[0], pair[1]);
        }
      }
    }
    // Only shared tabs may be agent tabs or held, and only agent tabs have
    // owners. An agent tab saved by an older version has none: the
    // companion shows it to no agent until the person shares it by hand.
    for (const id of s.agent) if (!s.shared.has(id)) s.agent.delete(id);
    for (const id of s.held) if (!s.shared.has(id)) s.held.delete(id);
    for (const id of s.owners.keys()) if (!s.agent.has(id)) s.owners.delete(id);
    for (const id of s.openers.keys()) if (!s.shared.has(id)) s.openers.delete(id);
    return s;
  }

  toJSON() {
    return {
      shared: [...this.shared].sort((a, b) => a - b),
      agent: [...this.agent].sort((a, b) => a - b),
      owners: [...this.owners].sort((a, b) => a[0] - b[0]),
      openers: [...this.openers].sort((a, b) => a[0] - b[0]),
      held: [...this.held].sort((a, b) => a - b),
      attached: [...this.attached].sort((a, b) => a - b),
      crashed: [...this.crashed].sort((a, b) => a - b),
    };
  }

  isShared(tabId) { return this.shared.has(tabId); }
  isAgent(tabId) { return this.agent.has(tabId); }
  isHeld(tabId) { return this.held.has(tabId); }
  isAttached(tabId) { return this.attached.has(tabId); }
  /** The principal an agent tab belongs to, or '' (a person's tab, or an owner never given). */
  ownerOf(tabId) { return this.owners.get(tabId) ?? ''; }
  /** The shared tab that opened this one, when that is why it is shared; 0 otherwise. */
  openerOf(tabId) { return this.openers.get(tabId) ?? 0; }

  /**
   * Shares a tab because a shared tab opened it (a target=_blank link,
   * window.open, a middle-click): it is shared as its opener is, for the
   * same owner, or by hand when the person shared the opener. A tab already
   * shared is left as it is.
   * @returns {boolean} whether anything changed
   */
  shareOpened(tabId, openerId) {
    if (tabId === openerId || this.shared.has(tabId) || !this.shared.has(openerId)) return false;
    this.share(tabId, { agent: this.agent.has(openerId), owner: this.ownerOf(openerId) });
    this.openers.set(tabId, openerId);
    return true;
  }

  /**
   * Shares a tab. An agent tab records the principal it was opened for; a
   * tab the person shares by hand is everyone's, so sharing by hand clears
   * the agent mark and the owner.
   * @param {number} tabId
   * @param {{agent?: boolean, owner?: string}} [opts]
   * @returns {boolean} whether anything changed
   */
  share(tabId, { agent = false, owner = '' } = {}) {
    let changed = !this.shared.has(tabId);
    this.shared.add(tabId);
    if (agent) {
      if (!this.agent.has(tabId)) changed = true;
      this.agent.add(tabId);
      if (validOwner(owner)) {
        if (this.owners.get(tabId) !== owner) changed = true;
        this.owners.set(tabId, owner);
      } else if (this.owners.delete(tabId)) changed = true;
    } else {
      if (this.agent.delete(tabId)) changed = true;
      if (this.owners.delete(tabId)) changed = true;
    }
    return changed;
  }

  /** @returns {boolean} whether the tab was shared */
  unshare(tabId) {
    const was = this.shared.delete(tabId);
    this.agent.delete(tabId);
    this.owners.delete(tabId);
    this.openers.delete(tabId);
    this.held.delete(tabId);
    return was;
  }

  /** @returns {boolean} whether anything changed */
  setHeld(tabId, hold) {
    if (hold) {
      if (!this.shared.has(tabId) || this.held.has(tabId)) return false;
      this.held.add(tabId);
      return true;
    }
    return this.held.delete(tabId);
  }

  /** @returns {boolean} whether anything changed */
  setAttached(tabId, attached) {
    if (attached) {
      if (this.attached.has(tabId)) return false;
      this.attached.add(tabId);
      return true;
    }
    return this.attached.delete(tabId);
  }

  /** A closed tab leaves every set. @returns {boolean} whether anything changed */
  forget(tabId) {
    let changed = this.unshare(tabId);
    changed = this.attached.delete(tabId) || changed;
    changed = this.crashed.delete(tabId) || changed;
    return changed;
  }

  /** A prerendered or restored tab replaced another: sharing and ownership move with it. */
  replace(oldId, newId) {
    let changed = false;
    for (const key of ['shared', 'agent', 'held']) {
      if (this[key].delete(oldId)) {
        this[key].add(newId);
        changed = true;
      }
    }
    for (const key of ['owners', 'openers']) {
      if (this[key].has(oldId)) {
        this[key].set(newId, this[key].get(oldId));
        this[key].delete(oldId);
        changed = true;
      }
    }
    for (const [id, opener] of this.openers) if (opener === oldId) this.openers.set(id, newId);
    // The debugger does not follow a replaced tab.
    changed = this.attached.delete(oldId) || changed;
    return changed;
  }

  /** Drops ids of tabs that no longer exist (after a worker restart). */
  retainOnly(existingIds) {
    const keep = new Set(existingIds);
    let changed = false;
    for (const key of ['shared', 'agent', 'owners', 'openers', 'held', 'attached']) {
      for (const id of this[key].keys()) {
        if (!keep.has(id)) {
          this[key].delete(id);
          changed = true;
        }
      }
    }
    return changed;
  }
}
