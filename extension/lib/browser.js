// Human browser name for hello. Brands come first because Chromium
// derivatives keep "Chrome/" in their user agent string.

const brandNames = [
  ['Microsoft Edge', 'Microsoft Edge'],
  ['Brave', 'Brave'],
  ['Opera', 'Opera'],
  ['Opera GX', 'Opera'],
  ['Vivaldi', 'Vivaldi'],
  ['Google Chrome', 'Google Chrome'],
];

/**
 * @param {{brands?: {brand:string}[], userAgent?: string, isBrave?: boolean}} info
 * @returns {string}
 */
export function detectBrowser({ brands = [], userAgent = '', isBrave = false } = {}) {
  // Brave reports plain Chromium brands on some versions but exposes navigator.brave.
  if (isBrave) return 'Brave';
  const names = new Set((brands || []).map((b) => b && b.brand).filter((b) => typeof b === 'string'));
  for (const [brand, name] of brandNames) {
    if (names.has(brand)) return name;
  }
  const ua = String(userAgent || '');
  if (/\bEdgA?\//.test(ua)) return 'Microsoft Edge';
  if (/\bOPR\//.test(ua)) return 'Opera';
  if (/\bVivaldi\//.test(ua)) return 'Vivaldi';
  if (/\bBrave\//.test(ua)) return 'Brave';
  if (names.has('Chromium')) return 'Chromium';
  if (/\bChromium\//.test(ua)) return 'Chromium';
  if (/\bFirefox\//.test(ua)) return 'Firefox';
  if (/\bChrome\//.test(ua)) return names.size > 0 ? 'Chromium' : 'Google Chrome';
  return 'Chromium';
}
