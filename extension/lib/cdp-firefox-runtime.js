// The Runtime domain of the Firefox adapter, and the isolated worlds it runs
// in (Page.createIsolatedWorld lives here because a world is a Runtime
// execution context):
//
// - expressions and functions run in the page's MAIN world through
//   scripting.executeScript (firefox-main.js); eval there obeys the page's
//   CSP, and objects stay in the page under ids of this tab;
// - the tool engine's isolated world is the content-script world, where eval
//   is forbidden, so its helper ships as a file (lib/tools-page.js, copied at
//   build time from companion/tools/page.js) and its calls are recognised by
//   shape (firefox-runtime.js).

import { WireError, Codes, badParams } from './frames.js';
import { exceptionDetails, helperCallName, argumentValues, explainEvalBlocked } from './firefox-runtime.js';
import { mainWorld } from './firefox-main.js';

/** The tool engine's page helper (companion/tools/page.js), copied in by `make extension-firefox`. */
export const TOOLS_HELPER_FILE = 'lib/tools-page.js';

/** Runs in the isolated world: the tool engine's helper call. */
function helperInvoke(fn, args) {
  const h = globalThis.__reins;
  if (!h) throw new ReferenceError('globalThis.__reins is undefined: the page helper is not installed in this document');
  return h.call(fn, args);
}

function errorThrown(e) {
  if (e && typeof e === 'object' && typeof e.message === 'string') {
    return {
      isError: true,
      name: typeof e.name === 'string' ? e.name : 'Error',
      message: e.message,
      stack: typeof e.stack === 'string' ? e.stack : '',
      fileName: typeof e.fileName === 'string' ? e.fileName : '',
      lineNumber: typeof e.lineNumber === 'number' ? e.lineNumber : 0,
      columnNumber: typeof e.columnNumber === 'number' ? e.columnNumber : 0,
    };
  }
  return { type: typeof e, value: e === undefined ? 'undefined' : String(e) };
}

function runtimeAnswer(thrown) {
  const details = exceptionDetails(thrown);
  if (details.exception && typeof details.exception.description === 'string') {
    details.exception.description = explainEvalBlocked(details.exception.description);
  }
  return { result: details.exception, exceptionDetails: details };
}

/**
 * The webNavigation frame id behind a DevTools frame id of the adapter: the
 * main frame is "main-<tab>", any other frame its webNavigation id as a
 * string (the tool engine's page helper names frames that way too, with
 * runtime.getFrameId).
 */
export function frameNumber(tabId, frameId) {
  if (frameId === undefined || frameId === null || frameId === '' || frameId === `main-${tabId}`) return 0;
  if (typeof frameId === 'string' && /^[1-9]\d{0,15}$/.test(frameId)) return Number(frameId);
  // The network domain's name for a frame.
  const sub = typeof frameId === 'string' ? /^sub-(\d+)-([1-9]\d{0,15})$/.exec(frameId) : null;
  if (sub && Number(sub[1]) === tabId) return Number(sub[2]);
  throw badParams(`No frame with given id found: ${frameId}`);
}

/** The page's own id of an object this tab's MAIN world holds ("ff.<tab>.<id>"). */
function localObjectId(tabId, id) {
  const m = typeof id === 'string' ? /^ff\.(\d+)\.(\d+)$/.exec(id) : null;
  if (!m || Number(m[1]) !== tabId) return null;
  return m[2];
}

/**
 * @param {import('./cdp-firefox.js').FirefoxShared} fx
 * @param {{consoleSwitch:Function}} logDomain Runtime.enable also switches console capture on
 */
