/**
 * One outgoing WebSocket and its lifecycle, shared by every WebSocket dialect (XiaoZhi device,
 * XiaoZhi MCP endpoint, robot JSON-RPC). Same states as the Advent link (DESIGN §3):
 *
 *   idle → connecting → authenticating (only with `awaitReady`) → ready → reconnecting → … → offline
 *
 * - A refused upgrade (HTTP 401/403) is an auth failure: offline with the server's status, no retry.
 * - A URL that cannot be dialled at all is a configuration error: offline, no retry.
 * - Anything else that breaks the link reconnects with capped exponential backoff plus jitter;
 *   a link healthy for a minute starts the backoff from the beginning again.
 * - With `awaitReady`, the dialect does its own greeting (XiaoZhi hello) and calls `markReady()`;
 *   no ready within `handshakeTimeoutMs` fails the attempt with a clear message.
 * - WebSocket pings keep the link honest: no pong in time → the link is dead, reconnect.
 * - Secrets in the URL (`?token=`) never reach a state message or a log line (`redactUrl`).
 */
import WebSocket from 'ws';
import { type Clock, systemClock } from '../../clock.js';
import type { ConnectionState } from '../../contract/connection.js';
import { Emitter } from '../../events.js';
import { type IdSource, cryptoIds } from '../../ids.js';
import { backoffDelay } from './backoff.js';
import { NamedTimers } from './timers.js';

export interface WsTiming {
  connectTimeoutMs: number;
  /** With `awaitReady`: the dialect's greeting must finish this soon after the socket opens. */
  handshakeTimeoutMs: number;
  /** A WebSocket ping after this long; 0 turns pings off. */
  pingIntervalMs: number;
  pongTimeoutMs: number;
  closeWaitMs: number;
  backoffInitialMs: number;
  backoffMaxMs: number;
  backoffFactor: number;
  jitter: number;
  healthyResetMs: number;
}

export const DEFAULT_WS_TIMING: WsTiming = {
  connectTimeoutMs: 10_000,
  handshakeTimeoutMs: 10_000,
  pingIntervalMs: 30_000,
  pongTimeoutMs: 15_000,
  closeWaitMs: 2_000,
  backoffInitialMs: 1_000,
  backoffMaxMs: 60_000,
  backoffFactor: 2,
  jitter: 0.25,
  healthyResetMs: 60_000,
};

export interface WsLinkOptions {
  /** Read on every (re)connect, so a token changed in settings is picked up. */
  url: () => Promise<string> | string;
  headers?: () => Promise<Record<string, string>> | Record<string, string>;
  /** The dialect greets first and calls `markReady()` (XiaoZhi hello); otherwise ready on open. */
  awaitReady?: boolean;
  clock?: Clock;
  ids?: IdSource;
  timing?: Partial<WsTiming>;
  /** Larger incoming messages close the link (ws answers 1009). */
  maxMessageBytes?: number;
}

export type WsLinkEvents = {
  state: ConnectionState;
  /** The socket is open (before the dialect's greeting): send the greeting now. */
  open: undefined;
  /** Each time the link becomes ready (first connect and every reconnect). */
  ready: undefined;
  text: string;
  binary: Buffer;
  /** Something odd worth a log line. Never contains secrets. */
  issue: { message: string };
};

/** Thrown by `url()`/`headers()` for settings that cannot work: offline, not retried. */
export class LinkConfigError extends Error {}

export class WsLink {
  readonly events = new Emitter<WsLinkEvents>();
  private readonly clock: Clock;
  private readonly ids: IdSource;
  private readonly timing: WsTiming;
  private current: ConnectionState = { status: 'idle' };
  private running = false;
  private socket: WebSocket | undefined;
  private attempt = 0;
  private readonly timers: NamedTimers;
  /** Bumped per socket, so events of an old socket are ignored. */
  private generation = 0;

  constructor(private readonly options: WsLinkOptions) {
    this.clock = options.clock ?? systemClock;
    this.ids = options.ids ?? cryptoIds;
    this.timing = { ...DEFAULT_WS_TIMING, ...options.timing };
    this.timers = new NamedTimers(this.clock);
  }

  get state(): ConnectionState {
    return this.current;
  }

  get isReady(): boolean {
    return this.current.status === 'ready';
  }

  /** Open and not closing: greeting messages may be sent (before ready). */
  get isOpen(): boolean {
    return this.socket?.readyState === WebSocket.OPEN;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.attempt = 0;
    void this.connect();
  }

