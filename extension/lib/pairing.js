// Pairing offers from pages (Browser Operator Protocol pair-offer). The page
// supplies config and brand; the origin always comes from the browser's view
// of the sender, never from the message.

export const MAX_OFFER_BYTES = 64 * 1024;

/**
 * The origin of the page that sent a runtime message, or '' when it is not a
 * top-level http(s) page of a tab.
 * @param {{origin?: string, url?: string, frameId?: number, tab?: {id?: number, url?: string}}} sender
 */
export function senderOrigin(sender) {
  if (!sender || !sender.tab || sender.frameId !== 0) return '';
  let origin = typeof sender.origin === 'string' ? sender.origin : '';
  if (origin === '' || origin === 'null') {
    try {
      origin = new URL(sender.tab.url || sender.url || '').origin;
    } catch {
      return '';
    }
  }
  let parsed;
  try {
    parsed = new URL(origin);
  } catch {
    return '';
  }
  // An opaque or non-web origin cannot be named to the person in the approval window.
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') return '';
  return parsed.origin;
}

/**
 * Checks a forwarded offer and returns the pair.offer params, or throws.
 * @param {{config?: unknown, brand?: unknown}} msg
 * @param {{origin?: string, url?: string, frameId?: number, tab?: {id?: number, url?: string}}} sender
 */
export function buildOffer(msg, sender) {
  const origin = senderOrigin(sender);
  if (origin === '') throw new Error('pairing offers are accepted only from the top frame of a web page');
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

/** Keeps only the latest offer per origin while the companion is unreachable. */
export function queueOffer(queue, offer) {
  const next = (queue || []).filter((o) => o.origin !== offer.origin);
  next.push(offer);
  return next;
}