export function runtimeDomain(fx, { consoleSwitch }) {
  const { browser } = fx;
  /** isolated worlds: executionContextId → {tabId, documentId, name} */
  const contexts = new Map();
  let nextContext = 1;
  // A random store key per run: pages cannot guess it.
  const storeKey = '__reinsObjects_' + fx.randomId().replace(/-/g, '');
  let helperText;

  const dropContexts = (tabId) => {
    for (const [id, ctx] of contexts) if (ctx.tabId === tabId) contexts.delete(id);
  };

  // Helper calls waiting on their page, by tab. A page the tab leaves can
  // be kept frozen in the back/forward cache, and Firefox then never
  // settles a script still waiting in it: a call waiting for the page to
  // go quiet after a click that submitted a form would hang until the
  // request timed out. A new document fails them at once, as Chromium
  // fails calls into a destroyed context.
  /** @type {Map<number, Set<{documentId:string|null, fail:(err:Error) => void}>>} */
  const waiting = new Map();
  function untilLeft(tabId, documentId, promise) {
    let entry;
    const left = new Promise((_, reject) => {
      entry = { documentId, fail: reject };
    });
    if (!waiting.has(tabId)) waiting.set(tabId, new Set());
    waiting.get(tabId).add(entry);
    return Promise.race([promise, left]).finally(() => {
      const set = waiting.get(tabId);
      set?.delete(entry);
      if (set && set.size === 0) waiting.delete(tabId);
    });
  }
  function leave(tabId, documentId, err) {
    const set = waiting.get(tabId);
    if (!set) return;
    for (const e of [...set]) if (documentId === undefined || e.documentId === null || e.documentId !== documentId) e.fail(err);
  }

  function world(tabId, id) {
    const ctx = contexts.get(id);
    if (!ctx || ctx.tabId !== tabId) throw new WireError(Codes.internal, 'Cannot find context with specified id');
    return ctx;
  }

  async function toolsHelperText() {
    if (helperText === undefined) {
      try {
        const res = await fx.fetch(browser.runtime.getURL(TOOLS_HELPER_FILE));
        helperText = res.ok ? await res.text() : null;
      } catch {
        helperText = null;
      }
    }
    return helperText;
  }

  const main = (tabId, op, o) => fx.inject(tabId, { world: 'MAIN', func: mainWorld, args: [op, { ...o, storeKey }] });

  function mainAnswer(tabId, r) {
    if (r.error !== undefined && r.error !== null) return runtimeAnswer(errorThrown(r.error));
    const out = r.result;
    if (!out || typeof out !== 'object') return { result: { type: 'undefined' } };
    if (out.thrown) return runtimeAnswer(out.thrown);
    const result = out.result ?? { type: 'undefined' };
    if (typeof result.objectId === 'string') result.objectId = `ff.${tabId}.${result.objectId}`;
    return { result };
  }

  const methods = {
    async 'Page.createIsolatedWorld'(tabId, p) {
      // The content-script world is Firefox's isolated world; its identity
      // is the document it lives in, in the top frame or any other.
      const frameId = frameNumber(tabId, p.frameId);
      let r;
      try {
        r = await fx.inject(tabId, { func: () => 0, frameId });
      } catch (err) {
        // A frame that left the page: say so as Chromium does.
        if (frameId !== 0 && err instanceof WireError && /Cannot find context/.test(err.message)) throw badParams(`No frame with given id found: ${p.frameId}`);
        throw err;
      }
      const id = nextContext++;
      contexts.set(id, { tabId, frameId, documentId: r.documentId ?? null, name: typeof p.worldName === 'string' ? p.worldName : '' });
      return { executionContextId: id };
    },

    async 'Runtime.awaitPromise'(tabId, p) {
      const id = localObjectId(tabId, p.promiseObjectId);
      if (id === null) throw badParams('Could not find promise with given id');
      const r = await main(tabId, 'await', { objectId: id, returnByValue: p.returnByValue === true });
      if (r.result && r.result.missing) throw badParams('Could not find promise with given id');
      return mainAnswer(tabId, r);
    },

    async 'Runtime.callFunctionOn'(tabId, p) {
      if (typeof p.functionDeclaration !== 'string') throw badParams('functionDeclaration must be a string');
      if (p.executionContextId !== undefined && p.executionContextId !== null) {
        const ctx = world(tabId, p.executionContextId);
        const fn = helperCallName(p.functionDeclaration);
        if (fn === null) {
          throw new WireError(Codes.unknownMethod, 'Firefox adapter does not support Runtime.callFunctionOn with arbitrary functions in an isolated world: Firefox forbids eval there');
        }
        const r = await untilLeft(tabId, ctx.documentId ?? null,
          fx.inject(tabId, { func: helperInvoke, args: [fn, argumentValues(p.arguments)], documentId: ctx.documentId ?? undefined, frameId: ctx.frameId }));
        if (r.error !== undefined && r.error !== null) return runtimeAnswer(errorThrown(r.error));
        return { result: r.result === undefined ? { type: 'undefined' } : { type: 'object', value: r.result } };
      }
      if (typeof p.objectId !== 'string') throw badParams('Either objectId or executionContextId must be specified');
      const local = (id) => {
        const l = localObjectId(tabId, id);
        if (l === null) throw new WireError(Codes.badParams, 'Could not find object with given id');
        return l;
      };
      const args = (Array.isArray(p.arguments) ? p.arguments : []).map((a) => (a && typeof a.objectId === 'string' ? { objectId: local(a.objectId) } : { value: argumentValues([a])[0] }));
      const r = await main(tabId, 'call', {
        objectId: local(p.objectId),
        functionDeclaration: p.functionDeclaration,
        args,
        returnByValue: p.returnByValue === true,
        awaitPromise: p.awaitPromise === true,
        objectGroup: p.objectGroup,
      });
      return mainAnswer(tabId, r);
    },

    'Runtime.disable': consoleSwitch('Runtime', false),
    'Runtime.enable': consoleSwitch('Runtime', true),

    async 'Runtime.evaluate'(tabId, p) {
      if (typeof p.expression !== 'string') throw badParams('expression must be a string');
      if (p.contextId !== undefined && p.contextId !== null) {
        const ctx = world(tabId, p.contextId);
        const helper = await toolsHelperText();
        if (helper === null) {
          throw new WireError(Codes.unknownMethod, `Firefox adapter cannot evaluate in an isolated world: this build has no ${TOOLS_HELPER_FILE} (build it with make extension-firefox)`);
        }
        if (p.expression !== helper) {
          throw new WireError(
            Codes.unknownMethod,
            `Firefox adapter does not support Runtime.evaluate of arbitrary code in an isolated world (Firefox forbids eval there); only the tool engine's page helper, shipped as ${TOOLS_HELPER_FILE}, can be installed, and the companion sent a different one: update the extension`,
          );
        }
        const r = await fx.inject(tabId, { files: [TOOLS_HELPER_FILE], documentId: ctx.documentId ?? undefined, frameId: ctx.frameId });
        if (r.error !== undefined && r.error !== null) return runtimeAnswer(errorThrown(r.error));
        return { result: { type: 'undefined' } };
      }
      const r = await main(tabId, 'evaluate', {
        expression: p.expression,
        returnByValue: p.returnByValue === true,
        awaitPromise: p.awaitPromise === true,
        replMode: p.replMode === true,
        objectGroup: typeof p.objectGroup === 'string' ? p.objectGroup : '',
        timeout: Number.isFinite(p.timeout) ? p.timeout : 0,
      });
      return mainAnswer(tabId, r);
    },

    async 'Runtime.releaseObject'(tabId, p) {
      const id = localObjectId(tabId, p.objectId);
      if (id !== null) await main(tabId, 'release', { objectId: id }).catch(() => {});
      return {};
    },

    async 'Runtime.releaseObjectGroup'(tabId, p) {
      if (typeof p.objectGroup === 'string' && p.objectGroup !== '') {
        // The page may have navigated: its objects are gone with it.
        await main(tabId, 'release', { group: p.objectGroup }).catch(() => {});
      }
      return {};
    },

    'Runtime.runIfWaitingForDebugger': async () => ({}),
  };

  return {
    methods,
    committed(d) {
      dropContexts(d.tabId);
      leave(d.tabId, d.documentId ?? undefined, new WireError(Codes.internal, 'Execution context was destroyed: the tab left the page'));
      fx.emitIf(d.tabId, 'Runtime', 'Runtime.executionContextsCleared', {});
    },
    released(tabId) {
      dropContexts(tabId);
    },
    tabClosed(tabId) {
      leave(tabId, undefined, new WireError(Codes.noSuchTab, `tab ${tabId} closed`));
    },
  };
}
