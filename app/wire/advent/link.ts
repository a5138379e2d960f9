/**
 * The Advent dialect's use of the ReconnectingLink over TCP (protocols/advent.md §1, §4, §5):
 *
 * - AUTH is the first frame on every socket, sent the moment it opens; the token is read (and its
 *   `exp` checked) before each dial, so a token changed in settings is used and a dead one is
 *   never sent: offline `token_expired` instead of a reconnect loop.
 * - The server's success reply is unknown, so the link is ready when a non-error frame arrives or
 *   `authGraceMs` passes quietly. An error-looking STATUS, or the server hanging up right after
 *   AUTH, is a refused login: offline with the server's raw text, never retried.
 * - Heartbeat `##PING` after `pingIdleMs` without sending; any byte back counts as the answer.
 * - Goodbye: once the session has spoken on a socket (AUTH went out), `stop()` sends
 *   `##DISCONNECT` and waits for `##INFO:DISCONNECT` or the close, at most `disconnectWaitMs`.
 * - Frames come with the channel they arrived on; an answer goes back through it (`write`).
 */
import { type Clock, systemClock } from '../../clock.js';
import type { ConnectionState } from '../../contract/connection.js';
import { Emitter } from '../../events.js';
import { type IdSource, cryptoIds } from '../../ids.js';
import { type Disposable, DisposableStore } from '../../lifecycle.js';
import { type Channel, DialError, ReconnectingLink, type Refusal } from '../kit/link.js';
import { MAX_STATUS_CHARS, cutString } from '../kit/bounds.js';
import { TcpDialer } from '../kit/tcp-dialer.js';
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
  /** How long the goodbye (and the close after it) may take before the socket is cut. */
  disconnectWaitMs: number;
  backoffInitialMs: number;
  backoffMaxMs: number;
  backoffFactor: number;
  /** ± this fraction of the delay, so many clients do not reconnect in step. */
  jitter: number;
  /** Ready this long: the next failure starts backoff from the beginning again. */
  healthyResetMs: number;
  tokenWarnBeforeMs: number;
  /**
   * Idle moment after which a held binary frame is closed (see FrameDecoder). Reply audio does not
   * wait for it: the decoder hands a held AUDIO_FRAME on at once (`earlyAudio`).
   */
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
  // split write arrives within a millisecond or two.
  tentativeFlushMs: 5,
};

export interface AdventLinkOptions {
  host: string;
  port: number;
  /** Read on every (re)connect, so a token changed in settings is picked up. */
  token: () => Promise<string> | string;
  authParams?: AuthParams;
  clock?: Clock;
  ids?: IdSource;
  timing?: Partial<Timing>;
  maxFrameBytes?: number;
  /** What keeps the process alive while the link runs (tests). */
  holdProcess?: () => Disposable;
}

export type AdventLinkEvents = {
  state: ConnectionState;
  /** AUTH went out on this socket: the session may speak (register) now. */
  open: Channel;
  /** Each time the login is taken as accepted (first connect and every reconnect). */
  ready: Channel;
  /** Every decoded frame except the STATUS frames the link consumes itself. */
  frame: { channel: Channel; frame: Frame };
  /** STATUS text from the server (`##INFO:…`, errors), for the user to see. */
  status: string;
  /** Something odd on the wire, worth a log line (raw bytes dropped, unknown types…). */
  issue: { message: string };
  tokenExpiring: { expiresAt: number };
};

/** What one socket carries beyond the channel: its decoder and the login's progress. */
interface Conn {
  channel: Channel;
  decoder: FrameDecoder;
  authSentAt: number;
  frames: number;
  /** Resolves the goodbye when the server answers `##DISCONNECT`. */
  answered?: () => void;
}

export class AdventLink {
  readonly events = new Emitter<AdventLinkEvents>();
  private readonly link: ReconnectingLink<Buffer>;
  private readonly clock: Clock;
  private readonly timing: Timing;
  private readonly timers: NamedTimers<'authGrace' | 'flush' | 'tokenWarn'>;
  private readonly store = new DisposableStore();
  private conn: Conn | undefined;
  /** The token read for the dial in progress, used by AUTH when that socket opens. */
  private dialed: { token: string; exp: number | undefined } | undefined;

