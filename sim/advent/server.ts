import { type AddressInfo, type Server, type Socket, createServer } from 'node:net';
import { type Clock, systemClock } from '../../app/clock.js';
import { Emitter } from '../../app/events.js';
import { type IdSource, cryptoIds } from '../../app/ids.js';
import { FRAME_TYPE_NAMES } from '../../app/wire/advent/frame.js';
import type { AuthPayload } from './checks.js';
import { createDemo } from './demo.js';
import { SimPeer, type WriteMode } from './peer.js';
import type {
  AuthDecision,
  AuthMode,
  ReceivedFrame,
  SimEvents,
  Turn,
  TurnHandler,
} from './records.js';
import { Session, type SessionHost, asError } from './conn.js';
import { boundPort, closeServer, listen } from '../kit/listen.js';
import { type CallWait, DEFAULT_CALL_WAIT_MS } from '../kit/deadline.js';
import { TimerSet } from '../kit/timers.js';
import { DEFAULT_WAIT_MS, Waiters } from '../kit/waiters.js';

export interface AdventSimOptions {
  /** 0 (default) picks a free port; read it from `sim.port`. */
  port?: number;
  /** Loopback unless a caller asks otherwise: the simulator accepts any token. */
  host?: string;
  auth?: AuthMode;
  /** STATUS text sent after an accepted AUTH; none by default (the real text is unknown). */
  welcome?: string;
  /** The client must send AUTH this soon after connecting (protocol §4: 5 s). */
  authTimeoutMs?: number;
  /** A connection that sends nothing this long is dropped (the real server: 5 min). */
  idleTimeoutMs?: number;
  /** Delay between answering `##DISCONNECT` and closing (the real server says 3 s; tests want fast). */
  disconnectCloseMs?: number;
  /**
   * How long `peer.call()` waits for a result (a number, or read at each call). Default: the
   * agent's default prompt timeout plus a margin (sim/kit/deadline.ts), so a user answering late
   * is still heard. The protocol has no cancel: a call given up on just ends.
   */
  callTimeoutMs?: CallWait;
  /** The app language for the demo's words when a call did not work (read at each turn). */
  language?: () => string;
  /** The decoder's limit for frames from the client. */
  maxFrameBytes?: number;
  /** Defaults for each new connection's peer (each can be changed per peer). */
  splitUtf8?: boolean;
  writeMode?: WriteMode;
  garbageBetweenFrames?: boolean;
  /** Byte order of Opus packet lengths, both ways (AUTH does not carry it); default 'be'. */
  opusLengthOrder?: 'be' | 'le';
  /**
   * Hands-free (`mode:vad` / `auto` in AUTH): the simulated VAD ends the user's input after this
   * much received audio (deterministic, unlike real silence detection). Default 1500 ms.
   */
  vadStopAfterMs?: number;
  /** …or when no audio has come for this long after some did (the user went quiet). Default 800. */
  vadQuietMs?: number;
  /** Answers finished turns; without one the canned demo answers (unless `demo: false`). */
  onTurn?: TurnHandler;
  demo?: boolean;
  /** Drives protocol timers and `at` stamps (auth deadline, idle drop, DISCONNECT close, calls). */
  clock?: Clock;
  /** Randomness for garbage bytes and UTF-8 cut points. */
  ids?: IdSource;
  /**
   * Keep every frame and turn in `received` / `turns` (default). A long-running demo turns this
   * off so hours of voice do not pile up in memory; `waitFor` and `turns` then stay empty.
   */
  record?: boolean;
}

/**
 * A simulated Advent server on loopback: the peer every wire test runs against and the demo a
 * newcomer can try without an account. It records every frame the client sends, lists every
 * protocol rule the client breaks, and lets a test script the server's side of each connection.
 */
export class AdventSim {
  /** Every frame received, in order, over all connections. */
  readonly received: ReceivedFrame[] = [];
  /** Protocol rules the client broke, each prefixed with its connection: `conn 2: …`. */
  readonly violations: string[] = [];
  /** Every finished input turn. */
  readonly turns: Turn[] = [];
  /** Turn handlers that threw. */
  readonly errors: Error[] = [];
  readonly events = new Emitter<SimEvents>();

