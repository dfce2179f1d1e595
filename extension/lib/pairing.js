// Pairing offers from pages (Browser Operator Protocol pair-offer). The page
// supplies config and brand; the origin always comes from the browser's own
// record of the frame that sent the message (sender.origin), never from the
// message and never from the tab's URL, which a sandboxed or opaque-origin
// document shares without sharing its origin.

export const MAX_OFFER_BYTES = 64 * 1024;
/** How many offers wait in the worker while the companion is unreachable (the companion parks 5 too). */
export const MAX_QUEUED_OFFERS = 5;

/**
 * Whether host (a URL's hostname) names this machine, where plain http is
 * acceptable.
 * @param {string} host
 */
export function isLoopbackHost(host) {
  const h = host.toLowerCase().replace(/^\[|\]$/g, '');
  if (h === 'localhost' || h.endsWith('.localhost') || h === '::1') return true;
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(h);
  return m !== null && Number(m[1]) === 127 && m.slice(2).every((p) => Number(p) <= 255);
}

/**
 * The origin of the top-level page that sent a runtime message, or why it
 * may not offer pairing.
 * @param {{origin?: string, frameId?: number, documentLifecycle?: string, tab?: {id?: number}}} sender
 * @returns {{origin: string} | {refused: string}}
 */
export function senderOrigin(sender) {
  if (!sender || !sender.tab || typeof sender.tab.id !== 'number') return { refused: 'the message did not come from a tab' };
  if (sender.frameId !== 0) return { refused: 'pairing offers are accepted only from the top frame' };
  if (sender.documentLifecycle !== undefined && sender.documentLifecycle !== 'active') {
    return { refused: `the sending document is ${sender.documentLifecycle}, not active` };
  }
  const origin = sender.origin;
  if (typeof origin !== 'string' || origin === '') return { refused: 'the browser did not report the sender\'s origin' };
  // A sandboxed document (CSP sandbox, a sandboxed frame's popup) has an
  // opaque origin: it may show any site's URL without being that site.
  if (origin === 'null') return { refused: 'the sending document has an opaque origin (sandboxed)' };
  let parsed;
  try {
    parsed = new URL(origin);
  } catch {
    return { refused: `the sender's origin ${origin} does not parse` };
  }
  if (parsed.origin !== origin) return { refused: `the sender's origin ${origin} is not an origin` };
  if (parsed.protocol === 'https:') return { origin };
  if (parsed.protocol === 'http:' && isLoopbackHost(parsed.hostname)) return { origin };
  return { refused: `pairing offers come only from https pages (plain http only on this machine), not ${origin}` };
}

/**
 * Checks a forwarded offer and returns the pair.offer params, or throws
 * with the reason it was refused.
 * @param {{config?: unknown, brand?: unknown}} msg
 * @param {{origin?: string, frameId?: number, documentLifecycle?: string, tab?: {id?: number}}} sender
 */
export function buildOffer(msg, sender) {
  const from = senderOrigin(sender);
  if ('refused' in from) throw new Error(`pairing offer refused: ${from.refused}`);
  const { origin } = from;
  const { config, brand } = msg || {};
  if (config === null || typeof config !== 'object' || Array.isArray(config)) {
    throw new Error('pairing offer config must be an object');
  }
  if (brand !== undefined && brand !== null && (typeof brand !== 'object' || Array.isArray(brand))) {
    throw new Error('pairing offer brand must be an object');
  }
  const size = new TextEncoder().encode(JSON.stringify({ config, brand })).length;
  if (size > MAX_OFFER_BYTES) throw new Error('pairing offer is too large');
  const params = { config, origin, tabId: sender.tab.id };
  if (brand !== undefined && brand !== null) params.brand = brand;
  return params;
}

/**
 * Keeps only the latest offer per origin, and at most MAX_QUEUED_OFFERS,
 * while the companion is unreachable. A full queue turns away offers from
 * new origins rather than dropping one that waits.
 * @returns {{queue: object[], queued: boolean}}
 */
export function queueOffer(queue, offer) {
  const list = queue || [];
  const known = list.some((o) => o.origin === offer.origin);
  if (!known && list.length >= MAX_QUEUED_OFFERS) return { queue: list, queued: false };
  const next = list.filter((o) => o.origin !== offer.origin);
  next.push(offer);
  return { queue: next, queued: true };
}
