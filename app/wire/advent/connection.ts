/**
 * One Advent TCP connection and its lifecycle (protocols/advent.md §1, §4, §5; DESIGN §3):
 *
 *   idle → connecting → authenticating → ready → reconnecting(attempt, nextAt) → … → offline(reason)
 *
 * AUTH is the first frame; the server's success reply is unknown, so a connection is ready when a
 * non-error frame arrives or a short grace period passes quietly. An error-looking STATUS, or the
 * server hanging up right after AUTH, is an auth failure: shown with the server's raw text and not
 * retried (retrying a refused token only hammers the server). Everything else that breaks the link
 * reconnects with capped exponential backoff plus jitter. `stop()` says goodbye with the
 * `##DISCONNECT` handshake and leaves no timer or socket behind.
 */
import net from 'node:net';
import { type Clock, systemClock } from '../../clock.js';
import type { ConnectionState } from '../../contract/connection.js';
import { Emitter } from '../../events.js';
import { type IdSource, cryptoIds } from '../../ids.js';
import { backoffDelay } from '../kit/backoff.js';
import { NamedTimers } from '../kit/timers.js';
import {
  type AuthParams,
  buildAuthPayload,
  checkAuthInputs,
  looksLikeAuthFailure,
  tokenExpiry,
} from './auth.js';
import {
  type DecodeIssue,
  type Frame,
  FrameDecoder,
  FrameType,
  type KnownFrameType,
  SYSTEM_TASK,
  encodeFrame,
  taskKey,
} from './frame.js';

export interface Timing {
  connectTimeoutMs: number;
  /** Quiet time after AUTH after which the session counts as authenticated. */
  authGraceMs: number;
  /** A hang-up this soon after AUTH, before any frame, is an auth failure. */
  authFailWindowMs: number;
  /** Send `##PING` after this long without sending anything (the server drops at 5 min). */
  pingIdleMs: number;
  /** No byte at all this long after a ping: the link is dead, reconnect. */
  pongTimeoutMs: number;
  disconnectWaitMs: number;
  backoffInitialMs: number;
  backoffMaxMs: number;
  backoffFactor: number;
  /** ± this fraction of the delay, so many clients do not reconnect in step. */
  jitter: number;
  /** Ready this long: the next failure starts backoff from the beginning again. */
  healthyResetMs: number;
  tokenWarnBeforeMs: number;
  /** Idle moment after which a held audio frame is delivered (see FrameDecoder). */
  tentativeFlushMs: number;
}

export const DEFAULT_TIMING: Timing = {
  connectTimeoutMs: 10_000,
  authGraceMs: 1_500,
  authFailWindowMs: 3_000,
  pingIdleMs: 240_000,
  pongTimeoutMs: 30_000,
  disconnectWaitMs: 3_000,
  backoffInitialMs: 1_000,
  backoffMaxMs: 60_000,
  backoffFactor: 2,
  jitter: 0.25,
  healthyResetMs: 60_000,
  tokenWarnBeforeMs: 10 * 60_000,
  // Only a chunk split right after a `##END` inside audio bytes needs the wait, and the rest of a
  // split write arrives within a millisecond or two; every reply audio frame pays it, so keep it short.
  tentativeFlushMs: 5,
};

export interface AdventConnectionOptions {
  host: string;
  port: number;
  /** Read on every (re)connect, so a token changed in settings is picked up. */
  token: () => Promise<string> | string;
  authParams?: AuthParams;
  clock?: Clock;
  ids?: IdSource;
  timing?: Partial<Timing>;
  maxFrameBytes?: number;
}

export type ConnectionEvents = {
  state: ConnectionState;
  /** Every decoded frame except the STATUS frames the connection consumes itself. */
  frame: Frame;
  /** STATUS text from the server (`##INFO:…`, errors), for the user to see. */
  status: string;
  /** Each time the connection becomes ready (first connect and every reconnect). */
  ready: undefined;
  /** Something odd on the wire, worth a log line (raw bytes dropped, unknown types…). */
  issue: { message: string };
  tokenExpiring: { expiresAt: number };
};

export class AdventConnection {
  readonly events = new Emitter<ConnectionEvents>();
  private readonly clock: Clock;
  private readonly ids: IdSource;
  private readonly timing: Timing;

  private current: ConnectionState = { status: 'idle' };
  private running = false;
  private socket: net.Socket | undefined;
  private attempt = 0;
  private lastError = '';

  private readonly timers: NamedTimers;
  /** Per-socket facts, reset on each connect. */
  private authSentAt = 0;
  private framesSinceAuth = 0;
  private authFailure: string | undefined;
  private disconnectAnswered: (() => void) | undefined;

  constructor(private readonly options: AdventConnectionOptions) {
    this.clock = options.clock ?? systemClock;
    this.ids = options.ids ?? cryptoIds;
    this.timing = { ...DEFAULT_TIMING, ...options.timing };
    this.timers = new NamedTimers(this.clock);
  }

