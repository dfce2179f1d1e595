// extensions.* requests: chrome.management behind an optional permission the
// person grants in the popup, so an agent cannot reach other extensions
// unless the person chose to allow it.

import { WireError, Codes, badParams } from './frames.js';

export const MAX_MESSAGE_BYTES = 1024 * 1024;
export const MESSAGE_TIMEOUT_MS = 30_000;

const GRANT_HINT = 'extension management is not granted: open the Reins popup and click "Allow managing extensions"';

export async function requireManagement(chrome) {
  let granted = false;
  try {
    granted = await chrome.permissions.contains({ permissions: ['management'] });
  } catch {
    granted = false;
  }
  if (!granted || !chrome.management) throw new WireError(Codes.unauthorized, GRANT_HINT);
  return chrome.management;
}

function extensionId(params) {
  const id = params?.id;
  if (typeof id !== 'string' || !/^[\w.@{}-]{1,200}$/.test(id)) {
    throw badParams('id must be an extension id');
  }
  return id;
}

/** The fields of management.ExtensionInfo worth sending; icons and urls of our own pages stay out. */
export function extensionInfo(ext) {
  const out = {
    id: ext.id,
    name: ext.name,
    shortName: ext.shortName,
    description: ext.description,
    version: ext.version,
    enabled: ext.enabled,
    type: ext.type,
    installType: ext.installType,
    mayDisable: ext.mayDisable,
    mayEnable: ext.mayEnable,
    homepageUrl: ext.homepageUrl || undefined,
    optionsUrl: ext.optionsUrl || undefined,
    permissions: ext.permissions,
    hostPermissions: ext.hostPermissions,
    disabledReason: ext.disabledReason,
    offlineEnabled: ext.offlineEnabled,
  };
  for (const k of Object.keys(out)) if (out[k] === undefined) delete out[k];
  return out;
}

async function getExtension(management, id) {
  try {
    return await management.get(id);
  } catch {
    throw badParams(`no installed extension with id ${id}`);
  }
}

function refuseSelf(chrome, id, what) {
  if (id === chrome.runtime.id) throw badParams(`reins cannot ${what} itself`);
}

export function jsonBytes(value) {
  let text;
  try {
    text = JSON.stringify(value);
  } catch {
    return -1;
  }
  if (text === undefined) return -1;
  return new TextEncoder().encode(text).length;
}

/** @returns {Record<string, (params:any, ctx:{chrome:any, timers:any}) => Promise<any>>} */
export const extensionHandlers = {
  async 'extensions.info'(params, { chrome }) {
    const management = await requireManagement(chrome);
    const id = extensionId(params);
    const info = extensionInfo(await getExtension(management, id));
    try {
      info.permissionWarnings = await management.getPermissionWarningsById(id);
    } catch {
      // Not every browser offers warnings for every extension type.
    }
    return info;
  },

  async 'extensions.list'(_params, { chrome }) {
    const management = await requireManagement(chrome);
    const all = await management.getAll();
    return all.filter((e) => e.id !== chrome.runtime.id).map(extensionInfo);
  },

  async 'extensions.message'(params, { chrome, timers }) {
    await requireManagement(chrome);
    const id = extensionId(params);
    refuseSelf(chrome, id, 'message');
    if (!params || !('message' in params)) throw badParams('message is required');
    const size = jsonBytes(params.message);
    if (size < 0) throw badParams('message must be json');
    if (size > MAX_MESSAGE_BYTES) throw badParams('message is larger than 1 MB');
    let timer;
    const timeout = new Promise((_, reject) => {
      timer = timers.setTimeout(
        () => reject(new WireError(Codes.timeout, `extension ${id} did not answer within 30 s`)),
        MESSAGE_TIMEOUT_MS,
      );
    });
    let reply;
    try {
      reply = await Promise.race([chrome.runtime.sendMessage(id, params.message), timeout]);
    } catch (err) {
      if (err instanceof WireError) throw err;
      throw new WireError(Codes.internal, `message to extension ${id} failed: ${err?.message ?? err}`);
    } finally {
      timers.clearTimeout(timer);
    }
    if (reply === undefined) reply = null;
    const replySize = jsonBytes(reply);
    if (replySize < 0) throw new WireError(Codes.internal, `extension ${id} replied with something that is not json`);
    if (replySize > MAX_MESSAGE_BYTES) throw new WireError(Codes.internal, `extension ${id} replied with more than 1 MB`);
    return { reply: JSON.parse(JSON.stringify(reply)) };
  },

  async 'extensions.options'(params, { chrome, urlSupported }) {
    const management = await requireManagement(chrome);
    const id = extensionId(params);
    const ext = await getExtension(management, id);
    if (!ext.optionsUrl) throw badParams(`extension ${ext.name} has no options page`);
    const tab = await chrome.tabs.create({ url: ext.optionsUrl, active: true });
    return {
      id: tab.id,
      windowId: tab.windowId,
      url: ext.optionsUrl,
      extensionId: ext.id,
      name: ext.name,
      automatable: urlSupported(ext.optionsUrl),
    };
  },

  async 'extensions.setEnabled'(params, { chrome }) {
    const management = await requireManagement(chrome);
    const id = extensionId(params);
    refuseSelf(chrome, id, 'disable');
    if (typeof params.enabled !== 'boolean') throw badParams('enabled must be a boolean');
    await getExtension(management, id);
    await management.setEnabled(id, params.enabled);
    return extensionInfo(await getExtension(management, id));
  },

  async 'extensions.uninstall'(params, { chrome }) {
    const management = await requireManagement(chrome);
    const id = extensionId(params);
    refuseSelf(chrome, id, 'uninstall');
    const ext = await getExtension(management, id);
    try {
      // The browser's own confirmation dialog is the person's consent.
      await management.uninstall(id, { showConfirmDialog: true });
    } catch (err) {
      throw new WireError(Codes.internal, `uninstalling ${ext.name} failed: ${err?.message ?? err}`);
    }
    return { uninstalled: true, name: ext.name };
  },
};
