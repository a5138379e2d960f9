/**
 * One reconnecting link, whatever carries it (DESIGN §3): the Advent TCP dialect and every
 * WebSocket dialect run the same machine over a `Dialer` (tcp-dialer.ts, ws-dialer.ts).
 *
 *   idle → connecting → authenticating (only with `awaitReady`) → ready
 *        → reconnecting(attempt, nextAt) → connecting → … → offline(reason)
 *
 * - A refusal (HTTP 401/403, a login the dialect reads as refused, settings that cannot work)
 *   ends offline with the reason and is never retried: retrying a refused token only hammers the
 *   server. Anything else that breaks the link dials again after a capped exponential backoff with
 *   jitter, forever, until `stop()`; a link ready for `healthyResetMs` starts the backoff over.
 * - While it runs, the link keeps the process alive (process-hold.ts), also between two sockets.
 * - Heartbeat: a ping after `pingIntervalMs` (every interval, or only after that long without
 *   sending); no answer — no pong and no byte at all — within `pongTimeoutMs` means the link is
 *   dead, and it dials again.
 * - Each socket is a `Channel`. Everything that arrives comes with the channel it came on, and an
 *   answer goes back through that channel: once its socket is gone, `send` refuses, so a reply
 *   computed for an old socket can never reach the next one (the MCP SDK's protocol layer does
 *   the same by capturing its transport per request).
 * - Backpressure: past `writeHighWaterBytes` waiting to be written, the link stops reading that
 *   socket (the server can send no new calls) until it drains; past `writeMaxBufferedBytes` it
 *   drops the socket, saying why. Work a dialect runs for a socket (`Channel.track`) is bounded
 *   the same way: with `maxCallsInFlight` calls running, reading waits until half have ended.
 * - `reconnect()` is a deliberate redial (the dialect wants the server to start over): the old
 *   socket is closed politely (a WebSocket close frame, code 1000) and the backoff is not grown.
 * - `stop()` says the dialect's goodbye when the link has spoken (Advent `##DISCONNECT`), closes
 *   politely, and leaves no timer, socket or hold behind.
 */
import { setMaxListeners } from 'node:events';
import { type Clock, systemClock } from '../../clock.js';
import type { ConnectionState } from '../../contract/connection.js';
import { Emitter } from '../../events.js';
import { type IdSource, cryptoIds } from '../../ids.js';
import type { Disposable } from '../../lifecycle.js';
import { backoffDelay } from './backoff.js';
import { MAX_CALLS_IN_FLIGHT, WRITE_HIGH_WATER_BYTES, WRITE_MAX_BUFFERED_BYTES } from './bounds.js';
import { holdProcess } from './process-hold.js';
import { NamedTimers } from './timers.js';

/** The listeners one call may add to its socket's `gone` signal (the gate's, the prompt's, the service's). */
const LISTENERS_PER_CALL = 4;

export interface LinkTiming {
  /** The socket must be open this soon after dialling. */
  connectTimeoutMs: number;
  /**
   * With `awaitReady`: the dialect's greeting must finish this soon after the socket opens
   * (0: the dialect keeps its own deadline).
   */
  handshakeTimeoutMs: number;
  /** A ping after this long (see `heartbeat`); 0 turns pings off. */
  pingIntervalMs: number;
  pongTimeoutMs: number;
  /** How long a goodbye and a polite close may take before the socket is cut. */
  closeWaitMs: number;
  backoffInitialMs: number;
  backoffMaxMs: number;
  backoffFactor: number;
  /** ± this fraction of the delay, so many clients do not reconnect in step. */
  jitter: number;
  /** Ready this long: the next failure starts the backoff from the beginning again. */
  healthyResetMs: number;
}

