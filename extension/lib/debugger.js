// Debugger sessions per tab, independent of the engine: attach on first use,
// detach after a quiet period unless the tab is held, and report every
// detach once, whoever caused it.

import { WireError, Codes, crashedError } from './frames.js';
import { cdpErrorMessage } from './cdp-chromium.js';

export const IDLE_DETACH_MS = 30_000;

/** What a crashed tab still takes: the commands that load it again. */
const RELOADS = new Set(['Page.navigate', 'Page.reload']);

/**
 * The coded error of a command the browser failed. A debugger that detached
 * while the command ran (the tab closing, the worker stopping), or a worker
 * the browser stopped under it ("No SW"), is not a fault of ours: the agent
 * may try again once the tab is back. A tab that closed under the command
 * is gone ("No tab with given id").
 */
function commandError(method, message) {
  if (/detached while handling command/i.test(message)) {
    return new WireError(Codes.attachFailed, `the debugger detached from the tab while ${method} ran, which may not have finished; try again`);
  }
  if (/^no sw$/i.test(message)) {
    return new WireError(Codes.attachFailed, `the browser stopped the extension's worker while ${method} ran, which may not have finished; try again`);
  }
  if (/^no tab with given id/i.test(message)) {
    return new WireError(Codes.noSuchTab, `the tab closed while ${method} ran`);
  }
  return new WireError(Codes.internal, message);
}

export class DebuggerManager {
  /**
   * @param {object} o
   * @param {import('./cdp-chromium.js').CdpAdapter} o.cdp
   * @param {import('./sharing.js').SharingState} o.sharing read through a getter so a reload swaps it
   * @param {() => void} o.changed persist state and refresh the tabs event
   * @param {(event:string, params:object) => void} o.emit
   * @param {{setTimeout:Function, clearTimeout:Function}} [o.timers]
   * @param {number} [o.idleMs]
   */
  constructor({ cdp, sharing, changed, emit, timers = globalThis, idleMs = IDLE_DETACH_MS }) {
    this.cdp = cdp;
    this.getSharing = typeof sharing === 'function' ? sharing : () => sharing;
    this.changed = changed;
    this.emit = emit;
    this.timers = timers;
    this.idleMs = idleMs;
    /** @type {Map<number, any>} */ this.idleTimers = new Map();
    /** @type {Map<number, Promise<void>>} */ this.attaching = new Map();
    /** @type {Map<number, number>} */ this.inFlight = new Map();
    /**
     * @type {Set<number>} tabs whose page shows a dialog: they stay attached
     * past the idle timer, since a detach would take the answer out of the
     * agent's hands (the companion dismisses one nobody answers).
     */
    this.dialogs = new Set();
    /** Rejecters of the calls waiting on each tab's page. @type {Map<number, Set<Function>>} */
    this.waiting = new Map();

    cdp.onEvent((tabId, method, params, sessionId) => {
      if (!sessionId && method === 'Inspector.targetCrashed') this.pageCrashed(tabId);
      // A document the main frame commits ends a crash: a navigation under
      // way when the old renderer crashed commits in a new one after the
      // crash report, and the tabs API's 'loading' came before it.
      if (!sessionId && (method === 'Inspector.targetReloadedAfterCrash' || (method === 'Page.frameNavigated' && !params?.frame?.parentId))) {
        this.pageLoading(tabId);
      }
      if (!this.getSharing().isAttached(tabId)) return;
      if (!sessionId && method === 'Page.javascriptDialogOpening') {
        this.dialogs.add(tabId);
        this.clearIdle(tabId);
      } else if (!sessionId && method === 'Page.javascriptDialogClosed' && this.dialogs.delete(tabId)) {
        this.armIdle(tabId);
      }
      const out = { tabId, method, params: params ?? {} };
      if (sessionId) out.sessionId = sessionId;
      this.emit('cdp.event', out);
    });
    cdp.onDetach((tabId, reason) => this.lost(tabId, reason || 'detached'));
  }

  /** Runs one protocol command on a tab the caller already checked. */
  async call(tabId, method, params, sessionId) {
    // A crashed page answers nothing until it loads again: refuse at once
    // what only the page could answer; a navigation loads it again.
    // The mark is kept with the sharing state, so a worker started again
    // after the crash knows it too.
    if (this.getSharing().crashed.has(tabId) && !RELOADS.has(method)) throw crashedError();
    this.inFlight.set(tabId, (this.inFlight.get(tabId) ?? 0) + 1);
    this.clearIdle(tabId);
    try {
      await this.ensureAttached(tabId);
      const trace = globalThis.reinsTrace; // opt-in benchmark timing, see service.js
      const t0 = trace ? performance.now() : 0;
      try {
        const out = await this.untilCrash(tabId, this.cdp.send(tabId, method, params, sessionId));
        if (trace) trace.push({ kind: 'debugger', method, tab: tabId, at: t0, ms: performance.now() - t0 });
        return out;
      } catch (err) {
        // An adapter's own coded errors (Firefox: unknown_method,
        // restricted_url) travel as they are.
        if (err instanceof WireError) throw err;
        const message = cdpErrorMessage(err);
        // Our record can be stale (worker restart, a detach we missed):
        // attach again once rather than fail the agent's call.
        if (!/not attached/i.test(message)) throw commandError(method, message);
        this.markDetached(tabId, 'detached');
      }
      await this.ensureAttached(tabId);
      try {
        return await this.untilCrash(tabId, this.cdp.send(tabId, method, params, sessionId));
      } catch (err) {
        if (err instanceof WireError) throw err;
        throw commandError(method, cdpErrorMessage(err));
      }
    } finally {
      const n = (this.inFlight.get(tabId) ?? 1) - 1;
      if (n <= 0) this.inFlight.delete(tabId);
      else this.inFlight.set(tabId, n);
      this.armIdle(tabId);
    }
  }

