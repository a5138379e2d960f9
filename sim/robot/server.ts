/**
 * A simulated robot server (protocols/robot-rpc.md, seed 004) on loopback: the peer of the robot
 * session's tests, and a demo a newcomer can talk to without the Python backend. It reproduces
 * what the reference server does beyond its doc — every execute sent twice (with an id and again
 * without), acks without `jsonrpc`, optionally no ack at all or events encoded as JSON twice —
 * records what the client sends, and lists every rule the client breaks in `violations`.
 */
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer } from 'ws';
import { type Clock, systemClock } from '../../app/clock.js';
import { Emitter } from '../../app/events.js';
import { type IdSource, cryptoIds } from '../../app/ids.js';
import {
  type AckShape,
  type ConnHost,
  type ConnSettings,
  type DuplicateOrder,
  type ExecuteOptions,
  type ExecuteOutcome,
  RobotConn,
  type RobotReceived,
  type RobotRegistration,
  type RobotStream,
} from './conn.js';
import { type CallWait, DEFAULT_CALL_WAIT_MS } from '../kit/deadline.js';
import { boundPort, hostPort, listen } from '../kit/listen.js';
import { createRobotDemo } from './demo.js';
import { DEFAULT_WAIT_MS, Waiters } from '../kit/waiters.js';

export type {
  AckShape,
  DuplicateOrder,
  ExecuteOptions,
  ExecuteOutcome,
  RobotConn,
  RobotReceived,
  RobotRegistration,
  RobotStream,
};

/** A typed turn (`mcp/user/message`, our guess at text input) and the connection it came on. */
export type RobotTextHandler = (text: string, conn: RobotConn) => void | Promise<void>;
/** A finished voice upload. */
export type RobotVoiceHandler = (stream: RobotStream, conn: RobotConn) => void | Promise<void>;

export interface RobotSimOptions {
  /** 0 (default) picks a free port. */
  port?: number;
  /** Loopback unless asked otherwise: the simulator trusts anyone. */
  host?: string;
  /** The WebSocket path (default `/ws`, as the reference server). */
  path?: string;
  /** Send each execute twice, with and without id (default true, as the reference server). */
  duplicateExecutes?: boolean;
  duplicateOrder?: DuplicateOrder;
  /** `registered` (the doc, default) or `success` (the server code: no `jsonrpc` member). */
  ackShape?: AckShape;
  /** Never acknowledge a registration. */
  noAck?: boolean;
  /** Refuse every registration with this error message. */
  ackError?: string;
  /** Send events as a JSON string holding the JSON (one version of the reference server). */
  doubleEncodeEvents?: boolean;
  /** Number ids on executes instead of strings (the client must echo the type). */
  numericIds?: boolean;
  /** Tools that change something: registering one as `control` is a violation. */
  writeTools?: string[];
  /**
   * How long `execute()` waits for the response; then it is given up and cancelled
   * (`notifications/cancelled`). Default: the agent's default prompt timeout plus a margin
   * (sim/kit/deadline.ts).
   */
  executeTimeoutMs?: CallWait;
  /** Simulated VAD: `stop_stream` after this much audio of one upload (off by default). */
  vadStopAfterMs?: number;
  /** Typed turns; without one the demo answers (unless `demo: false`). */
  onText?: RobotTextHandler;
  /** Finished voice uploads; without one the demo answers (unless `demo: false`). */
  onVoice?: RobotVoiceHandler;
  demo?: boolean;
  /** Execute timeouts and `at` stamps. */
  clock?: Clock;
  /** Execute ids. */
  ids?: IdSource;
}

export type RobotSimEvents = {
  connection: { conn: number; remote: string };
  register: { conn: number; macAddr: string | undefined; tools: string[] };
  execute: { conn: number; id: string | number; tool: string; input: unknown };
  response: { conn: number; id: string | number; outcome: ExecuteOutcome };
  text: { conn: number; text: string };
  stream: { conn: number; bytes: number; end: string };
  violation: { conn: number; message: string };
  close: { conn: number };
  error: { conn: number; error: Error };
};