  constructor(private readonly options: AdventLinkOptions) {
    this.clock = options.clock ?? systemClock;
    this.timing = { ...DEFAULT_TIMING, ...options.timing };
    this.timers = this.store.add(new NamedTimers(this.clock));
    const tcp = new TcpDialer(() => ({ host: options.host, port: options.port }));
    const t = this.timing;
    this.link = new ReconnectingLink<Buffer>({
      dialer: {
        dial: async (events) => {
          await this.prepareDial();
          return tcp.dial(events);
        },
      },
      awaitReady: true,
      clock: this.clock,
      ids: options.ids ?? cryptoIds,
      timing: {
        connectTimeoutMs: t.connectTimeoutMs,
        // The grace period ends the login; the link needs no deadline of its own.
        handshakeTimeoutMs: 0,
        pingIntervalMs: t.pingIdleMs,
        pongTimeoutMs: t.pongTimeoutMs,
        closeWaitMs: t.disconnectWaitMs,
        backoffInitialMs: t.backoffInitialMs,
        backoffMaxMs: t.backoffMaxMs,
        backoffFactor: t.backoffFactor,
        jitter: t.jitter,
        healthyResetMs: t.healthyResetMs,
      },
      heartbeat: 'idle',
      ping: (channel) => this.write(channel, FrameType.STATUS, SYSTEM_TASK, 0, '##PING'),
      goodbye: (channel) => this.goodbye(channel),
      closed: (channel) => this.onClosed(channel),
      holdProcess: options.holdProcess,
    });
    const l = this.link.events;
    this.store.add(l.on('open', (channel) => this.onOpen(channel)));
    this.store.add(l.on('ready', (channel) => this.onReady(channel)));
    this.store.add(l.on('message', ({ channel, data }) => this.onData(channel, data)));
    this.store.add(l.on('issue', (issue) => this.events.emit('issue', issue)));
    this.store.add(l.on('state', (s) => this.onState(s)));
  }

  get state(): ConnectionState {
    return this.link.state;
  }

  get isReady(): boolean {
    return this.link.isReady;
  }

  /** Timers alive (the link's and the dialect's): zero after stop(). */
  get pendingTimers(): number {
    return this.link.pendingTimers + this.timers.size;
  }

  /** The current socket's channel, if one is open. */
  get openChannel(): Channel | undefined {
    return this.link.openChannel;
  }

  get liveSockets(): number {
    return this.link.liveSockets;
  }

  get holdsProcess(): boolean {
    return this.link.holdsProcess;
  }

  start(): void {
    this.link.start();
  }

  /** Goodbye handshake if the session has spoken, then close everything. Always resolves. */
  async stop(): Promise<void> {
    await this.link.stop();
    this.endConn();
  }

  /** Dial again at once (not a failure: the backoff does not grow). */
  reconnect(reason: string): boolean {
    return this.link.reconnect(reason);
  }

  /** Send on the current socket; false when the link is not up (nothing is queued). */
  send(type: KnownFrameType, taskId: string, seq: number, payload?: string | Uint8Array): boolean {
    const status = this.link.state.status;
    if (status !== 'ready' && status !== 'authenticating') return false;
    const channel = this.link.openChannel;
    return channel ? this.write(channel, type, taskId, seq, payload) : false;
  }

  /** Send on `channel` (an answer goes back where its call came from); false once it is gone. */
  write(
    channel: Channel,
    type: KnownFrameType,
    taskId: string,
    seq: number,
    payload?: string | Uint8Array,
  ): boolean {
    if (!channel.open) return false;
    return channel.send(encodeFrame(type, taskId, seq, payload));
  }

  // -------------------------------------------------------------------------------------------

  /** Before each dial: a token that can be sent, and has not expired. */
  private async prepareDial(): Promise<void> {
    let token: string;
    try {
      token = await this.options.token();
    } catch (err) {
      throw new DialError(`the token could not be read: ${errorText(err)}`, 'config');
    }
    const problem = checkAuthInputs(token, this.options.authParams ?? {});
    if (problem) throw new DialError(problem, 'config');
    const exp = tokenExpiry(token);
    if (exp !== undefined && exp <= this.clock.now())
      throw new DialError(
        `the token expired at ${new Date(exp).toISOString()}; get a new token and connect again`,
        'token_expired',
      );
    this.dialed = { token, exp };
  }

  private onOpen(channel: Channel): void {
    const dialed = this.dialed;
    this.dialed = undefined;
    this.endConn();
    if (!dialed) {
      // Every dial reads the token first; a socket without one cannot log in.
      this.link.fail('no token was read for this connection', { retry: true, channel });
      return;
    }
    const conn: Conn = {
      channel,
      authSentAt: this.clock.now(),
      frames: 0,
      decoder: new FrameDecoder({
        maxFrameBytes: this.options.maxFrameBytes,
        // Reply audio is read as one stream per task (turns.ts, voice.ts): a frame may come in
        // two pieces, and it never waits for the idle moment that settles where it ends.
        earlyAudio: true,
        onIssue: (issue) => this.onDecodeIssue(issue, channel),
      }),
    };
    this.conn = conn;
    // AUTH must be the first frame, within 5 s of connecting: sent before anyone else may speak.
    this.write(
      channel,
      FrameType.AUTH,
      SYSTEM_TASK,
      0,
      buildAuthPayload(dialed.token, this.options.authParams ?? {}),
    );
    if (dialed.exp !== undefined) this.scheduleTokenWarning(dialed.exp);
    this.events.emit('open', channel);
  }

