/**
 * A simulated XiaoZhi server (protocols/xiaozhi.md B) on loopback: the peer of the XiaoZhi device
 * tests and e2e, and a demo for `npm run sim`. The agent dials `ws://127.0.0.1:PORT/xiaozhi/v1/`
 * as if it were an ESP32 device; this server answers its hello, runs MCP the way the open-source
 * backend does (quirks included, see xiaozhi-conn.ts), hears its Opus voice, speaks Opus back at
 * `downlinkRate`, and records every protocol rule the device breaks in `violations`.
 *
 * With `token` set, the upgrade must carry `Authorization: Bearer <token>` (or the `authorization`
 * query parameter), else HTTP 401 — as the real servers refuse unknown devices.
 */
import { type IncomingMessage, type Server, createServer } from 'node:http';
import type { Duplex } from 'node:stream';
import type { WebSocketServer } from 'ws';
import type WebSocket from 'ws';
import type { OpusRate } from '../../app/audio/opus.js';
import { type Clock, systemClock } from '../../app/clock.js';
import { Emitter } from '../../app/events.js';
import { type IdSource, cryptoIds } from '../../app/ids.js';
import { isProtocolVersion } from '../../app/wire/xiaozhi/binary.js';
import { isClientId, isDeviceId } from '../../app/wire/kit/identity.js';
import { boundPort, hostPort, listen } from '../kit/listen.js';
import { type CallWait, DEFAULT_CALL_WAIT_MS } from '../kit/deadline.js';
import { TimerSet } from '../kit/timers.js';
import { DEFAULT_WAIT_MS, Waiters } from '../kit/waiters.js';
import {
  OpenConns,
  closeWsServer,
  refuseUpgrade,
  serveUpgrades,
  upgradeTarget,
} from '../kit/ws-server.js';
import { XzSimConnection } from './conn.js';
import { type XzTurnHandler, createXiaozhiDemo } from './demo.js';
import type {
  XzCallResult,
  XzConnectionRecord,
  XzListenEvent,
  XzReceived,
  XzSimEvents,
  XzSimTool,
  XzTurn,
} from './records.js';

export type { XzCallResult, XzConnectionRecord, XzReceived, XzSimTool, XzTurn, XzTurnHandler };
export { XzSimConnection };

export const XIAOZHI_PATH = '/xiaozhi/v1/';

export interface XiaozhiSimOptions {
  /** 0 (default) picks a free port. */
  port?: number;
  /** Loopback unless a caller asks otherwise. */
  host?: string;
  /** Require this bearer token (header or `authorization` query parameter); none → any device. */
  token?: string;
  /** Send `initialize` before the server hello, as the open-source backend does (default true). */
  mcpBeforeHello?: boolean;
  /** Wait this long after the device hello before answering it (default 0). */
  helloDelayMs?: number;
  /** false: never answer the device hello (to test the device's 10 s timeout). Default true. */
  sendHello?: boolean;
  /** The Opus rate of reply audio, announced in the server hello (default 24000). */
  downlinkRate?: OpusRate;
  /** The session id of every connection (default: a fresh UUID per connection). */
  sessionId?: string | ((conn: number) => string);
  /**
   * A tools/call unanswered this long is given up and cancelled (`notifications/cancelled`).
   * Default: the agent's default prompt timeout plus a margin (sim/kit/deadline.ts), so a user
   * answering late is still heard; real backends give up sooner (10–30 s).
   */
  callTimeoutMs?: CallWait;
  /** Dots in tool names become underscores when listed (mapped back when calling). */
  renameDots?: boolean;
  /** Ask for user-only tools too (`withUserTools: true`), like a companion app. */
  withUserTools?: boolean;
  /** Merged into the `initialize` params, e.g. `{capabilities: {vision: {url, token}}}`. */
  initializeParams?: Record<string, unknown>;
  /** Keep every message received and the uplink audio (default true; the CLI turns it off). */
  record?: boolean;
  /** Answers finished turns; without one the canned demo answers (unless `demo: false`). */
  onText?: XzTurnHandler;
  demo?: boolean;
  /** Drives protocol timers (hello delay, call timeouts). */
  clock?: Clock;
  /** For session ids. */
  ids?: IdSource;
}

