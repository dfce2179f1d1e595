// Connection state in words, for the popup.

/**
 * @param {{state:string, port:number|null, retryAt:number, error:string}} c
 * @param {number} now
 * @returns {{text:string, kind:'ok'|'wait'|'error'}}
 */
export function connectionText(c, now) {
  switch (c?.state) {
    case 'open':
      return { text: `Connected to port ${c.port}`, kind: 'ok' };
    case 'connecting':
      return { text: c.port ? `Connecting to port ${c.port}…` : 'Connecting…', kind: 'wait' };
    case 'authenticating':
      return { text: `Checking the Reins app on port ${c.port}…`, kind: 'wait' };
    case 'waiting': {
      const secs = Math.max(0, Math.ceil((c.retryAt - now) / 1000));
      const why = c.error ? `${c.error}. ` : '';
      return { text: `${why}Reconnecting in ${secs}s`, kind: 'error' };
    }
    default:
      return { text: c?.error ? `Error: ${c.error}` : 'Not connected', kind: 'error' };
  }
}