export class RobotSim {
  readonly registrations: RobotRegistration[] = [];
  /** Rules the client broke, each prefixed with its connection: `conn 2: …`. */
  readonly violations: string[] = [];
  readonly received: RobotReceived[] = [];
  /** Finished voice uploads. */
  readonly streams: RobotStream[] = [];
  /** Typed turns received. */
  readonly texts: Array<{ conn: number; text: string }> = [];
  readonly executes: Array<{ conn: number; id: string | number; tool: string; input: unknown }> =
    [];
  /** Every response the client sent to an execute, in order (duplicates included). */
  readonly responses: Array<{ conn: number; id: string | number; outcome: ExecuteOutcome }> = [];
  /** Text and voice handlers that threw. */
  readonly errors: Error[] = [];
  readonly events = new Emitter<RobotSimEvents>();

  private readonly options: RobotSimOptions;
  private readonly settings: ConnSettings;
  private readonly clock: Clock;
  private readonly conns = new Map<number, RobotConn>();
  private readonly allConns = new Map<number, RobotConn>();
  private readonly waiters = new Waiters('RobotSim');
  private readonly demo: { text: RobotTextHandler; voice: RobotVoiceHandler } | undefined;
  private textHandler: RobotTextHandler | undefined;
  private voiceHandler: RobotVoiceHandler | undefined;
  private connCount = 0;
  private stopping: Promise<void> | undefined;

  private constructor(
    private readonly http: Server,
    private readonly wss: WebSocketServer,
    options: RobotSimOptions,
  ) {
    this.options = options;
    this.clock = options.clock ?? systemClock;
    this.settings = {
      ackShape: options.ackShape ?? 'registered',
      noAck: options.noAck ?? false,
      ackError: options.ackError,
      duplicateExecutes: options.duplicateExecutes ?? true,
      duplicateOrder: options.duplicateOrder ?? 'id-first',
      doubleEncodeEvents: options.doubleEncodeEvents ?? false,
      numericIds: options.numericIds ?? false,
      writeTools: options.writeTools ?? ['create_file'],
      executeTimeoutMs: options.executeTimeoutMs ?? DEFAULT_CALL_WAIT_MS,
      vadStopAfterMs: options.vadStopAfterMs,
    };
    this.textHandler = options.onText;
    this.voiceHandler = options.onVoice;
    this.demo =
      options.demo === false ? undefined : createRobotDemo({ now: () => this.clock.now() });
    wss.on('connection', (socket, req) => {
      if (this.stopping) {
        socket.terminate();
        return;
      }
      const conn = ++this.connCount;
      const rc = new RobotConn(conn, socket, this.host(options.ids ?? cryptoIds));
      this.conns.set(conn, rc);
      this.allConns.set(conn, rc);
      // A reset by the client is a normal way for a test to end; 'close' follows.
      socket.on('error', () => undefined);
      socket.on('close', () => {
        rc.closedNow();
        this.conns.delete(conn);
        this.events.emit('close', { conn });
        this.waiters.poke();
      });
      this.events.emit('connection', {
        conn,
        remote: `${req.socket.remoteAddress ?? '?'}:${req.socket.remotePort ?? '?'}`,
      });
      this.waiters.poke();
    });
  }

  static async start(options: RobotSimOptions = {}): Promise<RobotSim> {
    const http = createServer((_req, res) => {
      res.writeHead(426, { 'content-type': 'text/plain' }).end('a WebSocket endpoint: /ws\n');
    });
    const wss = new WebSocketServer({
      server: http,
      path: options.path ?? '/ws',
      perMessageDeflate: false,
      maxPayload: 16 * 1024 * 1024,
    });
    const sim = new RobotSim(http, wss, options);
    // ws re-emits the HTTP server's errors on the WebSocketServer, a busy port included: listen
    // before listening, or that error has no listener and ends the process instead of rejecting.
    wss.on('error', (error) => sim.events.emit('error', { conn: 0, error }));
    await listen(http, options, (error) => sim.events.emit('error', { conn: 0, error }));
    return sim;
  }

