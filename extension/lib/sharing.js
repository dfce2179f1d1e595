// Which tabs the person shared with agents. This is the extension's half of
// the security boundary: every cdp call is checked against it. The state is
// plain data so it can live in storage.session and survive a service-worker
// restart within one browser run (tab ids are only stable that long).

export class SharingState {
  constructor() {
    /** @type {Set<number>} */ this.shared = new Set();
    /** @type {Set<number>} tabs opened by agents (always shared) */ this.agent = new Set();
    /** @type {Set<number>} tabs whose debugger stays attached past the idle timer */ this.held = new Set();
    /** @type {Set<number>} tabs our debugger is attached to */ this.attached = new Set();
  }

  /** @param {any} data a value produced by toJSON, possibly from an older version */
  static from(data) {
    const s = new SharingState();
    if (data && typeof data === 'object') {
      for (const key of ['shared', 'agent', 'held', 'attached']) {
        if (Array.isArray(data[key])) {
          for (const id of data[key]) if (Number.isSafeInteger(id)) s[key].add(id);
        }
      }
    }
    // Only shared tabs may be agent tabs or held.
    for (const id of s.agent) if (!s.shared.has(id)) s.agent.delete(id);
    for (const id of s.held) if (!s.shared.has(id)) s.held.delete(id);
    return s;
  }

  toJSON() {
    return {
      shared: [...this.shared].sort((a, b) => a - b),
      agent: [...this.agent].sort((a, b) => a - b),
      held: [...this.held].sort((a, b) => a - b),
      attached: [...this.attached].sort((a, b) => a - b),
    };
  }

  isShared(tabId) { return this.shared.has(tabId); }
  isAgent(tabId) { return this.agent.has(tabId); }
  isHeld(tabId) { return this.held.has(tabId); }
  isAttached(tabId) { return this.attached.has(tabId); }

  /** @returns {boolean} whether anything changed */
  share(tabId, { agent = false } = {}) {
    const changed = !this.shared.has(tabId) || (agent && !this.agent.has(tabId));
    this.shared.add(tabId);
    if (agent) this.agent.add(tabId);
    return changed;
  }

  /** @returns {boolean} whether the tab was shared */
  unshare(tabId) {
    const was = this.shared.delete(tabId);
    this.agent.delete(tabId);
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
    return changed;
  }

  /** A prerendered or restored tab replaced another: sharing moves with it. */
  replace(oldId, newId) {
    let changed = false;
    for (const key of ['shared', 'agent', 'held']) {
      if (this[key].delete(oldId)) {
        this[key].add(newId);
        changed = true;
      }
    }
    // The debugger does not follow a replaced tab.
    changed = this.attached.delete(oldId) || changed;
    return changed;
  }

  /** Drops ids of tabs that no longer exist (after a worker restart). */
  retainOnly(existingIds) {
    const keep = new Set(existingIds);
    let changed = false;
    for (const key of ['shared', 'agent', 'held', 'attached']) {
      for (const id of this[key]) {
        if (!keep.has(id)) {
          this[key].delete(id);
          changed = true;
        }
      }
    }
    return changed;
  }
}