export class XiaozhiSim {
  /** Every connection accepted, in order (closed ones stay, `open: false`). */
  readonly connections: XzConnectionRecord[] = [];
  /** Every message the device sent, over all connections (when `record` is on). */
  readonly received: XzReceived[] = [];
  /** Every `listen` message, in order. */
  readonly listenEvents: XzListenEvent[] = [];
  /** Every finished user turn. */
  readonly turns: XzTurn[] = [];
  /** `abort` messages, in order. */
  readonly aborts: Array<{ conn: number; reason?: string }> = [];
  /** Upgrades refused (401 / 404). */
  readonly refused: Array<{ status: number; reason: string }> = [];
  /** Protocol rules the device broke, each prefixed with its connection: `conn 2: …`. */
  readonly violations: string[] = [];
  /** Turn handlers that threw and MCP handshakes that failed. */
  readonly errors: string[] = [];
  readonly events = new Emitter<XzSimEvents>();

  private readonly options: XiaozhiSimOptions;
  private readonly wss: WebSocketServer;
  private readonly clock: Clock;
  private readonly ids: IdSource;
  private readonly all = new Map<number, XzSimConnection>();
  private readonly live = new OpenConns<XzSimConnection>();
  private readonly waiters = new Waiters('XiaozhiSim');
  private handler: XzTurnHandler | undefined;
  private readonly demo: XzTurnHandler | undefined;
  private lastTools: XzSimTool[] = [];
  private listings = 0;
  private changes = 0;
  private stopping: Promise<void> | undefined;

  private constructor(
    private readonly server: Server,
    options: XiaozhiSimOptions,
  ) {
    this.options = options;
    this.clock = options.clock ?? systemClock;
    this.ids = options.ids ?? cryptoIds;
    this.handler = options.onText;
    this.demo = options.demo === false ? undefined : createXiaozhiDemo();
    this.wss = serveUpgrades(
      server,
      `a XiaoZhi WebSocket server: connect to ${XIAOZHI_PATH}\n`,
      (req, socket, head) => this.upgrade(req, socket, head),
    );
  }

  static async start(options: XiaozhiSimOptions = {}): Promise<XiaozhiSim> {
    const server = createServer();
    const sim = new XiaozhiSim(server, options);
    await listen(server, options, (err) =>
      sim.events.emit('error', { conn: 0, message: err.message }),
    );
    return sim;
  }

  get port(): number {
    return boundPort(this.server);
  }

  /** The address to give the agent. */
  get url(): string {
    return `ws://${hostPort(this.options.host ?? '127.0.0.1', this.port)}${XIAOZHI_PATH}`;
  }

  get openConnections(): number {
    return this.live.size;
  }

  /** The latest complete tool listing, over all connections (empty before one finished). */
  get tools(): XzSimTool[] {
    return this.lastTools;
  }

  /** Complete listings so far, over all connections. */
  get toolListings(): number {
    return this.listings;
  }

  /** `notifications/tools/list_changed` received so far. */
  get listChangedCount(): number {
    return this.changes;
  }

  /** Timers still set (0 after `stop()`). */
  get pendingTimers(): number {
    return this.live.pendingTimers;
  }

  /** Answer finished turns with `handler`; `null` gives them back to the demo. */
  onText(handler: XzTurnHandler | null): void {
    this.handler = handler ?? undefined;
  }

  /** Connection `conn` (default: the latest), open or closed. */
  conn(conn = this.connections.length): XzSimConnection {
    const c = this.all.get(conn);
    if (!c)
      throw new Error(`XiaozhiSim has no connection ${conn} (${this.connections.length} so far)`);
    return c;
  }

  // --- scripting the server (on the latest connection unless one is named) ----------------------

  callTool(
    name: string,
    args: unknown = {},
    options: { id?: number | string; conn?: number } = {},
  ) {
    return this.conn(options.conn).callTool(name, args, options);
  }

  /** A whole spoken reply: llm emotion, tts start, the sentence, Opus audio, tts stop. */
  say(text: string, options: { emotion?: string; pcm?: Buffer; conn?: number } = {}): void {
    this.conn(options.conn).say(text, options);
  }

  stt(text: string, conn?: number): void {
    this.conn(conn).stt(text);
  }

  sendSystem(command: string, conn?: number): void {
    this.conn(conn).sendSystem(command);
  }

  sendAlert(text: string, conn?: number): void {
    this.conn(conn).sendAlert(text);
  }

  /** Close every connection as a server dropping idle devices does (the agent must dial again). */
  dropConnections(): void {
    for (const { conn } of this.live.values()) conn.close(1000, 'idle timeout');
  }

  /** Uplink audio of connection `conn` (default: the latest), decoded to 16 kHz PCM. */
  receivedPcm(conn?: number): Buffer {
    return this.conn(conn).receivedPcm();
  }

  /** Text messages of one type received (parsed), optionally of one connection. */
  messages(type: string, conn?: number): Array<Record<string, unknown> & { conn: number }> {
    const out: Array<Record<string, unknown> & { conn: number }> = [];
    for (const r of this.received) {
      if (r.kind !== 'text' || (conn !== undefined && r.conn !== conn)) continue;
      const json = r.json as Record<string, unknown> | undefined;
      if (json?.type === type) out.push({ ...json, conn: r.conn });
    }
    return out;
  }