  async ensureAttached(tabId) {
    if (this.getSharing().isAttached(tabId)) return;
    let pending = this.attaching.get(tabId);
    if (!pending) {
      pending = this.attach(tabId).finally(() => this.attaching.delete(tabId));
      this.attaching.set(tabId, pending);
    }
    await pending;
  }

  async attach(tabId) {
    try {
      await this.cdp.attach(tabId);
    } catch (err) {
      const message = cdpErrorMessage(err);
      // A previous instance of this service worker may have attached already.
      if (!/already attached/i.test(message)) {
        throw new WireError(Codes.attachFailed, `cannot attach the debugger to tab ${tabId}: ${message}`);
      }
    }
    // Inspector.targetCrashed tells a crashed renderer (pageCrashed). An
    // adapter without the domain (Firefox) has no such event to miss.
    await this.cdp.send(tabId, 'Inspector.enable', {}).catch(() => {});
    if (this.getSharing().setAttached(tabId, true)) this.changed();
  }

  /**
   * The tab's renderer crashed: the browser will never answer what waits
   * on its page, so those calls fail now, and so does every call but a
   * navigation until the page loads again.
   */
  pageCrashed(tabId) {
    const crashed = this.getSharing().crashed;
    if (!crashed.has(tabId)) {
      crashed.add(tabId);
      this.changed();
    }
    const waiting = this.waiting.get(tabId);
    this.waiting.delete(tabId);
    for (const reject of waiting ?? []) reject(crashedError());
    // A dialog goes with the crashed page.
    if (this.dialogs.delete(tabId)) this.armIdle(tabId);
  }

  /** A load after the crash (a navigation or a reload) ends it. */
  pageLoading(tabId) {
    if (this.getSharing().crashed.delete(tabId)) this.changed();
  }

  /** promise, or the crash error if the tab's renderer crashes first. */
  untilCrash(tabId, promise) {
    let reject;
    const crash = new Promise((_, r) => {
      reject = r;
    });
    let set = this.waiting.get(tabId);
    if (!set) this.waiting.set(tabId, (set = new Set()));
    set.add(reject);
    return Promise.race([promise, crash]).finally(() => {
      set.delete(reject);
      if (set.size === 0 && this.waiting.get(tabId) === set) this.waiting.delete(tabId);
    });
  }

  /** Detaches on our initiative (idle, unshared). */
  async detach(tabId, reason) {
    if (!this.markDetached(tabId, reason)) return;
    try {
      await this.cdp.detach(tabId);
    } catch {
      // The tab may be gone already; the session is over either way.
    }
  }

  /** The browser ended the session (tab closed, person cancelled the banner). */
  lost(tabId, reason) {
    this.markDetached(tabId, reason);
  }

  markDetached(tabId, reason) {
    this.clearIdle(tabId);
    this.dialogs.delete(tabId);
    if (!this.getSharing().setAttached(tabId, false)) return false;
    this.changed();
    this.emit('detached', { tabId, reason });
    return true;
  }

  /** Hold changes restart or stop the idle timer. */
  holdChanged(tabId) {
    if (this.getSharing().isHeld(tabId)) this.clearIdle(tabId);
    else this.armIdle(tabId);
  }

  /** After a worker restart, attached tabs need their idle timers back. */
  rearmAll() {
    for (const tabId of this.getSharing().attached) this.armIdle(tabId);
  }

  armIdle(tabId) {
    this.clearIdle(tabId);
    const sharing = this.getSharing();
    if (!sharing.isAttached(tabId) || sharing.isHeld(tabId) || this.inFlight.has(tabId) || this.dialogs.has(tabId)) return;
    const t = this.timers.setTimeout(() => {
      this.idleTimers.delete(tabId);
      if (!this.getSharing().isHeld(tabId) && !this.inFlight.has(tabId) && !this.dialogs.has(tabId)) this.detach(tabId, 'idle');
    }, this.idleMs);
    this.idleTimers.set(tabId, t);
  }

  clearIdle(tabId) {
    const t = this.idleTimers.get(tabId);
    if (t !== undefined) {
      this.timers.clearTimeout(t);
      this.idleTimers.delete(tabId);
    }
  }
}
