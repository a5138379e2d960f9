/**
 * A simulated XiaoZhi MCP endpoint server (protocols/xiaozhi.md B′) on loopback: the peer of the
 * endpoint tests and e2e, and a demo for `npm run sim`. The agent dials it at
 * `ws://127.0.0.1:PORT/mcp_endpoint/mcp/?token=…`; a wrong or missing token is refused with
 * HTTP 401 like the real servers. On every connection it runs `initialize` →
 * `notifications/initialized` → `tools/list` (all pages) and records every protocol rule the
 * agent breaks in `violations`.
 *
 * Quirks of the real servers it can play: `renameDots` (tool names with dots renamed to
 * underscores, mapped back when calling), reading only `content[0].text` of a result, and
 * `relistOnChange: false` (ignore `notifications/tools/list_changed`, as most servers do).
 */
import { type IncomingMessage, type Server, createServer } from 'node:http';
import type { Duplex } from 'node:stream';
import type { WebSocketServer } from 'ws';
import type WebSocket from 'ws';
import { type Clock, systemClock } from '../../app/clock.js';
import { Emitter } from '../../app/events.js';
import { EndpointConn, type SimCallResult, type SimTool } from './conn.js';
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

export type { SimCallResult, SimTool };

export const ENDPOINT_PATH = '/mcp_endpoint/mcp/';

export interface EndpointSimOptions {
  /** 0 (default) picks a free port; read it from `sim.port`. */
  port?: number;
  host?: string;
  /** The token the URL must carry (default `sim-token`); anything else gets HTTP 401. */
  token?: string;
  /** Keep tool names as some servers do: dots become underscores (mapped back on calls). */
  renameDots?: boolean;
  /**
   * How long a request (a tool call above all) waits for its reply; a tool call given up on is
   * cancelled (`notifications/cancelled`). Default: the agent's default prompt timeout plus a
   * margin (sim/kit/deadline.ts).
   */
  callTimeoutMs?: CallWait;
  /** List again on `notifications/tools/list_changed` (default true; real servers mostly don't). */
  relistOnChange?: boolean;
  /** Ask for user-only tools too (`withUserTools: true`), like a companion app. */
  withUserTools?: boolean;
  /** Keep every frame received in `received` (default true; a long demo turns it off). */
  record?: boolean;
  /** A tools/list page above this many bytes is a violation (default 8000). */
  pageBytes?: number;
  clock?: Clock;
}

export type EndpointSimEvents = {
  connection: { conn: number };
  /** A complete listing of connection `conn`. */
  tools: { conn: number; tools: SimTool[] };
  listChanged: { conn: number };
  /** A tools/call the simulator sent (`callTool`) and what came back. */
  call: { conn: number; name: string; args: unknown };
  result: { conn: number; name: string; result: SimCallResult };
  violation: { conn: number; message: string };
  /** The handshake failed (no reply, an error): the message says why. */
  error: { conn: number; message: string };
  refused: { status: number; reason: string };
  /** `code`: the close code the agent sent (1006: it sent no close frame). */
  close: { conn: number; code: number };
};

export class EndpointSim {
  /** Protocol rules the agent broke, each prefixed with its connection: `conn 2: …`. */
  readonly violations: string[] = [];
  /** Every text frame received, in order, over all connections (when `record` is on). */
  readonly received: Array<{ conn: number; text: string }> = [];
  readonly events = new Emitter<EndpointSimEvents>();
  /** Per closed connection, the close code the agent sent (1006: no close frame). */
  readonly closeCodes = new Map<number, number>();
  private readonly options: EndpointSimOptions;
  private readonly wss: WebSocketServer;
  private readonly clock: Clock;
  private readonly open = new OpenConns<EndpointConn>();
  private readonly waiters = new Waiters('EndpointSim');
  private latest: EndpointConn | undefined;
  private connCount = 0;
  private changes = 0;
  private stopping: Promise<void> | undefined;

  private constructor(
    private readonly server: Server,
    options: EndpointSimOptions,
  ) {
    this.options = options;
    this.clock = options.clock ?? systemClock;
    this.wss = serveUpgrades(server, 'a WebSocket endpoint\n', (req, socket, head) =>
      this.upgrade(req, socket, head),
    );
  }

  static async start(options: EndpointSimOptions = {}): Promise<EndpointSim> {
    const server = createServer();
    const sim = new EndpointSim(server, options);
    await listen(server, options, (err) =>
      sim.events.emit('error', { conn: 0, message: err.message }),
    );
    return sim;
  }

  get port(): number {
    return boundPort(this.server);
  }

  get token(): string {
    return this.options.token ?? 'sim-token';
  }

  /** The address to give the agent, token included. */
  get url(): string {
    const at = hostPort(this.options.host ?? '127.0.0.1', this.port);
    return `ws://${at}${ENDPOINT_PATH}?token=${encodeURIComponent(this.token)}`;
  }

  /** Connections accepted so far (ids run 1, 2, …); refused upgrades do not count. */
  get connections(): number {
    return this.connCount;
  }

  get openConnections(): number {
    return this.open.size;
  }

