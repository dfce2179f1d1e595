// The socket to the companion: connect, hello, keep-alive pings, and
// reconnects with backoff. Everything outside (WebSocket, timers, port
// discovery) is injected so it can be tested without a browser.

import { backoffDelay } from './backoff.js';
import { eventFrame } from './frames.js';
import { socketUrl } from './settings.js';

export const PING_INTERVAL_MS = 20_000;

export class Connection {
  /**
   * @param {object} o
   * @param {typeof WebSocket} o.WebSocket
   * @param {() => Promise<number>} o.resolvePort
   * @param {() => Promise<object>} o.buildHello params of the hello event
   * @param {() => Promise<void>|void} o.onReady called right after hello went out
   * @param {() => void} [o.onHealthy] the companion accepted this connection
   * @param {(text:string) => void} o.onMessage
   * @param {() => void} [o.onStatus]
   * @param {{setTimeout:Function, clearTimeout:Function, setInterval:Function, clearInterval:Function}} [o.timers]
   * @param {() => number} [o.now]
   * @param {{warn:Function, info?:Function}} [o.log]
   */
  constructor(o) {
    this.o = o;
    this.timers = o.timers ?? globalThis;
    this.now = o.now ?? (() => Date.now());
    this.log = o.log ?? console;
    /** @type {'idle'|'connecting'|'open'|'waiting'} */
    this.state = 'idle';
    this.ws = null;
    this.port = null;
    this.attempt = 0;
    this.retryAt = 0;
    this.retryTimer = null;
    this.pingTimer = null;
    this.lastError = '';
    this.healthy = false;
    this.generation = 0;
  }

  status() {
    return {
      state: this.state,
      port: this.port,
      retryAt: this.state === 'waiting' ? this.retryAt : 0,
      error: this.lastError,
    };
  }

  isOpen() {
    return this.state === 'open';
  }

  /** Starts connecting unless a connection or a retry is already under way. */
  ensure() {
    if (this.state === 'idle') this.connect();
  }

  /** Drops any connection and connects again now (options changed). */
  restart() {
    this.attempt = 0;
    this.teardown();
    this.state = 'idle';
    this.connect();
  }

  send(frame) {
    if (this.state !== 'open' || !this.ws) return false;
    try {
      this.ws.send(JSON.stringify(frame));
      return true;
    } catch (err) {
      this.log.warn('reins: send failed', err);
      return false;
    }
  }

  async connect() {
    const gen = ++this.generation;
    this.state = 'connecting';
    this.status_();
    let port;
    try {
      port = await this.o.resolvePort();
    } catch (err) {
      port = null;
      this.lastError = `cannot find the companion port: ${err?.message ?? err}`;
    }
    if (gen !== this.generation) return;
    if (port === null) return this.scheduleRetry(gen);
    this.port = port;
    let ws;
    try {
      ws = new this.o.WebSocket(socketUrl(port));
    } catch (err) {
      this.lastError = `cannot open a socket to port ${port}: ${err?.message ?? err}`;
      return this.scheduleRetry(gen);
    }
    this.ws = ws;
    this.healthy = false;
    ws.onopen = () => this.opened(gen, ws);
    ws.onmessage = (ev) => {
      if (gen !== this.generation) return;
      this.markHealthy();
      if (typeof ev.data === 'string') this.o.onMessage(ev.data);
    };
    ws.onerror = () => {
      if (gen === this.generation) this.lastError = `cannot reach the Reins app on port ${port}`;
    };
    ws.onclose = (ev) => {
      if (gen !== this.generation) return;
      if (this.state === 'open') {
        this.lastError = ev && ev.reason ? `the Reins app closed the connection: ${ev.reason}` : 'the Reins app closed the connection';
      }
      this.teardown();
      this.scheduleRetry(gen);
    };
  }

  async opened(gen, ws) {
    if (gen !== this.generation) return;
    try {
      const hello = await this.o.buildHello();
      if (gen !== this.generation) return;
      ws.send(JSON.stringify(eventFrame('hello', hello)));
    } catch (err) {
      this.lastError = `cannot say hello: ${err?.message ?? err}`;
      ws.close();
      return;
    }
    this.state = 'open';
    this.lastError = '';
    this.pingTimer = this.timers.setInterval(() => {
      // A companion that kept us through one ping interval accepted the hello.
      this.markHealthy();
      this.send(eventFrame('ping'));
    }, PING_INTERVAL_MS);
    this.status_();
    try {
      await this.o.onReady();
    } catch (err) {
      this.log.warn('reins: after-hello frames failed', err);
    }
  }

  /**
   * Backoff resets only once the companion has shown it accepted us, so a
   * companion that closes right after hello (a blocked profile) is not
   * hammered every second.
   */
  markHealthy() {
    if (this.healthy) return;
    this.healthy = true;
    this.attempt = 0;
    this.o.onHealthy?.();
  }

  scheduleRetry(gen) {
    if (gen !== this.generation) return;
    const delay = backoffDelay(this.attempt);
    this.attempt++;
    this.state = 'waiting';
    this.retryAt = this.now() + delay;
    this.retryTimer = this.timers.setTimeout(() => {
      this.retryTimer = null;
      if (gen === this.generation && this.state === 'waiting') this.connect();
    }, delay);
    this.status_();
  }

  teardown() {
    if (this.pingTimer !== null) {
      this.timers.clearInterval(this.pingTimer);
      this.pingTimer = null;
    }
    if (this.retryTimer !== null) {
      this.timers.clearTimeout(this.retryTimer);
      this.retryTimer = null;
    }
    const ws = this.ws;
    this.ws = null;
    if (ws) {
      ws.onopen = ws.onmessage = ws.onerror = ws.onclose = null;
      try {
        ws.close();
      } catch {
        // already closed
      }
    }
  }

  status_() {
    this.o.onStatus?.();
  }
}