  get port(): number {
    return boundPort(this.http);
  }

  get url(): string {
    const address = this.http.address() as AddressInfo | null;
    return `ws://${hostPort(address?.address ?? '127.0.0.1', this.port)}${this.options.path ?? '/ws'}`;
  }

  /** Connections accepted so far (numbered 1, 2, …). */
  get connections(): number {
    return this.connCount;
  }

  get openConnections(): number {
    return this.conns.size;
  }

  /** Timers still set (0 after `stop()`). */
  get pendingTimers(): number {
    let n = 0;
    for (const c of this.conns.values()) n += c.timers.size;
    return n;
  }

  /** The server side of connection `conn` (default: the latest), open or not. */
  conn(conn = this.connCount): RobotConn {
    const c = this.allConns.get(conn);
    if (!c) throw new Error(`RobotSim has no connection ${conn} (${this.connCount} so far)`);
    return c;
  }

  /** Answer typed turns with `handler`; `null` gives them back to the demo. */
  onText(handler: RobotTextHandler | null): void {
    this.textHandler = handler ?? undefined;
  }

  onVoice(handler: RobotVoiceHandler | null): void {
    this.voiceHandler = handler ?? undefined;
  }

  /** Change how registrations are answered from now on. */
  setAck(ack: AckShape | 'none' | { error: string }): void {
    this.settings.noAck = ack === 'none';
    this.settings.ackError = typeof ack === 'object' ? ack.error : undefined;
    if (ack === 'registered' || ack === 'success') this.settings.ackShape = ack;
  }

  setDuplicates(duplicate: boolean, order: DuplicateOrder = this.settings.duplicateOrder): void {
    this.settings.duplicateExecutes = duplicate;
    this.settings.duplicateOrder = order;
  }

  // --- the server's part, on the latest open connection --------------------------------------

  execute(tool: string, input: unknown, options?: ExecuteOptions): Promise<ExecuteOutcome> {
    return this.open().execute(tool, input, options);
  }

  aiMessage(type: string, content: string): void {
    this.open().aiMessage(type, content);
  }

  sendAudio(pcm: Buffer, chunkBytes?: number): void {
    this.open().sendAudio(pcm, chunkBytes);
  }

  stopStream(): void {
    this.open().stopStream();
  }

  /** Every binary byte the client sent (on one connection if given). */
  receivedPcm(conn?: number): Buffer {
    const conns = conn === undefined ? [...this.allConns.values()] : [this.conn(conn)];
    return Buffer.concat(conns.flatMap((c) => c.pcm));
  }

  /** Cut every connection without a close handshake (the client should reconnect). */
  dropConnections(): void {
    for (const c of this.conns.values()) c.terminate();
  }

  // --- waiting -------------------------------------------------------------------------------

  /** The first registration (already here or still to come) matching `pred`. */
  waitForRegistration(
    pred: (r: RobotRegistration) => boolean = () => true,
    timeoutMs = DEFAULT_WAIT_MS,
  ): Promise<RobotRegistration> {
    return this.waiters.until(
      () => this.registrations.find(pred),
      timeoutMs,
      () => `no matching registration (${this.registrations.length} so far)`,
    );
  }

  /** The first received message (already here or still to come) matching `pred`. */
  waitFor(
    pred: (m: RobotReceived) => boolean,
    timeoutMs = DEFAULT_WAIT_MS,
  ): Promise<RobotReceived> {
    return this.waiters.firstOf(
      this.received,
      pred,
      timeoutMs,
      () => `no matching message; last received: ${this.summary()}`,
    );
  }

  /** The first finished voice upload matching `pred`. */
  waitForStream(
    pred: (s: RobotStream) => boolean = () => true,
    timeoutMs = DEFAULT_WAIT_MS,
  ): Promise<RobotStream> {
    return this.waiters.until(
      () => this.streams.find(pred),
      timeoutMs,
      () => `no matching voice upload (${this.streams.length} so far)`,
    );
  }