  get state(): ConnectionState {
    return this.current;
  }

  get isReady(): boolean {
    return this.current.status === 'ready';
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.attempt = 0;
    void this.connect();
  }

  /** Goodbye handshake if the link is up, then close everything. Always resolves. */
  async stop(): Promise<void> {
    if (!this.running && !this.socket) return;
    this.running = false;
    this.timers.clear('reconnect');
    const socket = this.socket;
    if (socket && !socket.destroyed && this.current.status === 'ready') {
      await new Promise<void>((resolve) => {
        this.disconnectAnswered = resolve;
        socket.once('close', () => resolve());
        this.timers.set('disconnect', this.timing.disconnectWaitMs, resolve);
        this.write(FrameType.STATUS, SYSTEM_TASK, 0, '##DISCONNECT');
      });
    }
    this.disconnectAnswered = undefined;
    this.teardownSocket();
    this.timers.clearAll();
    this.setState({ status: 'offline', reason: 'stopped', message: 'disconnected' });
  }

  /** Send a frame; false when the link is not up (the caller reports it, nothing is queued). */
  send(type: KnownFrameType, taskId: string, seq: number, payload?: string | Uint8Array): boolean {
    if (this.current.status !== 'ready' && this.current.status !== 'authenticating') return false;
    return this.write(type, taskId, seq, payload);
  }

  /** Number of timers alive: zero after stop() (tests check that nothing is left behind). */
  get pendingTimers(): number {
    return this.timers.size;
  }

  // -------------------------------------------------------------------------------------------

  private async connect(): Promise<void> {
    if (!this.running) return;
    this.attempt += 1;
    this.setState({ status: 'connecting', attempt: this.attempt });

    let token: string;
    try {
      token = await this.options.token();
    } catch (err) {
      return this.goOffline('config', `the token could not be read: ${errorText(err)}`);
    }
    if (!this.running) return;
    const params = this.options.authParams ?? {};
    const problem = checkAuthInputs(token, params);
    if (problem) return this.goOffline('config', problem);
    const exp = tokenExpiry(token);
    if (exp !== undefined && exp <= this.clock.now()) {
      return this.goOffline(
        'token_expired',
        `the token expired at ${new Date(exp).toISOString()}; get a new token and connect again`,
      );
    }

    const socket = net.connect({ host: this.options.host, port: this.options.port });
    this.socket = socket;
    this.authSentAt = 0;
    this.framesSinceAuth = 0;
    this.authFailure = undefined;
    const decoder = new FrameDecoder({
      maxFrameBytes: this.options.maxFrameBytes,
      onIssue: (issue) => this.onDecodeIssue(issue, socket),
    });

    this.timers.set('connect', this.timing.connectTimeoutMs, () =>
      socket.destroy(
        new Error(
          `no answer from ${this.options.host}:${this.options.port} within ${this.timing.connectTimeoutMs / 1000} s`,
        ),
      ),
    );
    socket.setNoDelay(true);
    socket.on('connect', () => {
      this.timers.clear('connect');
      // AUTH must be the first frame, within 5 s of connecting: send it at once, before anyone
      // told of the new state can send anything else (the session registers right after AUTH).
      this.authSentAt = this.clock.now();
      this.write(FrameType.AUTH, SYSTEM_TASK, 0, buildAuthPayload(token, params));
      this.setState({ status: 'authenticating' });
      this.timers.set('authGrace', this.timing.authGraceMs, () => this.becomeReady());
      if (exp !== undefined) this.scheduleTokenWarning(exp);
    });
    socket.on('data', (chunk: Buffer) => {
      if (socket !== this.socket) return;
      this.timers.clear('pong');
      for (const frame of decoder.push(chunk)) this.onFrame(frame);
      if (decoder.hasTentative) {
        this.timers.set('flush', this.timing.tentativeFlushMs, () => {
          for (const frame of decoder.flush()) this.onFrame(frame);
        });
      } else {
        this.timers.clear('flush');
      }
    });
    socket.on('error', (err: NodeJS.ErrnoException) => {
      this.lastError = describeSocketError(err, this.options.host, this.options.port);
    });
    socket.on('close', () => {
      if (socket !== this.socket) return;
      for (const frame of decoder.finish()) this.onFrame(frame);
      this.onClose();
    });
  }

  private onFrame(frame: Frame): void {
    this.framesSinceAuth += 1;
    if (frame.type === FrameType.STATUS && taskKey(frame.taskId) === SYSTEM_TASK) {
      this.onStatus(frame.payload.toString('utf8'));
      return;
    }
    if (this.current.status === 'authenticating') this.becomeReady();
    this.events.emit('frame', frame);
  }

