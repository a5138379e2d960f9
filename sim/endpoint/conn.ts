/**
 * The server's side of one endpoint connection in the simulator: an MCP *client* (the real
 * endpoint server asks, the agent answers). It runs the handshake the way xiaozhi.me and the
 * self-hosted `mcp_endpoint` do — `initialize` → `notifications/initialized` → `tools/list`
 * following `nextCursor` — and notes every protocol rule the agent breaks.
 */
import type WebSocket from 'ws';
import {
  PendingRequests,
  type SimCallResult,
  type SimTool,
  cancelledNotification,
  firstText,
  walkTools,
} from '../kit/mcp-client.js';
import type { TimerSet } from '../kit/timers.js';

export type { SimCallResult, SimTool };

export interface ConnContext {
  conn: number;
  socket: WebSocket;
  timers: TimerSet;
  /** How long a tools/call is waited for (read at each call); then the server cancels it. */
  callTimeoutMs: number | (() => number);
  pageBytes: number;
  renameDots: boolean;
  relistOnChange: boolean;
  withUserTools: boolean;
  record(text: string): void;
  violation(message: string): void;
  listed(tools: SimTool[]): void;
  listChanged(): void;
}

export class EndpointConn {
  readonly conn: number;
  /** The latest complete listing, or undefined before the first one finished. */
  tools: SimTool[] | undefined;
  /** What the agent answered to `initialize`. */
  initializeResult: Record<string, unknown> | undefined;
  private nextId = 0;
  private readonly pending: PendingRequests;
  /** Ids already answered: a second reply is a violation. */
  private readonly answered = new Set<number | string>();
  private listing: Promise<void> | undefined;
  private relistWanted = false;

  constructor(private readonly ctx: ConnContext) {
    this.conn = ctx.conn;
    this.pending = new PendingRequests(ctx.conn, ctx.timers, ctx.callTimeoutMs, (r) => {
      // A server that gives up on a call says so, as MCP has it; the agent must send nothing more.
      if (r.method === 'tools/call') this.send(cancelledNotification(r.id));
    });
    ctx.socket.on('message', (data, isBinary) => {
      if (isBinary) {
        ctx.violation('sent a binary frame; the endpoint carries JSON text only');
        return;
      }
      this.onText(Buffer.isBuffer(data) ? data.toString('utf8') : String(data));
    });
  }

  /** The handshake every real endpoint server does on a new connection. */
  async begin(): Promise<void> {
    const init = await this.request('initialize', {
      protocolVersion: '2024-11-05',
      capabilities: {},
      clientInfo: { name: 'endpoint-sim', version: '1.0.0' },
    });
    const result = init.result as Record<string, unknown> | undefined;
    if (!result) throw new Error(`initialize failed: ${JSON.stringify(init.error)}`);
    this.initializeResult = result;
    if (typeof result.protocolVersion !== 'string')
      this.ctx.violation('initialize result has no protocolVersion');
    const tools = (result.capabilities as { tools?: unknown } | undefined)?.tools;
    if (!tools || typeof tools !== 'object')
      this.ctx.violation('initialize result does not announce capabilities.tools');
    this.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    await this.list();
  }

  /** List every page (again). Concurrent requests share one walk and then walk once more. */
  list(): Promise<void> {
    if (this.listing) {
      this.relistWanted = true;
      return this.listing;
    }
    this.listing = this.walk().finally(() => {
      this.listing = undefined;
      if (this.relistWanted && !this.pending.closed) {
        this.relistWanted = false;
        void this.list().catch(() => undefined);
      }
    });
    return this.listing;
  }

  async call(name: string, args: unknown): Promise<SimCallResult> {
    const reply = await this.request('tools/call', { name, arguments: args });
    if (reply.error) {
      const message = (reply.error as { message?: unknown }).message;
      return { text: typeof message === 'string' ? message : '', isError: true, raw: reply };
    }
    const result = reply.result as { isError?: unknown } | undefined;
    const text = firstText(reply);
    if (typeof text !== 'string') this.ctx.violation('tools/call result has no content[0].text');
    return {
      text: typeof text === 'string' ? text : '',
      isError: result?.isError === true,
      raw: reply,
    };
  }