  /** The latest open connection, once there are `count` connections in all. */
  waitForConnection(count = 1, timeoutMs = DEFAULT_WAIT_MS): Promise<RobotConn> {
    return this.waiters.until(
      () => (this.connCount >= count ? this.allConns.get(count) : undefined),
      timeoutMs,
      () => `connection ${count} was not made (${this.connCount} so far)`,
    );
  }

  /** Resolves when `check` holds; re-checked after everything the client sends. */
  waitUntil(check: () => boolean, what: string, timeoutMs = DEFAULT_WAIT_MS): Promise<void> {
    return this.waiters
      .until(
        () => (check() ? true : undefined),
        timeoutMs,
        () => what,
      )
      .then(() => undefined);
  }

  /** Close every connection and the server, clear every timer, fail whoever still waits. */
  stop(): Promise<void> {
    this.stopping ??= new Promise<void>((resolve) => {
      for (const c of this.conns.values()) {
        c.terminate();
        c.closedNow();
      }
      this.conns.clear();
      this.waiters.stop();
      this.wss.close(() => {
        this.http.closeAllConnections();
        this.http.close(() => resolve());
      });
    });
    return this.stopping;
  }

  // -------------------------------------------------------------------------------------------

  private open(): RobotConn {
    for (let n = this.connCount; n > 0; n--) {
      const c = this.conns.get(n);
      if (c && !c.closed) return c;
    }
    throw new Error('RobotSim has no open connection');
  }

  private host(ids: IdSource): ConnHost {
    return {
      clock: this.clock,
      ids,
      settings: () => this.settings,
      received: (m) => {
        this.received.push(m);
        this.waiters.poke();
      },
      violation: (conn, message) => {
        this.violations.push(`conn ${conn}: ${message}`);
        this.events.emit('violation', { conn, message });
      },
      registered: (r) => {
        this.registrations.push(r);
        this.events.emit('register', {
          conn: r.conn,
          macAddr: r.macAddr,
          tools: r.tools.map((t) => String(t.name)),
        });
        this.waiters.poke();
      },
      streamEnded: (stream, conn) => {
        this.streams.push(stream);
        this.events.emit('stream', {
          conn: stream.conn,
          bytes: stream.pcm.length,
          end: stream.end ?? '?',
        });
        this.waiters.poke();
        if (stream.end === 'closed') return;
        // `reason: "timeout"` makes the older reference server drop the recording unanswered.
        const reason = (stream.endParams as { reason?: unknown } | undefined)?.reason;
        if (reason === 'timeout' || stream.pcm.length === 0) return;
        this.handle(this.voiceHandler ?? this.demo?.voice, stream, conn);
      },
      userText: (text, conn) => {
        this.texts.push({ conn: conn.conn, text });
        this.events.emit('text', { conn: conn.conn, text });
        this.waiters.poke();
        this.handle(this.textHandler ?? this.demo?.text, text, conn);
      },
      executed: (e) => {
        this.executes.push(e);
        this.events.emit('execute', e);
      },
      answered: (e) => {
        this.responses.push(e);
        this.events.emit('response', e);
        this.waiters.poke();
      },
      changed: () => this.waiters.poke(),
    };
  }

  private handle<T>(
    handler: ((input: T, conn: RobotConn) => void | Promise<void>) | undefined,
    input: T,
    conn: RobotConn,
  ): void {
    if (!handler) return;
    Promise.resolve()
      .then(() => handler(input, conn))
      .catch((err: unknown) => {
        const error = err instanceof Error ? err : new Error(String(err));
        this.errors.push(error);
        this.events.emit('error', { conn: conn.conn, error });
      });
  }

  private summary(): string {
    const last = this.received
      .slice(-6)
      .map((m) =>
        m.binary
          ? `#${m.conn} <${m.binary.length} bytes>`
          : `#${m.conn} ${(m.text ?? '').slice(0, 80)}`,
      );
    return last.length ? last.join('; ') : '(nothing)';
  }
}
