// Downloads for the Firefox adapter: Firefox gives extensions no download
// events per tab, so a download from browser.downloads is laid at the
// attached tab it came from (the tab that requested its URL in the last
// moments, or whose page is its referrer) and reported there as Chromium
// does, Page.downloadWillBegin and Page.downloadProgress. The companion
// asks downloads.wait (downloads.js) where the file was saved.

/** How long a tab's request for a URL counts as where a download came from. */
export const RECENT_MS = 30_000;
/** The requests remembered per tab, newest last. */
export const MAX_RECENT = 50;

function baseName(p) {
  const s = String(p ?? '');
  const i = Math.max(s.lastIndexOf('/'), s.lastIndexOf('\\'));
  return i >= 0 ? s.slice(i + 1) : s;
}

/** @param {import('./cdp-firefox.js').FirefoxShared} fx */
export function downloadsDomain(fx) {
  const recent = new Map(); // tabId → [{url, at}]
  const pages = new Map(); // tabId → the URL of the document the tab shows
  const owners = new Map(); // download id → tabId
  const { browser } = fx;

  const remember = (tabId, url) => {
    let list = recent.get(tabId);
    if (!list) recent.set(tabId, (list = []));
    list.push({ url, at: fx.now() });
    if (list.length > MAX_RECENT) list.shift();
  };

  const ownerOf = (item) => {
    const now = fx.now();
    let best = null;
    for (const [tabId, list] of recent) {
      if (!fx.tabs.get(tabId)?.domains.has('Page')) continue;
      for (const r of list) {
        if ((r.url === item.url || r.url === item.finalUrl) && now - r.at <= RECENT_MS && (!best || r.at > best.at)) best = { tabId, at: r.at };
      }
    }
    if (best) return best.tabId;
    // Firefox may announce the download before the request that made it:
    // the page it was started from is its referrer.
    if (!item.referrer) return null;
    for (const [tabId, st] of fx.tabs) {
      if (st.domains.has('Page') && pages.get(tabId) === item.referrer) return tabId;
    }
    return null;
  };

  const wr = browser.webRequest;
  if (wr) {
    wr.onBeforeRequest.addListener((d) => {
      if (d.tabId >= 0 && fx.tabs.has(d.tabId) && (d.type === 'main_frame' || d.type === 'sub_frame' || d.type === 'other')) remember(d.tabId, d.url);
    }, { urls: ['<all_urls>'] });
  }

  const dl = browser.downloads;
  if (dl) {
    dl.onCreated.addListener((item) => {
      const tabId = ownerOf(item);
      if (tabId === null) return;
      owners.set(item.id, tabId);
      if (owners.size > 1000) owners.delete(owners.keys().next().value);
      fx.emitIf(tabId, 'Page', 'Page.downloadWillBegin', {
        frameId: fx.frameIdOf(tabId),
        guid: `firefox-${item.id}`,
        url: item.url,
        suggestedFilename: baseName(item.filename),
        downloadId: item.id,
      });
    });
    dl.onChanged.addListener((delta) => {
      const tabId = owners.get(delta.id);
      if (tabId === undefined || !delta.state) return;
      const state = delta.state.current === 'complete' ? 'completed' : delta.state.current === 'interrupted' ? 'canceled' : 'inProgress';
      if (state !== 'inProgress') owners.delete(delta.id);
      fx.emitIf(tabId, 'Page', 'Page.downloadProgress', {
        guid: `firefox-${delta.id}`,
        state,
        receivedBytes: delta.bytesReceived?.current ?? 0,
        totalBytes: delta.totalBytes?.current ?? 0,
      });
    });
  }

  return {
    committed(d) {
      pages.set(d.tabId, d.url);
    },
    sameDocument(d) {
      pages.set(d.tabId, d.url);
    },
    tabClosed(tabId) {
      recent.delete(tabId);
      pages.delete(tabId);
    },
  };
}