  /** The latest complete listing of the latest connection (empty before one finished). */
  get tools(): SimTool[] {
    return this.latest?.tools ?? [];
  }

  /** How many `notifications/tools/list_changed` arrived, over all connections. */
  get listChangedCount(): number {
    return this.changes;
  }

  /** What the agent answered to `initialize` on the latest connection. */
  get initializeResult(): Record<string, unknown> | undefined {
    return this.latest?.initializeResult;
  }

  /** Timers still set (0 after `stop()`). */
  get pendingTimers(): number {
    return this.open.pendingTimers;
  }

  /** Call a tool on the latest open connection, as the AI would. */
  async callTool(name: string, args: unknown = {}): Promise<SimCallResult> {
    const conn = this.current();
    const tool = conn.tools?.find((t) => t.name === name);
    this.events.emit('call', { conn: conn.conn, name, args });
    const result = await conn.call(tool?.listedName ?? name, args);
    this.events.emit('result', { conn: conn.conn, name, result });
    return result;
  }

  async ping(): Promise<void> {
    return this.current().ping();
  }

  /** Ask the latest connection to list again (as after a restart of the server's session). */
  async relist(): Promise<void> {
    return this.current().list();
  }

  /** Send a frame exactly as given on the latest open connection (hostile-server tests). */
  sendRaw(text: string): void {
    const open = this.open.get(this.current().conn);
    open?.socket.send(text);
  }

  /** Cut every connection (a server restart, a network blip): the agent must dial again. */
  dropConnections(): void {
    for (const { socket } of this.open.values()) socket.terminate();
  }

  /** A listing (already here or still to come) that satisfies `pred`. */
  waitForTools(
    pred: (tools: SimTool[]) => boolean,
    timeoutMs = DEFAULT_WAIT_MS,
  ): Promise<SimTool[]> {
    return this.waiters.until(
      () => {
        const tools = this.latest?.tools;
        return tools && pred(tools) ? tools : undefined;
      },
      timeoutMs,
      () => `no listing matched; latest: [${this.tools.map((t) => t.name).join(', ')}]`,
    );
  }

  /** Resolves once connection number `count` has been accepted. */
  waitForConnection(count = 1, timeoutMs = DEFAULT_WAIT_MS): Promise<void> {
    return this.waiters
      .until(
        () => (this.connCount >= count ? true : undefined),
        timeoutMs,
        () => `connection ${count} was not made (${this.connCount} so far)`,
      )
      .then(() => undefined);
  }

  /** Close every socket and the server, clear every timer, fail whoever is still waiting. */
  stop(): Promise<void> {
    this.stopping ??= ((): Promise<void> => {
      this.open.closeAll();
      this.waiters.stop();
      return closeWsServer(this.server, this.wss);
    })();
    return this.stopping;
  }

  // ------------------------------------------------------------------------------------------

  private current(): EndpointConn {
    const conn = this.latest;
    if (!conn || !this.open.has(conn.conn))
      throw new Error(`EndpointSim has no open connection (${this.connCount} so far)`);
    return conn;
  }

  private upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    socket.on('error', () => undefined);
    if (this.stopping) return void socket.destroy();
    const { url, path } = upgradeTarget(req);
    if (path !== ENDPOINT_PATH) return this.refuse(socket, 404, 'Not Found');
    if (url.searchParams.get('token') !== this.token)
      return this.refuse(socket, 401, 'Unauthorized');
    this.wss.handleUpgrade(req, socket, head, (ws) => this.accept(ws));
  }

  private refuse(socket: Duplex, status: number, reason: string): void {
    this.events.emit('refused', { status, reason });
    refuseUpgrade(socket, status, reason);
  }

  private accept(socket: WebSocket): void {
    const id = ++this.connCount;
    const timers = new TimerSet(this.clock);
    socket.on('error', () => undefined);
    const conn = new EndpointConn({
      conn: id,
      socket,
      timers,
      callTimeoutMs: this.options.callTimeoutMs ?? DEFAULT_CALL_WAIT_MS,
      pageBytes: this.options.pageBytes ?? 8000,
      renameDots: this.options.renameDots ?? false,
      relistOnChange: this.options.relistOnChange ?? true,
      withUserTools: this.options.withUserTools ?? false,
      record: (text) => {
        if (this.options.record !== false) this.received.push({ conn: id, text });
        this.waiters.poke();
      },
      violation: (message) => {
        this.violations.push(`conn ${id}: ${message}`);
        this.events.emit('violation', { conn: id, message });
      },
      listed: (tools) => {
        this.events.emit('tools', { conn: id, tools });
        this.waiters.poke();
      },
      listChanged: () => {
        this.changes += 1;
        this.events.emit('listChanged', { conn: id });
        this.waiters.poke();
      },
    });
    this.open.add(id, { conn, socket, timers }, (code) => {
      this.closeCodes.set(id, code);
      this.events.emit('close', { conn: id, code });
      this.waiters.poke();
    });
    this.latest = conn;
    this.events.emit('connection', { conn: id });
    this.waiters.poke();
    conn.begin().catch((err: Error) => {
      if (this.open.has(id)) this.events.emit('error', { conn: id, message: err.message });
    });
  }
}
