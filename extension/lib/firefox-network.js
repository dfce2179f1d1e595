// Network.* events of the Firefox adapter, built from webRequest details.
// Pure, so tested in node.

const resourceTypes = {
  main_frame: 'Document',
  sub_frame: 'Document',
  stylesheet: 'Stylesheet',
  script: 'Script',
  image: 'Image',
  imageset: 'Image',
  font: 'Font',
  media: 'Media',
  xmlhttprequest: 'XHR', // Firefox does not tell fetch() from XMLHttpRequest
  websocket: 'WebSocket',
  ping: 'Ping',
  beacon: 'Ping',
  csp_report: 'CSPViolationReport',
  object: 'Other',
  xslt: 'Other',
  xml_dtd: 'Other',
  speculative: 'Other',
  web_manifest: 'Manifest',
  other: 'Other',
};

export function resourceType(t) {
  return resourceTypes[t] ?? 'Other';
}

export function requestId(details) {
  return `ff-${details.requestId}`;
}

function headerObject(list) {
  const out = {};
  if (!Array.isArray(list)) return out;
  for (const h of list) {
    if (!h || typeof h.name !== 'string') continue;
    const v = typeof h.value === 'string' ? h.value : '';
    out[h.name] = h.name in out ? `${out[h.name]}\n${v}` : v;
  }
  return out;
}

function mimeOf(headers) {
  if (!Array.isArray(headers)) return '';
  const h = headers.find((x) => x && typeof x.name === 'string' && x.name.toLowerCase() === 'content-type');
  if (!h || typeof h.value !== 'string') return '';
  return h.value.split(';')[0].trim().toLowerCase();
}

function statusText(details) {
  const line = typeof details.statusLine === 'string' ? details.statusLine : '';
  const m = /^\S+\s+\d+\s*(.*)$/.exec(line);
  return m ? m[1] : '';
}

function seconds(ms) {
  return (typeof ms === 'number' ? ms : Date.now()) / 1000;
}

/**
 * @param {object} d webRequest details (onBeforeRequest / onBeforeRedirect)
 * @param {{loaderId:string, frameId:string}} ctx the tab's loader and frame
 * @param {object} [redirect] details of the redirect that led here
 */
export function requestWillBeSent(d, { loaderId, frameId }, redirect) {
  const out = {
    requestId: requestId(d),
    loaderId,
    documentURL: d.type === 'main_frame' ? d.url : (d.documentUrl ?? d.originUrl ?? ''),
    request: { url: d.url, method: d.method || 'GET', headers: headerObject(d.requestHeaders) },
    timestamp: seconds(d.timeStamp),
    wallTime: seconds(d.timeStamp),
    initiator: { type: d.originUrl ? 'script' : 'other', url: d.originUrl || undefined },
    redirectHasExtraInfo: false,
    type: resourceType(d.type),
    frameId,
  };
  if (redirect) {
    out.redirectResponse = {
      url: redirect.url,
      status: redirect.statusCode,
      statusText: statusText(redirect),
      headers: headerObject(redirect.responseHeaders),
      mimeType: mimeOf(redirect.responseHeaders),
    };
  }
  return out;
}

export function responseReceived(d, { loaderId, frameId }) {
  return {
    requestId: requestId(d),
    loaderId,
    timestamp: seconds(d.timeStamp),
    type: resourceType(d.type),
    response: {
      url: d.url,
      status: d.statusCode,
      statusText: statusText(d),
      headers: headerObject(d.responseHeaders),
      mimeType: mimeOf(d.responseHeaders),
      remoteIPAddress: d.ip || undefined,
      fromDiskCache: d.fromCache === true,
      protocol: (/^(\S+)\s/.exec(d.statusLine || '') || [])[1]?.toLowerCase(),
    },
    frameId,
  };
}

export function loadingFinished(d) {
  return { requestId: requestId(d), timestamp: seconds(d.timeStamp), encodedDataLength: 0 };
}

export function loadingFailed(d, errorText) {
  return {
    requestId: requestId(d),
    timestamp: seconds(d.timeStamp),
    type: resourceType(d.type),
    errorText,
    canceled: errorText === 'net::ERR_ABORTED',
  };
}
