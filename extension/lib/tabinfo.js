// TabInfo as the protocol defines it, built from a chrome.tabs.Tab.

import { unsupportedReason } from './urlrules.js';

/**
 * @param {{id:number, url?:string, pendingUrl?:string, title?:string, windowId:number, favIconUrl?:string}} tab
 * @param {import('./sharing.js').SharingState} sharing
 * @param {'chromium'|'firefox'} engine
 */
export function toTabInfo(tab, sharing, engine = 'chromium') {
  const url = tabUrl(tab);
  const info = {
    id: tab.id,
    url,
    title: typeof tab.title === 'string' ? tab.title : '',
    shared: sharing.isShared(tab.id),
    attached: sharing.isAttached(tab.id),
    windowId: tab.windowId,
  };
  if (sharing.isAgent(tab.id)) info.agent = true;
  const owner = sharing.ownerOf(tab.id);
  if (owner !== '') info.owner = owner;
  const opener = sharing.openerOf(tab.id);
  if (opener !== 0) info.openerTabId = opener;
  if (typeof tab.favIconUrl === 'string' && tab.favIconUrl !== '') info.favIconUrl = tab.favIconUrl;
  const reason = unsupportedReason(url, engine);
  if (reason !== '') info.unsupported = reason;
  return info;
}

/** A tab that is still loading its first page reports only pendingUrl. */
export function tabUrl(tab) {
  if (typeof tab.url === 'string' && tab.url !== '') return tab.url;
  if (typeof tab.pendingUrl === 'string') return tab.pendingUrl;
  return '';
}

/**
 * The reason a tab may not be driven, looking at both the committed and the
 * pending URL so a tab navigating to a restricted page is refused early.
 */
export function tabRestriction(tab, engine = 'chromium') {
  for (const u of [tab.url, tab.pendingUrl]) {
    if (typeof u === 'string' && u !== '') {
      const reason = unsupportedReason(u, engine);
      if (reason !== '') return reason;
    }
  }
  return '';
}