export const DEFAULT_LINK_TIMING: LinkTiming = {
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

/** Why a link gave up for good (offline, not retried). */
export interface Refusal {
  reason: 'auth_failed' | 'config' | 'token_expired';
  message: string;
}

/** A dial that cannot start: with `refusal`, offline for good; without, it is retried. */
export class DialError extends Error {
  constructor(
    message: string,
    readonly refusal?: Refusal['reason'],
  ) {
    super(message);
  }
}

/** What a dialer tells the link about the socket it opened. */
export interface SocketEvents<In> {
  open(): void;
  data(data: In): void;
  /** The transport's own heartbeat was answered (WebSocket pong). */
  pong(): void;
  /** Some of what was waiting to be written has gone out. */
  drain(): void;
  /** Once, however it ended; `refusal` when the server refused us (HTTP 401/403). */
  closed(why: string, refusal?: Refusal): void;
}

/** One socket as the link drives it. */
export interface LinkSocket {
  /** A string goes as text (a WebSocket text frame), bytes as binary. */
  send(data: string | Uint8Array): void;
  readonly bufferedBytes: number;
  pause(): void;
  resume(): void;
  /** The transport's own ping, where it has one (WebSocket); otherwise the dialect pings. */
  ping?(): void;
  /** Close politely (WebSocket close frame with `code`; TCP FIN); `closed` follows. */
  close(code: number, reason: string): void;
  /** Cut at once. */
  destroy(): void;
}

export interface Dialer<In> {
  /**
   * Start opening one socket; resolves as soon as it exists (it reports through `events`), or
   * rejects with a DialError when the attempt cannot even start (settings, a token).
   */
  dial(events: SocketEvents<In>): Promise<LinkSocket>;
}

/** Why a channel stopped reading: its writes are not drained, or too many of its calls run. */
export type PauseReason = 'writes' | 'calls';

/**
 * One socket's channel: what arrived on it is answered through it. It refuses to send once its
 * socket is closed, replaced or stopped.
 */
export class Channel {
  #socket: LinkSocket | undefined;
  #state: 'dialing' | 'open' | 'closing' | 'closed' = 'dialing';
  #spoken = false;
  readonly #pausedBy = new Set<PauseReason>();
  #inFlight = 0;
  /** Calls read while the limit was reached, each waiting for a running one to end. */
  readonly #waiting: Array<() => void> = [];
  #closedResolve!: () => void;
  /** Resolves once the socket has closed (or was cut). */
  readonly closed: Promise<void>;
  /** Made when a call first asks for `gone`; most sockets never need one. */
  #gone: AbortController | undefined;

  /** @internal Made by the link only. */
  constructor(
    /** 1 for the first socket of a link, 2 for the next… (for log lines). */
    readonly id: number,
    private readonly onSent: (channel: Channel) => void,
    private readonly maxInFlight = MAX_CALLS_IN_FLIGHT,
  ) {
    this.closed = new Promise((resolve) => (this.#closedResolve = resolve));
  }

  /** The socket is open and still the link's: sending is possible. */
  get open(): boolean {
    return this.#state === 'open' && this.#socket !== undefined;
  }

  /**
   * Aborted once this socket can no longer carry an answer (closing, closed or cut): whatever the
   * server asked on it, it is no longer waiting for. Calls pass it to the gate, which withdraws
   * their prompts and runs nothing more for them.
   */
  get gone(): AbortSignal {
    if (!this.#gone) {
      this.#gone = new AbortController();
      // Every call running on this socket listens to it (the gate, to withdraw its prompt or stop
      // its service), and at most maxInFlight run at once: so many listeners are expected, not a
      // leak, and Node is told so rather than warning in the user's log.
      setMaxListeners(this.maxInFlight * LISTENERS_PER_CALL, this.#gone.signal);
      if (this.#state === 'closing' || this.#state === 'closed') this.#abortGone();
    }
    return this.#gone.signal;
  }

  #abortGone(): void {
    this.#gone?.abort(new Error('the connection it came on ended'));
  }

  /** Something was sent on it (the dialect has spoken: a goodbye is owed). */
  get spoken(): boolean {
    return this.#spoken;
  }

  get bufferedBytes(): number {
    return this.#socket?.bufferedBytes ?? 0;
  }

  /** Not reading from its socket (see `pausedBy`). */
  get paused(): boolean {
    return this.#pausedBy.size > 0;
  }

  pausedBy(reason: PauseReason): boolean {
    return this.#pausedBy.has(reason);
  }

  /** Calls running for this socket (at most `maxCallsInFlight`). */
  get inFlight(): number {
    return this.#inFlight;
  }

  /** Calls read while the limit was reached, waiting for their turn. */
  get waiting(): number {
    return this.#waiting.length;
  }

  /**
   * Run `work` (answering a call) as one of this socket's calls: at most `maxCallsInFlight` run at
   * once, later ones wait their turn, and while the limit is reached the socket is not read, so
   * a server cannot queue unbounded work by sending calls faster than they end. Resolves as
   * `work` does.
   */
  async track<T>(work: () => Promise<T>): Promise<T> {
    if (this.#inFlight >= this.maxInFlight) {
      // A running call hands its slot over when it ends (the count stays as it is).
      await new Promise<void>((resolve) => this.#waiting.push(resolve));
    } else {
      this.#inFlight += 1;
      if (this.#inFlight >= this.maxInFlight) this.pause('calls');
    }
    try {
      return await work();
    } finally {
      const next = this.#waiting.shift();
      if (next) next();
      else {
        this.#inFlight -= 1;
        if (this.#inFlight <= this.maxInFlight / 2) this.resume('calls');
      }
    }
  }

  /** Send on this socket; false (nothing sent) once it is gone. */
  send(data: string | Uint8Array): boolean {
    if (!this.open) return false;
    this.#socket!.send(data);
    this.#spoken = true;
    this.onSent(this);
    return true;
  }

  /** @internal */ attach(socket: LinkSocket): void {
    this.#socket = socket;
  }

  /** @internal */ markOpen(): void {
    if (this.#state === 'dialing') this.#state = 'open';
  }

  /** @internal */ pause(reason: PauseReason): void {
    if (this.#pausedBy.has(reason)) return;
    this.#pausedBy.add(reason);
    if (this.#pausedBy.size === 1 && this.#state !== 'closed') this.#socket?.pause();
  }

  /** @internal */ resume(reason: PauseReason): void {
    if (!this.#pausedBy.delete(reason)) return;
    if (this.#pausedBy.size === 0 && this.#state !== 'closed') this.#socket?.resume();
  }

  /** @internal */ ping(): void {
    this.#socket?.ping?.();
  }

  /** @internal A polite close: nothing more is sent; `closed` resolves when the peer agrees. */
  closePolitely(code: number, reason: string): void {
    if (this.#state === 'closed' || this.#state === 'closing') return;
    const wasOpen = this.#state === 'open';
    this.#state = 'closing';
    this.#abortGone();
    if (!wasOpen || !this.#socket) return this.cut();
    this.#socket.close(code, reason);
  }

  /** @internal The socket is gone (or is cut now). */
  cut(): void {
    if (this.#state === 'closed') return;
    this.#state = 'closed';
    this.#pausedBy.clear();
    this.#socket?.destroy();
    this.#closedResolve();
    this.#abortGone();
  }

  /** @internal The socket reported its end. */
  markClosed(): boolean {
    if (this.#state === 'closed') return false;
    this.#state = 'closed';
    this.#pausedBy.clear();
    this.#closedResolve();
    this.#abortGone();
    return true;
  }
}

export interface LinkOptions<In> {
  dialer: Dialer<In>;
  /** The dialect greets first and calls `markReady()` (XiaoZhi hello); otherwise ready on open. */
  awaitReady?: boolean;
  clock?: Clock;
  ids?: IdSource;
  timing?: Partial<LinkTiming>;
  /**
   * `interval` (default): a ping every `pingIntervalMs`. `idle`: only after that long without
   * sending anything (the Advent server drops links idle for 5 minutes; pinging more is noise).
   */
  heartbeat?: 'interval' | 'idle';
  /** How to ping; default the transport's ping (WebSocket ping frame). */
  ping?: (channel: Channel) => void;
  /**
   * Said when stopping a link that has spoken, before closing (Advent `##DISCONNECT`); resolves
   * when the server has answered. Bounded by `closeWaitMs`.
   */
  goodbye?: (channel: Channel) => Promise<void>;
  /** A socket closed by the other side: the dialect may read that as a refusal. */
  closed?: (channel: Channel, why: string) => Refusal | undefined;
  /** What keeps the process alive while the link runs (tests may count holds). */
  holdProcess?: () => Disposable;
  writeHighWaterBytes?: number;
  writeMaxBufferedBytes?: number;
  /** Calls running per socket before the link stops reading it (see `Channel.track`). */
  maxCallsInFlight?: number;
}

export type LinkEvents<In> = {
  state: ConnectionState;
  /** A socket is open (before the dialect's greeting): greet now, on this channel. */
  open: Channel;
  /** Each time the link becomes ready (first connect and every reconnect). */
  ready: Channel;
  /** Something arrived, on this channel. */
  message: { channel: Channel; data: In };
  /** Something odd worth a log line. Never contains secrets. */
  issue: { message: string };
};

type TimerName = 'connect' | 'handshake' | 'ping' | 'pong' | 'healthy' | 'reconnect';
const PER_SOCKET: TimerName[] = ['connect', 'handshake', 'ping', 'pong', 'healthy'];

export class ReconnectingLink<In> {
  readonly events = new Emitter<LinkEvents<In>>();
  private readonly clock: Clock;
  private readonly ids: IdSource;
  private readonly timing: LinkTiming;
  private readonly timers: NamedTimers<TimerName>;
  private current: ConnectionState = { status: 'idle' };
  private running = false;
  private attempt = 0;
  private channelSeq = 0;
  private channel: Channel | undefined;
  /** Sockets closing politely after a deliberate reconnect; cut if they take too long. */
  private readonly retiring = new Set<Channel>();
  private hold: Disposable | undefined;
  private stopping: Promise<void> | undefined;

  constructor(private readonly options: LinkOptions<In>) {
    this.clock = options.clock ?? systemClock;
    this.ids = options.ids ?? cryptoIds;
    this.timing = { ...DEFAULT_LINK_TIMING, ...options.timing };
    this.timers = new NamedTimers(this.clock);
  }

  get state(): ConnectionState {
    return this.current;
  }

  get isReady(): boolean {
    return this.current.status === 'ready';
  }

  /** A socket is open (possibly still greeting): greeting messages may be sent. */
  get isOpen(): boolean {
    return this.channel?.open === true;
  }

  /** The current socket's channel, if one is open. */
  get openChannel(): Channel | undefined {
    return this.channel?.open ? this.channel : undefined;
  }

  /** Timers, sockets and holds alive: zero after `stop()`. */
  get pendingTimers(): number {
    return this.timers.size;
  }

  get liveSockets(): number {
    return (this.channel ? 1 : 0) + this.retiring.size;
  }

  get holdsProcess(): boolean {
    return this.hold !== undefined;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.attempt = 0;
    this.hold ??= (this.options.holdProcess ?? holdProcess)();
    void this.connect();
  }

  /** Send on the current socket; false when none is open (the caller says so, nothing queues). */
  send(data: string | Uint8Array): boolean {
    return this.channel?.send(data) ?? false;
  }

  /** The dialect's greeting succeeded (only with `awaitReady`). */
  markReady(channel?: Channel): void {
    const ch = this.channel;
    if (!ch || (channel && channel !== ch) || this.current.status !== 'authenticating') return;
    this.becomeReady(ch);
  }

  /**
   * The dialect gives up on a socket (the current one, or `channel` if it is still current).
   * `retry: false` = the server refused us or the settings cannot work: offline, never retried.
   */
  fail(
    message: string,
    options: { retry: boolean; reason?: Refusal['reason']; channel?: Channel },
  ): void {
    if (!this.running) return;
    if (options.channel && options.channel !== this.channel) return;
    this.dropChannel();
    if (!options.retry) this.goOffline({ reason: options.reason ?? 'auth_failed', message });
    else this.scheduleReconnect(message);
  }

  /**
   * Close the current socket politely and dial again at once, without counting it as a failure
   * (the backoff does not grow). False when there is no open socket to replace.
   */
  reconnect(reason: string): boolean {
    const old = this.channel;
    if (!this.running || !old?.open) return false;
    this.channel = undefined;
    this.clearSocketTimers();
    this.retire(old);
    // A deliberate redial is no failure: an outage after it starts the backoff from the start.
    this.attempt = 0;
    this.setState({
      status: 'reconnecting',
      attempt: 1,
      nextAt: this.clock.now(),
      lastError: reason,
    });
    void this.connect();
    return true;
  }

  /** Goodbye (if the link has spoken), a polite close, then nothing left. Always resolves. */
  stop(): Promise<void> {
    this.stopping ??= this.finish().finally(() => (this.stopping = undefined));
    return this.stopping;
  }

  // -------------------------------------------------------------------------------------------

  private async finish(): Promise<void> {
    this.running = false;
    this.timers.clear('reconnect');
    const channel = this.channel;
    if (channel?.open) {
      const deadline = this.clock.now() + this.timing.closeWaitMs;
      if (this.options.goodbye && channel.spoken)
        await this.within(this.options.goodbye(channel), deadline);
      channel.closePolitely(1000, 'bye');
      await this.within(channel.closed, deadline);
    }
    this.dropChannel();
    for (const old of this.retiring) old.cut();
    this.retiring.clear();
    this.timers.clearAll();
    this.hold?.dispose();
    this.hold = undefined;
    if (this.current.status !== 'offline' || this.current.reason !== 'stopped')
      this.setState({ status: 'offline', reason: 'stopped', message: 'disconnected' });
  }

  /** `promise`, or the deadline, whichever comes first. */
  private within(promise: Promise<unknown>, deadline: number): Promise<void> {
    const ms = deadline - this.clock.now();
    if (ms <= 0) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const timer = this.clock.setTimeout(resolve, ms);
      const done = (): void => {
        this.clock.clearTimeout(timer);
        resolve();
      };
      promise.then(done, done);
    });
  }

  private async connect(): Promise<void> {
    if (!this.running) return;
    this.attempt += 1;
    this.setState({ status: 'connecting', attempt: this.attempt });
    const channel = new Channel(
      ++this.channelSeq,
      (ch) => this.onSent(ch),
      this.options.maxCallsInFlight,
    );
    this.channel = channel;
    let socket: LinkSocket;
    try {
      socket = await this.options.dialer.dial(this.socketEvents(channel));
    } catch (err) {
      if (this.channel !== channel || !this.running) return;
      this.channel = undefined;
      channel.cut();
      if (err instanceof DialError && err.refusal)
        this.goOffline({ reason: err.refusal, message: err.message });
      else if (err instanceof DialError) this.scheduleReconnect(err.message);
      else this.goOffline({ reason: 'config', message: `cannot connect: ${errorText(err)}` });
      return;
    }
    if (this.channel !== channel || !this.running) {
      socket.destroy();
      return;
    }
    channel.attach(socket);
    this.timers.set('connect', this.timing.connectTimeoutMs, () =>
      this.fail(
        `the server did not answer within ${formatDuration(this.timing.connectTimeoutMs)}`,
        { retry: true, channel },
      ),
    );
  }

  private socketEvents(channel: Channel): SocketEvents<In> {
    return {
      open: () => this.onOpen(channel),
      data: (data) => {
        if (channel !== this.channel) return;
        // Any byte proves the server is alive, as a pong does.
        this.timers.clear('pong');
        this.events.emit('message', { channel, data });
      },
      pong: () => {
        if (channel === this.channel) this.timers.clear('pong');
      },
      drain: () => {
        if (channel.pausedBy('writes') && channel.bufferedBytes <= this.highWater / 2) {
          channel.resume('writes');
          this.events.emit('issue', {
            message: 'the server reads again: taking new messages from it again',
          });
        }
      },
      closed: (why, refusal) => this.onClosed(channel, why, refusal),
    };
  }

  private onOpen(channel: Channel): void {
    if (channel !== this.channel || !this.running) return;
    channel.markOpen();
    this.timers.clear('connect');
    // The greeting goes first: nobody told of the new state may send before it.
    this.events.emit('open', channel);
    if (channel !== this.channel || !channel.open) return; // refused in its open handler
    if (!this.options.awaitReady) {
      this.becomeReady(channel);
      return;
    }
    this.setState({ status: 'authenticating' });
    if (this.timing.handshakeTimeoutMs > 0)
      this.timers.set('handshake', this.timing.handshakeTimeoutMs, () =>
        this.fail(
          `the server did not greet us within ${formatDuration(this.timing.handshakeTimeoutMs)}`,
          { retry: true, channel },
        ),
      );
  }

  private onClosed(channel: Channel, why: string, refusal: Refusal | undefined): void {
    if (!channel.markClosed()) return;
    if (this.retiring.delete(channel)) return;
    if (channel !== this.channel) return;
    this.channel = undefined;
    this.clearSocketTimers();
    if (!this.running) return; // stopping: stop() is waiting for exactly this
    const refused = refusal ?? this.options.closed?.(channel, why);
    if (refused) this.goOffline(refused);
    else this.scheduleReconnect(why);
  }

  private becomeReady(channel: Channel): void {
    this.timers.clear('handshake');
    this.setState({ status: 'ready', since: this.clock.now() });
    this.timers.set('healthy', this.timing.healthyResetMs, () => {
      this.attempt = 0;
    });
    this.armPing();
    if (channel === this.channel) this.events.emit('ready', channel);
  }

  private armPing(): void {
    if (this.timing.pingIntervalMs <= 0) return;
    this.timers.set('ping', this.timing.pingIntervalMs, () => {
      const channel = this.channel;
      if (!channel?.open || this.current.status !== 'ready') return;
      // The deadline runs from the oldest unanswered ping: re-arming it on every ping would keep
      // pushing it out whenever pings come more often than the pong timeout.
      if (!this.timers.has('pong')) {
        this.timers.set('pong', this.timing.pongTimeoutMs, () => this.onPongTimeout(channel));
        if (this.options.ping) this.options.ping(channel);
        else channel.ping();
      }
      if ((this.options.heartbeat ?? 'interval') === 'interval') this.armPing();
    });
  }

  private onPongTimeout(channel: Channel): void {
    const quiet = formatDuration(this.timing.pongTimeoutMs);
    if (channel.pausedBy('calls') && !channel.pausedBy('writes')) {
      // We are not reading (our calls are still running), so its answer cannot have been seen:
      // not the server's fault. Ask again once we read again.
      this.timers.set('pong', this.timing.pongTimeoutMs, () => this.onPongTimeout(channel));
      return;
    }
    this.fail(
      channel.pausedBy('writes')
        ? `the server has not read what we sent for ${quiet}; dropping the link`
        : `the server stopped answering pings (no heartbeat answer within ${quiet})`,
      { retry: true, channel },
    );
  }

  private get highWater(): number {
    return this.options.writeHighWaterBytes ?? WRITE_HIGH_WATER_BYTES;
  }

  private onSent(channel: Channel): void {
    if (channel !== this.channel) return;
    if (this.options.heartbeat === 'idle' && this.current.status === 'ready') this.armPing();
    const waiting = channel.bufferedBytes;
    if (waiting <= this.highWater) return;
    const max = this.options.writeMaxBufferedBytes ?? WRITE_MAX_BUFFERED_BYTES;
    if (waiting > max) {
      this.fail(
        `the server does not read what it asked for (${waiting} bytes waiting to be sent); dropping the link`,
        { retry: true, channel },
      );
      return;
    }
    if (!channel.pausedBy('writes')) {
      channel.pause('writes');
      this.events.emit('issue', {
        message: `the server is not reading (${waiting} bytes waiting to be sent): taking no new messages from it until it does`,
      });
    }
  }

  /** Close a replaced socket politely; cut it if its close takes longer than `closeWaitMs`. */
  private retire(channel: Channel): void {
    this.retiring.add(channel);
    channel.closePolitely(1000, 'reconnecting');
    const timer = this.clock.setTimeout(() => {
      if (this.retiring.delete(channel)) channel.cut();
    }, this.timing.closeWaitMs);
    void channel.closed.then(() => {
      this.clock.clearTimeout(timer);
      this.retiring.delete(channel);
    });
  }

  private dropChannel(): void {
    const channel = this.channel;
    this.channel = undefined;
    this.clearSocketTimers();
    channel?.cut();
  }

  private clearSocketTimers(): void {
    for (const name of PER_SOCKET) this.timers.clear(name);
  }

  private scheduleReconnect(reason: string): void {
    this.clearSocketTimers();
    if (!this.running) return;
    // The cap holds for the jittered delay too: no client waits longer than `backoffMaxMs`.
    const delay = backoffDelay(this.attempt, this.timing, this.ids.random());
    const nextAt = this.clock.now() + delay;
    this.setState({ status: 'reconnecting', attempt: this.attempt + 1, nextAt, lastError: reason });
    this.timers.set('reconnect', delay, () => void this.connect());
  }

  private goOffline(refusal: Refusal): void {
    this.running = false;
    this.dropChannel();
    this.timers.clearAll();
    this.hold?.dispose();
    this.hold = undefined;
    this.setState({ status: 'offline', reason: refusal.reason, message: refusal.message });
  }

  private setState(state: ConnectionState): void {
    this.current = state;
    this.events.emit('state', state);
  }
}

/** `10 s`, `1.5 s`, `250 ms`: readable at any scale (tests use millisecond timeouts). */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${ms} ms`;
  const s = ms / 1000;
  return `${Number.isInteger(s) ? s : s.toFixed(1)} s`;
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