  // --- waiting -----------------------------------------------------------------------------------

  /** The first received message (already here or still to come) that satisfies `pred`. */
  waitFor(pred: (r: XzReceived) => boolean, timeoutMs = DEFAULT_WAIT_MS): Promise<XzReceived> {
    return this.waiters.firstOf(
      this.received,
      pred,
      timeoutMs,
      () => `no matching message; last: ${this.summary()}`,
    );
  }

  /** Resolves once `count` complete tool listings have happened (over all connections). */
  waitForTools(count = 1, timeoutMs = DEFAULT_WAIT_MS): Promise<XzSimTool[]> {
    return this.waiters.until(
      () => (this.listings >= count ? this.lastTools : undefined),
      timeoutMs,
      () => `${this.listings} tool listing(s), waiting for ${count}`,
    );
  }

  /** Connection number `count` (default 1), once the device has made it. */
  waitForConnection(count = 1, timeoutMs = DEFAULT_WAIT_MS): Promise<XzSimConnection> {
    return this.waiters.until(
      () => this.all.get(count),
      timeoutMs,
      () => `connection ${count} was not made (${this.connections.length} so far)`,
    );
  }

  /** Any condition over the simulator's records, re-checked after everything it hears. */
  waitUntil<T>(probe: () => T | undefined, what: string, timeoutMs = DEFAULT_WAIT_MS): Promise<T> {
    return this.waiters.until(probe, timeoutMs, () => what);
  }

  /** Close the server and every socket, clear every timer, fail whoever is still waiting. */
  stop(): Promise<void> {
    this.stopping ??= ((): Promise<void> => {
      this.live.closeAll();
      this.waiters.stop();
      return closeWsServer(this.server, this.wss);
    })();
    return this.stopping;
  }

  // -------------------------------------------------------------------------------------------