  private onStatus(text: string): void {
    if (this.current.status === 'authenticating') {
      if (looksLikeAuthFailure(text)) {
        this.authFailure = text;
        this.socket?.destroy();
        return;
      }
      this.becomeReady();
    }
    if (/^##INFO:DISCONNECT/i.test(text) && this.disconnectAnswered) {
      this.disconnectAnswered();
      return;
    }
    if (/^##INFO:PONG/i.test(text)) return;
    this.events.emit('status', text);
  }

  private becomeReady(): void {
    if (this.current.status !== 'authenticating') return;
    this.timers.clear('authGrace');
    this.setState({ status: 'ready', since: this.clock.now() });
    this.timers.set('healthy', this.timing.healthyResetMs, () => {
      this.attempt = 0;
    });
    this.armPing();
    this.events.emit('ready', undefined);
  }

  private onClose(): void {
    const wasAuthenticating = this.current.status === 'authenticating';
    const quickHangUp =
      wasAuthenticating &&
      this.framesSinceAuth === 0 &&
      this.authSentAt > 0 &&
      this.clock.now() - this.authSentAt <= this.timing.authFailWindowMs;
    this.teardownSocket();
    if (!this.running) return;

    if (this.authFailure !== undefined) {
      return this.goOffline('auth_failed', `the server refused the login: ${this.authFailure}`);
    }
    if (quickHangUp) {
      return this.goOffline(
        'auth_failed',
        'the server closed the connection right after login; the token may be invalid or expired',
      );
    }
    this.scheduleReconnect(this.lastError || 'the connection was closed by the server');
  }

  private scheduleReconnect(reason: string): void {
    const delay = backoffDelay(this.attempt, this.timing, this.ids.random());
    const nextAt = this.clock.now() + delay;
    this.lastError = '';
    this.setState({ status: 'reconnecting', attempt: this.attempt + 1, nextAt, lastError: reason });
    this.timers.set('reconnect', delay, () => void this.connect());
  }

  private goOffline(reason: 'auth_failed' | 'token_expired' | 'config', message: string): void {
    this.running = false;
    this.teardownSocket();
    this.timers.clearAll();
    this.setState({ status: 'offline', reason, message });
  }

  private armPing(): void {
    this.timers.set('ping', this.timing.pingIdleMs, () => {
      // One outstanding ping at a time: re-pinging must not push the deadline of the first back.
      if (this.current.status !== 'ready' || this.timers.has('pong')) return;
      this.write(FrameType.STATUS, SYSTEM_TASK, 0, '##PING');
      const socket = this.socket;
      this.timers.set('pong', this.timing.pongTimeoutMs, () => {
        this.lastError = `no answer to the heartbeat within ${this.timing.pongTimeoutMs / 1000} s`;
        socket?.destroy();
      });
    });
  }

  private scheduleTokenWarning(exp: number): void {
    const at = exp - this.timing.tokenWarnBeforeMs;
    this.timers.set('tokenWarn', Math.max(0, at - this.clock.now()), () =>
      this.events.emit('tokenExpiring', { expiresAt: exp }),
    );
  }

  private write(
    type: KnownFrameType,
    taskId: string,
    seq: number,
    payload?: string | Uint8Array,
  ): boolean {
    const socket = this.socket;
    if (!socket || socket.destroyed || !socket.writable) return false;
    socket.write(encodeFrame(type, taskId, seq, payload));
    if (this.current.status === 'ready') this.armPing();
    return true;
  }

  private onDecodeIssue(issue: DecodeIssue, socket: net.Socket): void {
    switch (issue.kind) {
      case 'garbage':
        this.events.emit('issue', {
          message: `dropped ${issue.bytes} bytes that were not part of a frame`,
        });
        break;
      case 'unknown_type':
        this.events.emit('issue', {
          message: `skipped a frame of unknown type ${issue.type} (task '${issue.taskId}', ${issue.bytes} bytes)`,
        });
        break;
      case 'truncated':
        this.events.emit('issue', {
          message: `the connection ended in the middle of a frame (${issue.bytes} bytes lost)`,
        });
        break;
      case 'frame_too_large':
        // A protocol error: the stream cannot be trusted any more, so start afresh.
        this.lastError = `the server sent a frame larger than ${issue.limit} bytes (type ${issue.type}); reconnecting`;
        this.events.emit('issue', { message: this.lastError });
        socket.destroy();
        break;
    }
  }

  private teardownSocket(): void {
    for (const name of [
      'connect',
      'authGrace',
      'ping',
      'pong',
      'flush',
      'healthy',
      'tokenWarn',
      'disconnect',
    ]) {
      this.timers.clear(name);
    }
    const socket = this.socket;
    this.socket = undefined;
    if (socket && !socket.destroyed) socket.destroy();
  }

  private setState(state: ConnectionState): void {
    this.current = state;
    this.events.emit('state', state);
  }
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function describeSocketError(err: NodeJS.ErrnoException, host: string, port: number): string {
  switch (err.code) {
    case 'ECONNREFUSED':
      return `nothing is listening at ${host}:${port} (connection refused)`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `the server name '${host}' could not be resolved`;
    case 'ECONNRESET':
      return 'the server reset the connection';
    case 'ETIMEDOUT':
      return `the connection to ${host}:${port} timed out`;
    default:
      return err.message;
  }
}
