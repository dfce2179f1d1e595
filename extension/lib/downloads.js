// The browser's downloads, for the companion: downloads.list (browspark
// v3) and downloads.wait (Reins addition), which answers once a download
// is no longer in progress. The wait follows downloads.onCreated and
// onChanged; nothing polls. The companion moves the finished file into the
// agent's downloads folder, so the browser keeps its own download folder.

import { WireError, Codes, badParams } from './frames.js';

/** The longest one downloads.wait request waits; the companion asks again. */
export const MAX_WAIT_MS = 25_000;
/** How many recent downloads a wait by URL looks through. */
export const SEARCH_LIMIT = 100;

function obj(params) {
  if (params === undefined || params === null) return {};
  if (typeof params !== 'object' || Array.isArray(params)) throw badParams('params must be an object');
  return params;
}

function millis(t) {
  const n = typeof t === 'number' ? t : Date.parse(t ?? '');
  return Number.isFinite(n) ? n : 0;
}

/** The fields of a DownloadItem the companion reads, in one shape for both browsers. */
export function itemOut(it) {
  const state = it.state === 'in_progress' || it.state === 'complete' ? it.state : 'interrupted';
  return {
    id: it.id,
    url: it.finalUrl || it.url || '',
    filename: it.filename ?? '',
    mime: it.mime ?? '',
    state,
    error: it.error ?? '',
    fileSize: Number.isFinite(it.fileSize) && it.fileSize >= 0 ? it.fileSize : (it.bytesReceived ?? 0),
    exists: it.exists !== false,
  };
}

/**
 * @param {any} chrome the extension API namespace
 * @param {{setTimeout:Function, clearTimeout:Function}} timers
 */
export function downloadHandlers(chrome, timers) {
  const api = () => {
    if (!chrome.downloads) throw new WireError(Codes.unauthorized, 'this browser gives the extension no downloads access');
    return chrome.downloads;
  };

  async function find(p) {
    const d = api();
    if (p.id !== undefined) return (await d.search({ id: p.id }))[0] ?? null;
    const items = await d.search({ orderBy: ['-startTime'], limit: SEARCH_LIMIT });
    return items.find((it) => (it.url === p.url || it.finalUrl === p.url) && millis(it.startTime) >= p.since) ?? null;
  }

  return {
    async 'downloads.list'() {
      return api().search({});
    },

    async 'downloads.wait'(params) {
      const p = obj(params);
      const d = api();
      const id = p.id === undefined || p.id === 0 ? undefined : p.id;
      if (id !== undefined && !Number.isSafeInteger(id)) throw badParams('id must be an integer');
      if (id === undefined && (typeof p.url !== 'string' || p.url === '')) throw badParams('give id or url');
      const since = p.since === undefined ? 0 : p.since;
      if (!Number.isFinite(since)) throw badParams('since must be a number');
      const ms = p.timeoutMs;
      if (!Number.isSafeInteger(ms) || ms < 1 || ms > MAX_WAIT_MS) throw badParams(`timeoutMs must be 1 to ${MAX_WAIT_MS}`);
      const q = { id, url: p.url, since };
      return new Promise((resolve, reject) => {
        let done = false;
        let last = null;
        const finish = (fn, v) => {
          if (done) return;
          done = true;
          timers.clearTimeout(timer);
          d.onChanged.removeListener(check);
          d.onCreated.removeListener(check);
          fn(v);
        };
        // Any change may be ours; look again. A check that starts after
        // the answer is in is harmless.
        function check() {
          find(q).then((it) => {
            if (it) last = it;
            if (it && it.state !== 'in_progress') finish(resolve, itemOut(it));
          }, (err) => finish(reject, new WireError(Codes.internal, `reading downloads: ${err?.message ?? err}`)));
        }
        const timer = timers.setTimeout(() => {
          finish(resolve, last ? itemOut(last) : { id: id ?? 0, url: p.url ?? '', filename: '', mime: '', state: 'in_progress', error: '', fileSize: 0, exists: false });
        }, ms);
        d.onChanged.addListener(check);
        d.onCreated.addListener(check);
        check();
      });
    },
  };
}