  private readonly server: Server;
  private readonly options: AdventSimOptions;
  private readonly clock: Clock;
  private readonly ids: IdSource;
  /** Open connections. */
  private readonly sessions = new Map<number, Session>();
  /** Every connection ever accepted, closed ones included (peers and closes stay queryable). */
  private readonly allSessions = new Map<number, Session>();
  private readonly timerSets = new Set<TimerSet>();
  private readonly sessionHost: SessionHost;
  private readonly registers: Array<{ conn: number; services: Record<string, unknown> }> = [];
  private readonly waiters = new Waiters('AdventSim');
  private authMode: AuthMode;
  private handler: TurnHandler | undefined;
  private readonly demo: TurnHandler | undefined;
  private connCount = 0;
  private callCount = 0;
  private stopping: Promise<void> | undefined;

  private constructor(server: Server, options: AdventSimOptions) {
    this.server = server;
    this.options = options;
    this.clock = options.clock ?? systemClock;
    this.ids = options.ids ?? cryptoIds;
    this.authMode = options.auth ?? 'accept';
    this.handler = options.onTurn;
    this.demo =
      options.demo === false
        ? undefined
        : createDemo({ now: () => this.clock.now(), language: options.language });
    this.sessionHost = {
      clock: this.clock,
      timings: {
        authTimeoutMs: options.authTimeoutMs ?? 5000,
        idleTimeoutMs: options.idleTimeoutMs ?? 5 * 60_000,
        disconnectCloseMs: options.disconnectCloseMs ?? 50,
        flushMs: 20,
      },
      maxFrameBytes: options.maxFrameBytes,
      voice: {
        opusLengthOrder: options.opusLengthOrder ?? 'be',
        vadStopAfterMs: options.vadStopAfterMs ?? 1500,
        vadQuietMs: options.vadQuietMs ?? 800,
      },
      welcome: options.welcome,
      decideAuth: (token, params) => this.decideAuth(token, params),
      record: (frame) => {
        if (options.record === false) return;
        this.received.push(frame);
        this.waiters.poke();
      },
      violation: (conn, message) => {
        this.violations.push(`conn ${conn}: ${message}`);
        this.events.emit('violation', { conn, message });
      },
      registered: (conn, services) => this.registers.push({ conn, services }),
      turn: (turn, peer, answer) => this.onTurnDone(turn, peer, answer),
      emit: (event, payload) => this.events.emit(event, payload),
    };
    server.on('connection', (socket) => this.accept(socket));
  }

  static async start(options: AdventSimOptions = {}): Promise<AdventSim> {
    const server = createServer();
    const sim = new AdventSim(server, options);
    await listen(server, options, (error) => sim.events.emit('error', { conn: 0, error }));
    return sim;
  }

  get port(): number {
    return boundPort(this.server);
  }

  get host(): string {
    return (this.server.address() as AddressInfo | null)?.address ?? '';
  }

  get listening(): boolean {
    return this.server.listening;
  }

  /** Connections accepted so far (ids run 1, 2, …). */
  get connections(): number {
    return this.connCount;
  }

  /** Connections whose socket is still open. */
  get openConnections(): number {
    return this.sessions.size;
  }

  setAuth(mode: AuthMode): void {
    this.authMode = mode;
  }

  /** Answer finished turns with `handler`; `null` gives them back to the demo. */
  onTurn(handler: TurnHandler | null): void {
    this.handler = handler ?? undefined;
  }

  /** The server's side of connection `conn` (default: the latest), open or not. */
  peer(conn = this.connCount): SimPeer {
    const session = this.allSessions.get(conn);
    if (!session) throw new Error(`AdventSim has no connection ${conn} (${this.connCount} so far)`);
    return session.peer;
  }

  /** The first received frame (already here or still to come) that satisfies `pred`. */
  waitFor(
    pred: (frame: ReceivedFrame) => boolean,
    timeoutMs = DEFAULT_WAIT_MS,
  ): Promise<ReceivedFrame> {
    return this.waiters.firstOf(
      this.received,
      pred,
      timeoutMs,
      () => `no matching frame; received: ${this.summary()}`,
    );
  }

  /** The peer of connection number `count` (default 1), once the client has made it. */
  waitForConnection(count = 1, timeoutMs = DEFAULT_WAIT_MS): Promise<SimPeer> {
    return this.waiters.until(
      () => (this.connCount >= count ? this.peer(count) : undefined),
      timeoutMs,
      () => `connection ${count} was not made (${this.connCount} so far)`,
    );
  }

  /** Resolves once connection `conn` (default: the latest) is closed. */
  waitForClose(conn = this.connCount, timeoutMs = DEFAULT_WAIT_MS): Promise<void> {
    return this.waiters
      .until(
        () => (this.allSessions.has(conn) && !this.sessions.has(conn) ? true : undefined),
        timeoutMs,
        () => `connection ${conn} did not close`,
      )
      .then(() => undefined);
  }