  async ping(): Promise<void> {
    const reply = await this.request('ping', {});
    const result = reply.result;
    if (!result || typeof result !== 'object' || Object.keys(result).length)
      this.ctx.violation(`ping result should be {}, got ${JSON.stringify(result ?? reply.error)}`);
  }

  /** The socket closed: everyone waiting is told, no timer stays behind. */
  closedNow(): void {
    this.pending.closeAll();
  }

  // -------------------------------------------------------------------------------------------

  private async walk(): Promise<void> {
    await walkTools({
      page: (params) => this.request('tools/list', params),
      withUserTools: this.ctx.withUserTools,
      renameDots: this.ctx.renameDots,
      violation: (message) => this.ctx.violation(message),
      listed: (tools) => {
        this.tools = tools;
        this.ctx.listed(tools);
      },
    });
  }

  private request(method: string, params: unknown): Promise<Record<string, unknown>> {
    const id = ++this.nextId;
    return this.pending.request(method, id, () =>
      this.send({ jsonrpc: '2.0', id, method, params }),
    );
  }

  private send(message: Record<string, unknown>): void {
    if (this.ctx.socket.readyState === this.ctx.socket.OPEN)
      this.ctx.socket.send(JSON.stringify(message));
  }

  private onText(text: string): void {
    this.ctx.record(text);
    let msg: unknown;
    try {
      msg = JSON.parse(text);
    } catch {
      this.ctx.violation(`sent a frame that is not JSON: ${text.slice(0, 80)}`);
      return;
    }
    if (!msg || typeof msg !== 'object' || Array.isArray(msg)) {
      this.ctx.violation(`sent a frame that is not a JSON-RPC object: ${text.slice(0, 80)}`);
      return;
    }
    const m = msg as Record<string, unknown>;
    if (m.jsonrpc !== '2.0')
      this.ctx.violation(`a message without jsonrpc "2.0": ${text.slice(0, 80)}`);
    if (typeof m.method === 'string') return this.onRequest(m);
    if ('result' in m || 'error' in m) return this.onReply(m, text);
    this.ctx.violation(`a message with neither method nor result: ${text.slice(0, 80)}`);
  }

  private onRequest(m: Record<string, unknown>): void {
    if (m.id === undefined) {
      if (m.method === 'notifications/tools/list_changed') {
        this.ctx.listChanged();
        if (this.ctx.relistOnChange) void this.list().catch(() => undefined);
      }
      return;
    }
    // The agent is the server here; a real endpoint answers its pings and nothing else.
    if (m.method === 'ping') this.send({ jsonrpc: '2.0', id: m.id, result: {} });
    else
      this.send({
        jsonrpc: '2.0',
        id: m.id,
        error: { code: -32601, message: `method '${String(m.method)}' not found` },
      });
  }

  private onReply(m: Record<string, unknown>, text: string): void {
    const id = m.id;
    let pending = typeof id === 'number' ? this.pending.get(id) : undefined;
    if (!pending) {
      const asNumber = typeof id === 'string' && /^\d+$/.test(id) ? Number(id) : undefined;
      const sameValue = asNumber !== undefined ? this.pending.get(asNumber) : undefined;
      if (sameValue) {
        // Liberal like the real servers, but noted: the firmware and backends compare numbers.
        this.ctx.violation(
          `reply id type differs: sent ${sameValue.id} (number), got ${JSON.stringify(id)} (${typeof id})`,
        );
        pending = sameValue;
      } else if (typeof id === 'number' && this.answered.has(id)) {
        this.ctx.violation(`a second reply for id ${id}`);
        return;
      } else {
        this.ctx.violation(`a reply for id ${JSON.stringify(id)}, which was never sent`);
        return;
      }
    }
    this.answered.add(pending.id);
    if (pending.method === 'tools/list') {
      const bytes = Buffer.byteLength(text);
      if (bytes > this.ctx.pageBytes)
        this.ctx.violation(`a tools/list page of ${bytes} bytes (limit ${this.ctx.pageBytes})`);
    }
    this.pending.settle(pending, m);
  }
}
