// Validation of graph.state snapshots (ConnectionGraph). A snapshot that
// fails is refused whole: the dashboard must never draw a half-valid graph.

const modes = new Set(['extension', 'dev']);
const engines = new Set(['chromium', 'firefox']);

function isPlainObject(v) {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/**
 * @param {unknown} graph
 * @returns {string} why the graph is invalid, or '' when it is valid
 */
export function graphProblem(graph) {
  if (!isPlainObject(graph)) return 'graph must be an object';
  const { thisBrowserId, agents, browsers } = graph;
  if (typeof thisBrowserId !== 'string' || thisBrowserId === '') {
    return 'graph thisBrowserId must be a non-empty string';
  }
  if (!Array.isArray(agents)) return 'graph agents must be an array';
  if (!Array.isArray(browsers)) return 'graph browsers must be an array';

  const agentIds = new Set();
  for (const [i, a] of agents.entries()) {
    if (!isPlainObject(a)) return `graph agent ${i} must be an object`;
    if (typeof a.id !== 'string' || a.id === '') return `graph agent ${i} has no id`;
    if (typeof a.name !== 'string') return `graph agent ${a.id} has no name`;
    if (agentIds.has(a.id)) return `graph agent id ${a.id} is not unique`;
    agentIds.add(a.id);
  }

  const browserIds = new Set();
  let self = null;
  for (const [i, b] of browsers.entries()) {
    if (!isPlainObject(b)) return `graph browser ${i} must be an object`;
    if (typeof b.id !== 'string' || b.id === '') return `graph browser ${i} has no id`;
    if (typeof b.name !== 'string') return `graph browser ${b.id} has no name`;
    if (browserIds.has(b.id)) return `graph browser id ${b.id} is not unique`;
    browserIds.add(b.id);
    if (!modes.has(b.mode)) return `graph browser ${b.id} has invalid mode`;
    if (!Number.isSafeInteger(b.sharedTabs) || b.sharedTabs < 0) {
      return `graph browser ${b.id} sharedTabs must be a non-negative safe integer`;
    }
    if (b.context !== undefined && typeof b.context !== 'string') {
      return `graph browser ${b.id} context must be a string`;
    }
    if (b.browserEngine !== undefined && !engines.has(b.browserEngine)) {
      return `graph browser ${b.id} has invalid browserEngine`;
    }
    if (b.id === thisBrowserId) self = b;
  }
  if (self === null) return 'graph does not contain the receiving browser';
  if (self.mode !== 'extension') return 'graph receiving browser must have mode extension';
  return '';
}