  /** The `data.services` of every register received, in order (of one connection if given). */
  registrations(conn?: number): Array<Record<string, unknown>> {
    return this.registers
      .filter((r) => conn === undefined || r.conn === conn)
      .map((r) => r.services);
  }

  /** The latest AUTH (of one connection if given), split on `##`. */
  lastAuth(conn?: number): AuthPayload | undefined {
    if (conn !== undefined) return this.allSessions.get(conn)?.auth;
    for (let c = this.connCount; c > 0; c--) {
      const auth = this.allSessions.get(c)?.auth;
      if (auth) return auth;
    }
    return undefined;
  }

  /** Timers still set by open connections (0 after `stop()`). */
  get pendingTimers(): number {
    let n = 0;
    for (const t of this.timerSets) n += t.size;
    return n;
  }

  /** Sockets not yet destroyed (0 after `stop()`). */
  get openSockets(): number {
    let n = 0;
    for (const s of this.allSessions.values()) if (!s.socket.destroyed) n += 1;
    return n;
  }

  /** Close the server and every socket, clear every timer, fail whoever is still waiting. */
  stop(): Promise<void> {
    this.stopping ??= ((): Promise<void> => {
      for (const session of this.sessions.values()) {
        session.socket.destroy();
        session.closed();
      }
      this.sessions.clear();
      for (const t of this.timerSets) t.clearAll();
      this.waiters.stop();
      return closeServer(this.server);
    })();
    return this.stopping;
  }

  // ------------------------------------------------------------------------------------------

  private accept(socket: Socket): void {
    if (this.stopping) {
      socket.destroy();
      return;
    }
    const conn = ++this.connCount;
    const timers = new TimerSet(this.clock);
    const realTimers = new TimerSet(systemClock);
    this.timerSets.add(timers);
    this.timerSets.add(realTimers);
    socket.setNoDelay(true);
    // A reset by the client is a normal way for a test to end; 'close' follows and cleans up.
    socket.on('error', () => {});
    const peer = new SimPeer({
      conn,
      socket,
      timers,
      realTimers,
      ids: this.ids,
      nextCallId: () => `call_${String(++this.callCount).padStart(3, '0')}`,
      callTimeoutMs: this.options.callTimeoutMs ?? DEFAULT_CALL_WAIT_MS,
      splitUtf8: this.options.splitUtf8 ?? false,
      writeMode: this.options.writeMode ?? 'normal',
      garbageBetweenFrames: this.options.garbageBetweenFrames ?? false,
      opusLengthOrder: this.options.opusLengthOrder ?? 'be',
      onCall: (call) => this.events.emit('call', call),
    });
    const session = new Session(conn, socket, peer, timers, realTimers, this.sessionHost);
    this.sessions.set(conn, session);
    this.allSessions.set(conn, session);
    socket.on('close', () => {
      session.closed();
      this.sessions.delete(conn);
      this.timerSets.delete(timers);
      this.timerSets.delete(realTimers);
      this.events.emit('close', { conn });
      this.waiters.poke();
    });
    this.events.emit('connection', {
      conn,
      remote: `${socket.remoteAddress ?? '?'}:${socket.remotePort ?? '?'}`,
    });
    this.waiters.poke();
  }

  private decideAuth(token: string, params: Record<string, string>): AuthDecision {
    const mode = this.authMode;
    return typeof mode === 'function' ? mode(token, params) : mode;
  }

  private onTurnDone(turn: Turn, peer: SimPeer, answer: boolean): void {
    if (this.options.record !== false) this.turns.push(turn);
    this.events.emit('turn', {
      conn: turn.conn,
      taskId: turn.taskId,
      text: turn.text,
      audioBytes: turn.audio.length,
    });
    const handler = this.handler ?? this.demo;
    if (!answer || !handler) return;
    Promise.resolve()
      .then(() => handler(turn, peer))
      .catch((err: unknown) => {
        const error = asError(err);
        this.errors.push(error);
        this.events.emit('error', { conn: turn.conn, error });
      });
  }

  /** The last few frames, for timeout messages. */
  private summary(): string {
    const last = this.received.slice(-8).map((f) => {
      const body = f.text !== undefined ? ` ${JSON.stringify(f.text.slice(0, 60))}` : '';
      return `#${f.conn} ${FRAME_TYPE_NAMES[f.type]} '${f.taskId}'/${f.seq}${body}`;
    });
    return last.length ? last.join('; ') : '(nothing)';
  }
}