  private upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    socket.on('error', () => undefined);
    if (this.stopping) return void socket.destroy();
    const { url, path } = upgradeTarget(req);
    if (path !== XIAOZHI_PATH) return this.refuse(socket, 404, 'Not Found');
    const token = bearer(header(req, 'authorization') ?? url.searchParams.get('authorization'));
    if (this.options.token !== undefined && token !== this.options.token)
      return this.refuse(socket, 401, 'Unauthorized');
    this.wss.handleUpgrade(req, socket, head, (ws) => this.accept(ws, req, url, token));
  }

  private refuse(socket: Duplex, status: number, reason: string): void {
    this.refused.push({ status, reason });
    this.events.emit('refused', { status, reason });
    refuseUpgrade(socket, status, reason);
  }

  private accept(
    socket: WebSocket,
    req: IncomingMessage,
    url: URL,
    token: string | undefined,
  ): void {
    const id = this.connections.length + 1;
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.headers))
      if (v !== undefined) headers[k] = Array.isArray(v) ? v.join(', ') : v;
    const query = Object.fromEntries(url.searchParams);
    const record = this.describe(id, headers, query, token);
    this.connections.push(record);
    const timers = new TimerSet(this.clock);
    socket.on('error', () => undefined);
    const conn = new XzSimConnection(
      record,
      socket,
      {
        mcpBeforeHello: this.options.mcpBeforeHello ?? true,
        helloDelayMs: this.options.helloDelayMs ?? 0,
        sendHello: this.options.sendHello ?? true,
        downlinkRate: this.options.downlinkRate ?? 24_000,
        callTimeoutMs: this.options.callTimeoutMs ?? DEFAULT_CALL_WAIT_MS,
        renameDots: this.options.renameDots ?? false,
        withUserTools: this.options.withUserTools ?? false,
        initializeParams: this.options.initializeParams ?? {},
        keepPcm: this.options.record !== false,
      },
      timers,
      this.hostFor(id),
    );
    this.all.set(id, conn);
    this.live.add(id, { conn, socket, timers }, (code) => {
      record.closeCode = code;
      this.events.emit('close', { conn: id, code });
      this.waiters.poke();
    });
    this.events.emit('connection', {
      conn: id,
      remote: `${req.socket.remoteAddress ?? '?'}:${req.socket.remotePort ?? '?'}`,
    });
    this.waiters.poke();
  }

  /** Who the device says it is, and what it got wrong about saying so. */
  private describe(
    conn: number,
    headers: Record<string, string>,
    query: Record<string, string>,
    token: string | undefined,
  ): XzConnectionRecord {
    const inHeaders = headers['device-id'] !== undefined || headers['client-id'] !== undefined;
    const inQuery = query['device-id'] !== undefined || query['client-id'] !== undefined;
    const deviceId = headers['device-id'] ?? query['device-id'];
    const clientId = headers['client-id'] ?? query['client-id'];
    const said = headers['protocol-version'];
    const version = Number(said);
    const violation = (message: string): void => this.violation(conn, message);
    if (deviceId === undefined) violation('no Device-Id (header or device-id query parameter)');
    else if (!isDeviceId(deviceId))
      violation(`Device-Id ${JSON.stringify(deviceId)} is not a MAC like aa:bb:cc:dd:ee:ff`);
    if (clientId === undefined) violation('no Client-Id (header or client-id query parameter)');
    else if (!isClientId(clientId))
      violation(`Client-Id ${JSON.stringify(clientId)} is not a UUID`);
    if (said === undefined) violation('no Protocol-Version header');
    else if (!isProtocolVersion(version))
      violation(`Protocol-Version ${JSON.stringify(said)} is not 1, 2 or 3`);
    const sessionId =
      typeof this.options.sessionId === 'function'
        ? this.options.sessionId(conn)
        : (this.options.sessionId ?? uuid(this.ids));
    return {
      conn,
      headers,
      query,
      protocolVersion: isProtocolVersion(version) ? version : 1,
      identity: inHeaders ? 'headers' : inQuery ? 'query' : 'none',
      deviceId,
      clientId,
      token,
      hello: undefined,
      sessionId,
      open: true,
    };
  }

  private hostFor(id: number): ConstructorParameters<typeof XzSimConnection>[4] {
    return {
      record: (m) => {
        if (this.options.record !== false)
          this.received.push({ conn: id, at: this.clock.now(), ...m });
        this.waiters.poke();
      },
      violation: (message) => this.violation(id, message),
      hello: (version) => {
        this.events.emit('hello', { conn: id, version });
        this.waiters.poke();
      },
      listed: (tools) => {
        this.lastTools = tools;
        this.listings += 1;
        this.events.emit('tools', { conn: id, tools });
        this.waiters.poke();
      },
      listChanged: () => {
        this.changes += 1;
        this.events.emit('listChanged', { conn: id });
        this.waiters.poke();
      },
      call: (callId, name, args) => this.events.emit('call', { conn: id, id: callId, name, args }),
      result: (callId, result) => {
        this.events.emit('result', { conn: id, id: callId, result });
        this.waiters.poke();
      },
      listen: (event) => {
        if (this.options.record !== false) this.listenEvents.push(event);
        this.events.emit('listen', event);
        this.waiters.poke();
      },
      abort: (reason) => {
        this.aborts.push({ conn: id, ...(reason !== undefined ? { reason } : {}) });
        this.events.emit('abort', { conn: id, ...(reason !== undefined ? { reason } : {}) });
        this.waiters.poke();
      },
      turn: (turn) => this.onTurn(turn),
      error: (message) => {
        this.errors.push(`conn ${id}: ${message}`);
        this.events.emit('error', { conn: id, message });
        this.waiters.poke();
      },
    };
  }

  private onTurn(turn: XzTurn): void {
    if (this.options.record !== false) this.turns.push(turn);
    this.events.emit('turn', {
      conn: turn.conn,
      text: turn.text,
      voice: turn.voice,
      audioBytes: turn.pcm.length,
    });
    this.waiters.poke();
    const handler = this.handler ?? this.demo;
    const conn = this.all.get(turn.conn);
    if (!handler || !conn) return;
    Promise.resolve()
      .then(() => handler(turn, conn))
      .catch((err: unknown) => {
        const message = err instanceof Error ? err.message : String(err);
        this.errors.push(`conn ${turn.conn}: ${message}`);
        this.events.emit('error', { conn: turn.conn, message });
      });
  }

  private violation(conn: number, message: string): void {
    this.violations.push(`conn ${conn}: ${message}`);
    this.events.emit('violation', { conn, message });
    this.waiters.poke();
  }

  /** The last few text messages, for timeout messages. */
  private summary(): string {
    const last = this.received
      .filter((r) => r.kind === 'text')
      .slice(-6)
      .map((r) => `#${r.conn} ${(r as { text: string }).text.slice(0, 80)}`);
    return last.length ? last.join('; ') : '(nothing)';
  }
}

function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** The token of `Bearer <token>` (or a bare token, as some devices send in the query). */
function bearer(value: string | null | undefined): string | undefined {
  if (!value) return undefined;
  const m = /^Bearer\s+(.*)$/i.exec(value.trim());
  return (m ? m[1]! : value).trim() || undefined;
}

function uuid(ids: IdSource): string {
  const h = ids.hex(32);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20)}`;
}