  private onReady(channel: Channel): void {
    this.timers.clear('authGrace');
    this.events.emit('ready', channel);
  }

  private onState(s: ConnectionState): void {
    if (s.status !== 'ready' && s.status !== 'authenticating') this.endConn();
    this.events.emit('state', s);
    // The grace period starts once the session has registered (it does so on this state): the
    // time that takes is not the server's silence.
    const conn = this.conn;
    if (s.status === 'authenticating' && conn)
      this.timers.set('authGrace', this.timing.authGraceMs, () =>
        this.link.markReady(conn.channel),
      );
  }

  private onData(channel: Channel, chunk: Buffer): void {
    const conn = this.conn;
    if (!conn || conn.channel !== channel) return;
    for (const frame of conn.decoder.push(chunk)) this.onFrame(conn, frame);
    if (conn.decoder.hasTentative) {
      this.timers.set('flush', this.timing.tentativeFlushMs, () => {
        if (this.conn !== conn) return;
        for (const frame of conn.decoder.flush()) this.onFrame(conn, frame);
      });
    } else {
      this.timers.clear('flush');
    }
  }

  private onFrame(conn: Conn, frame: Frame): void {
    if (this.conn !== conn) return; // a frame before this one ended the socket
    conn.frames += 1;
    if (frame.type === FrameType.STATUS && taskKey(frame.taskId) === SYSTEM_TASK) {
      this.onStatus(conn, frame.payload.toString('utf8'));
      return;
    }
    if (this.link.state.status === 'authenticating') this.link.markReady(conn.channel);
    this.events.emit('frame', { channel: conn.channel, frame });
  }

  private onStatus(conn: Conn, text: string): void {
    if (this.link.state.status === 'authenticating') {
      if (looksLikeAuthFailure(text)) {
        this.link.fail(`the server refused the login: ${cutString(text, MAX_STATUS_CHARS)}`, {
          retry: false,
          reason: 'auth_failed',
          channel: conn.channel,
        });
        return;
      }
      this.link.markReady(conn.channel);
    }
    if (/^##INFO:DISCONNECT/i.test(text) && conn.answered) {
      conn.answered();
      return;
    }
    if (/^##INFO:PONG/i.test(text)) return;
    this.events.emit('status', text);
  }

  private goodbye(channel: Channel): Promise<void> {
    const conn = this.conn;
    if (!conn || conn.channel !== channel) return Promise.resolve();
    const answered = new Promise<void>((resolve) => (conn.answered = resolve));
    this.write(channel, FrameType.STATUS, SYSTEM_TASK, 0, '##DISCONNECT');
    return Promise.race([answered, channel.closed]);
  }

  /** The server closed the socket: deliver what the decoder still holds, then judge the close. */
  private onClosed(channel: Channel): Refusal | undefined {
    const conn = this.conn;
    if (!conn || conn.channel !== channel) return undefined;
    for (const frame of conn.decoder.finish()) this.onFrame(conn, frame);
    const quickHangUp =
      this.conn === conn &&
      this.link.state.status === 'authenticating' &&
      conn.frames === 0 &&
      this.clock.now() - conn.authSentAt <= this.timing.authFailWindowMs;
    if (!quickHangUp) return undefined;
    return {
      reason: 'auth_failed',
      message:
        'the server closed the connection right after login; the token may be invalid or expired',
    };
  }

  private onDecodeIssue(issue: DecodeIssue, channel: Channel): void {
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
      case 'frame_too_large': {
        // A protocol error: the stream cannot be trusted any more, so start afresh.
        const message = `the server sent a frame larger than ${issue.limit} bytes (type ${issue.type}); reconnecting`;
        this.events.emit('issue', { message });
        this.link.fail(message, { retry: true, channel });
        break;
      }
    }
  }

  private scheduleTokenWarning(exp: number): void {
    const at = exp - this.timing.tokenWarnBeforeMs;
    this.timers.set('tokenWarn', Math.max(0, at - this.clock.now()), () =>
      this.events.emit('tokenExpiring', { expiresAt: exp }),
    );
  }

  /** The socket's own state is over: its timers go with it. */
  private endConn(): void {
    this.conn = undefined;
    this.timers.clearAll();
  }
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
