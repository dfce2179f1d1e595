// The socket to the companion: connect, hello, the link handshake,
// keep-alive pings, and reconnects with backoff. Everything outside
// (WebSocket, timers, port discovery, the key) is injected so it can be
// tested without a browser.
//
// Nothing the peer sends reaches onMessage, and onReady (which sends tabs
// and offers) does not run, until the peer proved it holds the link key
// (linkauth.js). A peer that does not is closed.

import { retryDelay } from './backoff.js';
import { eventFrame, parseFrame } from './frames.js';
import { LinkAuthError } from './linkauth.js';
import { socketUrl } from './settings.js';

export const PING_INTERVAL_MS = 20_000;
/** How long the companion has to answer hello with its proof, and in code mode to deliver the key. */
export const AUTH_TIMEOUT_MS = 5000;
/** The close code either side uses for a failed link handshake. */
export const CLOSE_UNAUTHORIZED = 4001;

export class Connection {
  /**
   * @param {object} o
   * @param {typeof WebSocket} o.WebSocket
   * @param {(fast:boolean) => Promise<number>} o.resolvePort fast: a link worked moments ago; reuse what is known
   * @param {() => Promise<object>} o.buildHello params of the hello event, without auth
   * @param {(port:number) => Promise<import('./linkauth.js').LinkHandshake|null>} o.startAuth null: no key and no code
   * @param {(key:Uint8Array) => Promise<void>|void} [o.onKey] a pairing code brought the link key
   * @param {(f:{mode:string, by:'extension'|'companion', reason:string}) => void} [o.onAuthFailed]
   * @param {() => Promise<void>|void} o.onReady called once the companion proved itself and took our proof
   * @param {() => void} [o.onHealthy] the companion accepted this connection
   * @param {(text:string) => void} o.onMessage
   * @param {() => void} [o.onStatus]
   * @param {(frame:object) => string} [o.encode] a frame's text on the socket (default JSON.stringify)
   * @param {{setTimeout:Function, clearTimeout:Function, setInterval:Function, clearInterval:Function}} [o.timers]
   * @param {() => number} [o.now]
   * @param {{warn:Function, info?:Function}} [o.log]
   */
  constructor(o) {
    this.o = o;
    this.timers = o.timers ?? globalThis;
    this.now = o.now ?? (() => Date.now());
    this.log = o.log ?? console;
    /** @type {'idle'|'connecting'|'authenticating'|'open'|'waiting'} */
    this.state = 'idle';
    this.ws = null;
    this.port = null;
    this.attempt = 0;
    this.retryAt = 0;
    this.retryTimer = null;
    this.pingTimer = null;
    this.authTimer = null;
    this.lastError = '';
    this.healthy = false;
    this.lastHealthyAt = null;
    this.generation = 0;
    this.inbox = Promise.resolve();
    this.queued = 0;
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

  /** Drops any connection and connects again now (options or key changed). */
  restart() {
    this.attempt = 0;
    this.teardown();
    this.state = 'idle';
    this.connect();
  }

  send(frame) {
    if (this.state !== 'open' || !this.ws) return false;
    try {
      this.ws.send(this.o.encode ? this.o.encode(frame) : JSON.stringify(frame));
      return true;
    } catch (err) {
      this.log.warn('reins: send failed', err);
      return false;
    }
  }

  fast() {
    return this.lastHealthyAt !== null && retryDelay(this.attempt, this.now() - this.lastHealthyAt).fast;
  }

  async connect() {
    const gen = ++this.generation;
    this.state = 'connecting';
    this.status_();
    let port;
    try {
      port = await this.o.resolvePort(this.fast());
    } catch (err) {
      port = null;
      this.lastError = `cannot find the companion port: ${err?.message ?? err}`;
    }
    if (gen !== this.generation) return;
    if (port === null) return this.scheduleRetry(gen);
    this.port = port;
    let auth;
    try {
      auth = await this.o.startAuth(port);
    } catch (err) {
      auth = null;
      this.lastError = err?.message ?? String(err);
    }
    if (gen !== this.generation) return;
    if (!auth) return this.scheduleRetry(gen);
    let ws;
    try {
      ws = new this.o.WebSocket(socketUrl(port));
    } catch (err) {
      this.lastError = `cannot open a socket to port ${port}: ${err?.message ?? err}`;
      return this.scheduleRetry(gen);
    }
    this.ws = ws;
    this.healthy = false;
    this.inbox = Promise.resolve();
    this.queued = 0;
    ws.onopen = () => this.opened(gen, ws, auth);
    ws.onmessage = (ev) => {
      if (gen !== this.generation || typeof ev.data !== 'string') return;
      const text = ev.data;
      if (this.state === 'open' && this.queued === 0) {
        // The link is proven and nothing waits before this frame: no
        // detour, so a call costs what it did before the handshake.
        this.markHealthy();
        this.o.onMessage(text);
        return;
      }
      // During the handshake, one frame at a time, in order: its steps are
      // async (WebCrypto).
      this.queued++;
      this.inbox = this.inbox
        .then(() => this.received(gen, ws, auth, text))
        .finally(() => {
          this.queued--;
        });
    };
    ws.onerror = () => {
      if (gen === this.generation) this.lastError = `cannot reach the Reins app on port ${port}`;
    };
    ws.onclose = (ev) => {
      if (gen !== this.generation) return;
      const reason = ev && ev.reason ? ev.reason : '';
      if (ev?.code === CLOSE_UNAUTHORIZED && this.state === 'authenticating') {
        this.lastError = `the Reins app refused this browser: ${reason || 'the link proof failed'}`;
        this.o.onAuthFailed?.({ mode: auth.mode, by: 'companion', reason });
      } else if (this.state === 'open' || this.state === 'authenticating') {
        this.lastError = reason ? `the Reins app closed the connection: ${reason}` : 'the Reins app closed the connection';
      }
      if (this.state === 'open' && this.healthy) this.lastHealthyAt = this.now();
      this.teardown();
      this.scheduleRetry(gen);
    };
  }

  async opened(gen, ws, auth) {
    if (gen !== this.generation) return;
    try {
      const hello = await this.o.buildHello();
      if (gen !== this.generation) return;
      ws.send(JSON.stringify(eventFrame('hello', { ...hello, auth: auth.hello() })));
    } catch (err) {
      this.lastError = `cannot say hello: ${err?.message ?? err}`;
      ws.close();
      return;
    }
    this.state = 'authenticating';
    this.status_();
    this.authTimer = this.timers.setTimeout(() => {
      this.authTimer = null;
      if (gen === this.generation && this.state === 'authenticating') {
        this.refuse(gen, ws, auth, `the program on port ${this.port} did not prove it is the Reins app within ${AUTH_TIMEOUT_MS / 1000} s`);
      }
    }, AUTH_TIMEOUT_MS);
  }

  async received(gen, ws, auth, text) {
    if (gen !== this.generation) return;
    if (this.state === 'open') {
      this.markHealthy();
      this.o.onMessage(text);
      return;
    }
    if (this.state !== 'authenticating') return;
    const frame = parseFrame(text);
    try {
      if (frame.kind === 'event' && frame.event === 'auth' && !auth.answered) {
        const answer = await auth.answer(frame.params);
        if (gen !== this.generation) return;
        ws.send(JSON.stringify(eventFrame('auth', answer)));
        // Not awaited: frames queued behind this one need not wait for the
        // tabs listing that onReady sends.
        if (auth.mode === 'key') this.ready(gen, ws);
        return;
      }
      if (frame.kind === 'event' && frame.event === 'auth.key' && auth.answered && auth.mode === 'code') {
        const key = await auth.receiveKey(frame.params);
        if (gen !== this.generation) return;
        await this.o.onKey?.(key);
        this.ready(gen, ws);
        return;
      }
    } catch (err) {
      if (!(err instanceof LinkAuthError)) this.log.warn('reins: link handshake failed', err);
      this.refuse(gen, ws, auth, err?.message ?? String(err));
      return;
    }
    // Anything else before the proof (a request, a policy) is not obeyed.
    this.refuse(gen, ws, auth, `the program on port ${this.port} spoke before proving it is the Reins app`);
  }

  /** Closes a peer that failed the handshake; nothing it sent is acted on. */
  refuse(gen, ws, auth, message) {
    if (gen !== this.generation) return;
    this.lastError = message;
    try {
      ws.close(CLOSE_UNAUTHORIZED, 'link proof failed');
    } catch {
      // already closed
    }
    this.o.onAuthFailed?.({ mode: auth.mode, by: 'extension', reason: message });
    this.teardown();
    this.scheduleRetry(gen);
  }

  async ready(gen, ws) {
    if (gen !== this.generation) return;
    if (this.authTimer !== null) {
      this.timers.clearTimeout(this.authTimer);
      this.authTimer = null;
    }
    this.state = 'open';
    this.lastError = '';
    this.pingTimer = this.timers.setInterval(() => {
      // A companion that kept us through one ping interval accepted us.
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
   * companion that closes right after the handshake (a blocked profile) is
   * not hammered every second.
   */
  markHealthy() {
    if (this.healthy) return;
    this.healthy = true;
    this.attempt = 0;
    this.lastHealthyAt = this.now();
    this.o.onHealthy?.();
  }

  scheduleRetry(gen) {
    if (gen !== this.generation) return;
    const { delay, fast } = retryDelay(this.attempt, this.lastHealthyAt === null ? null : this.now() - this.lastHealthyAt);
    if (!fast) this.attempt++;
    this.state = 'waiting';
    this.retryAt = this.now() + delay;
    this.retryTimer = this.timers.setTimeout(() => {
      this.retryTimer = null;
      if (gen === this.generation && this.state === 'waiting') this.connect();
    }, delay);
    this.status_();
  }

  teardown() {
    for (const [timer, clear] of [
      ['pingTimer', 'clearInterval'],
      ['retryTimer', 'clearTimeout'],
      ['authTimer', 'clearTimeout'],
    ]) {
      if (this[timer] !== null) {
        this.timers[clear](this[timer]);
        this[timer] = null;
      }
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