  /** Close the socket (normal closure), cancel every timer; the state ends `offline: stopped`. */
  async stop(): Promise<void> {
    this.running = false;
    this.timers.clearAll();
    const socket = this.socket;
    this.socket = undefined;
    this.generation += 1;
    if (socket && socket.readyState !== WebSocket.CLOSED) {
      await new Promise<void>((resolve) => {
        const done = (): void => {
          this.clock.clearTimeout(wait);
          resolve();
        };
        const wait = this.clock.setTimeout(() => {
          socket.terminate();
          resolve();
        }, this.timing.closeWaitMs);
        socket.once('close', done);
        if (socket.readyState === WebSocket.CONNECTING) socket.terminate();
        else socket.close(1000, 'bye');
      });
    }
    this.setState({ status: 'offline', reason: 'stopped', message: 'disconnected' });
  }

  /**
   * Drop the current socket and dial again at once (no backoff): the dialect wants the server to
   * start over, e.g. a XiaoZhi endpoint that ignores `tools/list_changed` lists again on a new link.
   */
  reconnectNow(reason: string): void {
    if (!this.running) return;
    this.dropSocket();
    this.timers.clearAll();
    this.setState({
      status: 'reconnecting',
      attempt: this.attempt + 1,
      nextAt: this.clock.now(),
      lastError: reason,
    });
    void this.connect();
  }

  /** The dialect's greeting succeeded (only with `awaitReady`). */
  markReady(): void {
    if (this.current.status !== 'authenticating') return;
    this.becomeReady();
  }

  /**
   * The dialect gives up on this socket. `retry: false` = the server refused us (auth) or the
   * settings cannot work: offline with `message`, never hammered again.
   */
  fail(message: string, options: { retry: boolean; reason?: 'auth_failed' | 'config' }): void {
    if (!options.retry) {
      this.running = false;
      this.dropSocket();
      this.timers.clearAll();
      this.setState({ status: 'offline', reason: options.reason ?? 'auth_failed', message });
      return;
    }
    this.dropSocket();
    this.scheduleReconnect(message);
  }

  sendText(text: string): boolean {
    const socket = this.socket;
    if (!socket || socket.readyState !== WebSocket.OPEN) return false;
    socket.send(text);
    return true;
  }

  sendBinary(data: Uint8Array): boolean {
    const socket = this.socket;
    if (!socket || socket.readyState !== WebSocket.OPEN) return false;
    socket.send(data, { binary: true });
    return true;
  }

  // -------------------------------------------------------------------------------------------

  private async connect(): Promise<void> {
    if (!this.running) return;
    this.attempt += 1;
    this.setState({ status: 'connecting', attempt: this.attempt });
    const generation = ++this.generation;
    let url: string;
    let headers: Record<string, string>;
    try {
      url = await this.options.url();
      headers = (await this.options.headers?.()) ?? {};
      new URL(url); // throws on a malformed URL
      if (!/^wss?:$/.test(new URL(url).protocol))
        throw new LinkConfigError(`'${redactUrl(url)}' is not a ws:// or wss:// address`);
    } catch (err) {
      if (generation !== this.generation || !this.running) return;
      // A settings function or the URL parser may quote the URL, token included.
      const message = redactText(
        err instanceof LinkConfigError ? err.message : `cannot connect: ${(err as Error).message}`,
      );
      this.running = false;
      this.setState({ status: 'offline', reason: 'config', message });
      return;
    }
    if (generation !== this.generation || !this.running) return;

    let socket: WebSocket;
    try {
      socket = new WebSocket(url, {
        headers,
        handshakeTimeout: this.timing.connectTimeoutMs,
        maxPayload: this.options.maxMessageBytes ?? 16 * 1024 * 1024,
        perMessageDeflate: false,
      });
    } catch (err) {
      this.running = false;
      this.setState({
        status: 'offline',
        reason: 'config',
        // ws quotes the whole address in some of its errors ("Invalid URL: …").
        message: `cannot connect to ${redactUrl(url)}: ${redactText((err as Error).message)}`,
      });
      return;
    }
    this.socket = socket;
    const mine = (): boolean => generation === this.generation && this.socket === socket;

    socket.on('unexpected-response', (_req, res) => {
      if (!mine()) return;
      const status = res.statusCode ?? 0;
      res.resume();
      const text = `the server refused the connection (HTTP ${status}${res.statusMessage ? ` ${res.statusMessage}` : ''})`;
      if (status === 401 || status === 403) this.fail(text, { retry: false });
      else this.fail(text, { retry: true });
    });
    socket.on('open', () => {
      if (!mine()) return;
      if (this.options.awaitReady) {
        this.setState({ status: 'authenticating' });
        this.timers.set('handshake', this.timing.handshakeTimeoutMs, () =>
          this.fail(
            `the server did not greet us within ${formatDuration(this.timing.handshakeTimeoutMs)}`,
            { retry: true },
          ),
        );
        this.events.emit('open', undefined);
      } else {
        this.events.emit('open', undefined);
        // A listener may have given up on this socket already (fail() in its 'open' handler).
        if (mine()) this.becomeReady();
      }
    });
    socket.on('message', (data, isBinary) => {
      if (!mine()) return;
      const buf = toBuffer(data);
      if (isBinary) this.events.emit('binary', buf);
      else this.events.emit('text', buf.toString('utf8'));
    });
    socket.on('pong', () => {
      if (mine()) this.timers.clear('pong');
    });
    socket.on('error', (err) => {
      if (!mine()) return;
      // 'close' follows; keep the reason for the reconnect message.
      lastError = describeSocketError(err);
    });
    let lastError = '';
    socket.on('close', (code, reason) => {
      if (!mine()) return;
      this.socket = undefined;
      const why =
        lastError ||
        `the server closed the connection (${code}${reason.length ? ` ${reason.toString('utf8').slice(0, 200)}` : ''})`;
      this.scheduleReconnect(why);
    });
  }

