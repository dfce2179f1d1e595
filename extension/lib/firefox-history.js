// Session history of a tab for the Firefox adapter. Firefox lets extensions
// go back and forward but not read a tab's history, which
// Page.getNavigationHistory needs; the adapter follows main-frame
// navigations through webNavigation and keeps this model. Pure.

const MAX_ENTRIES = 50;

export class HistoryTracker {
  constructor() {
    /** @type {{id:number, url:string}[]} */
    this.entries = [];
    this.index = -1;
    this.nextId = 1;
    /** index a move we started is headed to, so its commit lands there */
    this.pendingIndex = null;
  }

  entry(url) {
    return { id: this.nextId++, url };
  }

  push(url) {
    this.entries = this.entries.slice(0, this.index + 1);
    this.entries.push(this.entry(url));
    if (this.entries.length > MAX_ENTRIES) this.entries.splice(0, this.entries.length - MAX_ENTRIES);
    this.index = this.entries.length - 1;
  }

  /** Moves to a neighbour whose URL matches; false when none does. */
  moveTo(url) {
    for (const i of [this.index - 1, this.index + 1]) {
      if (i >= 0 && i < this.entries.length && this.entries[i].url === url) {
        this.index = i;
        return true;
      }
    }
    return false;
  }

  /**
   * A main-frame navigation committed (webNavigation.onCommitted) or moved
   * within its document (onReferenceFragmentUpdated/onHistoryStateUpdated).
   * @param {string} url
   * @param {{transitionType?:string, transitionQualifiers?:string[]}} [how]
   */
  committed(url, { transitionType = '', transitionQualifiers = [] } = {}) {
    const q = Array.isArray(transitionQualifiers) ? transitionQualifiers : [];
    if (this.pendingIndex !== null && this.pendingIndex < this.entries.length) {
      this.index = this.pendingIndex;
      this.pendingIndex = null;
      this.entries[this.index].url = url;
      return;
    }
    this.pendingIndex = null;
    if (this.index < 0) {
      this.push(url);
      return;
    }
    if (q.includes('forward_back')) {
      if (!this.moveTo(url)) this.push(url);
      return;
    }
    if (transitionType === 'reload') {
      this.entries[this.index].url = url;
      return;
    }
    if (q.includes('client_redirect') || q.includes('server_redirect')) {
      // A redirect replaces the entry it came from.
      this.entries[this.index].url = url;
      return;
    }
    this.push(url);
  }

  /**
   * Reconciles with what the page knows: history.length counts every entry,
   * including those from before the adapter watched this tab, which are
   * added at the front with URLs it never saw.
   */
  view(historyLength, currentUrl) {
    if (this.index < 0 && typeof currentUrl === 'string') this.push(currentUrl);
    else if (typeof currentUrl === 'string' && this.entries[this.index].url !== currentUrl) {
      // A navigation we did not see (the adapter started late): trust the page.
      this.entries[this.index].url = currentUrl;
    }
    if (Number.isInteger(historyLength) && historyLength > this.entries.length) {
      // Entries after the current one would have been seen going there;
      // missing ones are older.
      const missing = Math.min(historyLength - this.entries.length, MAX_ENTRIES);
      const older = [];
      for (let i = 0; i < missing; i++) older.push(this.entry(''));
      this.entries = older.concat(this.entries);
      this.index += missing;
    } else if (Number.isInteger(historyLength) && historyLength > 0 && historyLength < this.entries.length) {
      // replaceState and location.replace look like new entries from
      // outside; the page's count is the truth, and the surplus is where
      // the replaced entries were: just before the current one.
      let surplus = this.entries.length - historyLength;
      const forward = this.entries.length - 1 - this.index;
      const drop = Math.min(surplus, this.index);
      this.entries.splice(this.index - drop, drop);
      this.index -= drop;
      surplus -= drop;
      if (surplus > 0 && forward > 0) this.entries.splice(this.index + 1, Math.min(surplus, forward));
    }
    return {
      currentIndex: this.index,
      entries: this.entries.map((e) => ({ id: e.id, url: e.url, userTypedURL: e.url, title: '', transitionType: 'link' })),
    };
  }

  /** Index of an entry id, or -1. */
  indexOf(id) {
    return this.entries.findIndex((e) => e.id === id);
  }
}
