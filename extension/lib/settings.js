// Option defaults and storage keys, shared by the worker, popup and options page.

export const DEFAULT_PORT = 47100;
export const NATIVE_HOST = 'com.reins.companion';
export const DEFAULT_GROUP = 'Reins';
export const PRODUCT_NAME = 'Reins';

export const defaultOptions = Object.freeze({
  port: '',
  profile: '',
  graph: true,
  overlay: true,
});

/** Normalises what storage.local holds into usable options. */
export function normalizeOptions(raw = {}) {
  const port = parsePort(raw.port);
  return {
    port: port === null ? '' : port,
    profile: typeof raw.profile === 'string' ? raw.profile.trim().slice(0, 100) : '',
    graph: raw.graph === undefined ? defaultOptions.graph : raw.graph !== false,
    overlay: raw.overlay === undefined ? defaultOptions.overlay : raw.overlay !== false,
  };
}

/** @returns {number|null} a valid TCP port, or null for "automatic" or junk */
export function parsePort(v) {
  if (v === undefined || v === null || v === '') return null;
  const s = String(v).trim();
  if (!/^[0-9]{1,5}$/.test(s)) return null;
  const n = Number(s);
  return n >= 1 && n <= 65535 ? n : null;
}

export function socketUrl(port) {
  return `ws://127.0.0.1:${port}/`;
}