  private becomeReady(): void {
    this.timers.clear('handshake');
    this.setState({ status: 'ready', since: this.clock.now() });
    this.timers.set('healthy', this.timing.healthyResetMs, () => {
      this.attempt = 0;
    });
    this.schedulePing();
    this.events.emit('ready', undefined);
  }

  private schedulePing(): void {
    if (this.timing.pingIntervalMs <= 0) return;
    this.timers.set('ping', this.timing.pingIntervalMs, () => {
      const socket = this.socket;
      if (!socket || socket.readyState !== WebSocket.OPEN) return;
      socket.ping();
      // The deadline runs from the oldest unanswered ping: re-arming it on every ping would keep
      // pushing it out whenever pings are more frequent than the pong timeout.
      if (!this.timers.has('pong'))
        this.timers.set('pong', this.timing.pongTimeoutMs, () =>
          this.fail(
            `the server stopped answering pings (none for ${formatDuration(this.timing.pongTimeoutMs)})`,
            { retry: true },
          ),
        );
      this.schedulePing();
    });
  }

  private dropSocket(): void {
    const socket = this.socket;
    this.socket = undefined;
    this.generation += 1;
    if (socket) {
      socket.removeAllListeners('close');
      socket.on('error', () => undefined);
      socket.terminate();
    }
  }

  private scheduleReconnect(reason: string): void {
    this.timers.clearAll();
    if (!this.running) return;
    // The cap holds for the jittered delay too: no client waits longer than `backoffMaxMs`.
    const delay = backoffDelay(this.attempt, this.timing, this.ids.random());
    const nextAt = this.clock.now() + delay;
    this.setState({ status: 'reconnecting', attempt: this.attempt + 1, nextAt, lastError: reason });
    this.timers.set('reconnect', delay, () => void this.connect());
  }

  private setState(state: ConnectionState): void {
    this.current = state;
    this.events.emit('state', state);
  }
}

/** Query parameter names whose values are secrets (`token`, `access_token`, `api_key`, `sig`…). */
const SECRET_PARAM = /token|auth|key|secret|pass|jwt|sig|credential/i;

/** The URL with the values of secret-looking query parameters replaced, for messages and logs. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    for (const key of [...new Set(u.searchParams.keys())]) {
      if (SECRET_PARAM.test(key)) u.searchParams.set(key, '***');
    }
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return url
      .replace(
        /([?&][^=&#]*(?:token|auth|key|secret|pass|jwt|sig|credential)[^=&#]*=)[^&#\s]*/gi,
        '$1***',
      )
      .replace(/(\/\/[^/:@\s]*:)[^/@\s]*@/, '$1***@');
  }
}

/** Every ws/wss/http/https URL inside a free text (an error message) passed through `redactUrl`. */
export function redactText(text: string): string {
  // A URL in prose ends at a space, a quote or a closing parenthesis (`(see ws://…)`).
  return text.replace(/\b(?:wss?|https?):\/\/[^\s'"<>()]+/gi, (u) => redactUrl(u));
}

/** `10 s`, `1.5 s`, `250 ms`: readable at any scale (tests use millisecond timeouts). */
function formatDuration(ms: number): string {
  if (ms < 1000) return `${ms} ms`;
  const s = ms / 1000;
  return `${Number.isInteger(s) ? s : s.toFixed(1)} s`;
}

function toBuffer(data: WebSocket.RawData): Buffer {
  if (Buffer.isBuffer(data)) return data;
  if (Array.isArray(data)) return Buffer.concat(data);
  return Buffer.from(data);
}

function describeSocketError(err: Error & { code?: string }): string {
  switch (err.code) {
    case 'ECONNREFUSED':
      return 'the server is not accepting connections (connection refused)';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'the server name could not be found';
    case 'ETIMEDOUT':
      return 'the server did not answer in time';
    default:
      return redactText(err.message);
  }
}
