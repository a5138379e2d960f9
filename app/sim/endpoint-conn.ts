/**
 * The server's side of one endpoint connection in the simulator: an MCP *client* (the real
 * endpoint server asks, the agent answers). It runs the handshake the way xiaozhi.me and the
 * self-hosted `mcp_endpoint` do — `initialize` → `notifications/initialized` → `tools/list`
 * following `nextCursor` — and notes every protocol rule the agent breaks.
 */
import type WebSocket from 'ws';
import type { TimerSet } from './timers.js';

/** A tool as the simulated server keeps it (names renamed when the quirk is on). */
export interface SimTool {
  name: string;
  /** The name the agent listed (differs from `name` only with `renameDots`). */
  listedName: string;
  description: string;
  inputSchema: Record<string, unknown>;
  annotations?: Record<string, unknown>;
}

export interface SimCallResult {
  /** `content[0].text` only — what the real servers read (or the JSON-RPC error's message). */
  text: string;
  isError: boolean;
  /** The whole reply as it arrived. */
  raw: unknown;
}

export interface ConnContext {
  conn: number;
  socket: WebSocket;
  timers: TimerSet;
  callTimeoutMs: number;
  pageBytes: number;
  renameDots: boolean;
  relistOnChange: boolean;
  withUserTools: boolean;
  record(text: string): void;
  violation(message: string): void;
  listed(tools: SimTool[]): void;
  listChanged(): void;
}

interface Pending {
  method: string;
  /** The id as sent, to check the reply echoes its value and its type. */
  id: number;
  resolve(message: Record<string, unknown>): void;
  reject(err: Error): void;
  timer: ReturnType<TimerSet['set']>;
}

/** A client walking a broken cursor chain must stop somewhere. */
const MAX_PAGES = 1000;

export class EndpointConn {
  readonly conn: number;
  /** The latest complete listing, or undefined before the first one finished. */
  tools: SimTool[] | undefined;
  /** What the agent answered to `initialize`. */
  initializeResult: Record<string, unknown> | undefined;
  private nextId = 0;
  private readonly pending = new Map<number, Pending>();
  /** Ids already answered: a second reply is a violation. */
  private readonly answered = new Set<number>();
  private listing: Promise<void> | undefined;
  private relistWanted = false;
  private closed = false;

  constructor(private readonly ctx: ConnContext) {
    this.conn = ctx.conn;
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
      if (this.relistWanted && !this.closed) {
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
    const result = reply.result as { content?: unknown; isError?: unknown } | undefined;
    const first = Array.isArray(result?.content) ? (result.content[0] as unknown) : undefined;
    const text = (first as { text?: unknown } | undefined)?.text;
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
    this.closed = true;
    for (const p of this.pending.values()) {
      this.ctx.timers.clear(p.timer);
      p.reject(new Error(`connection ${this.conn} closed before '${p.method}' was answered`));
    }
    this.pending.clear();
  }

  // -------------------------------------------------------------------------------------------

  private async walk(): Promise<void> {
    const tools: SimTool[] = [];
    const seen = new Set<string>();
    let cursor: string | undefined;
    for (let page = 0; page < MAX_PAGES; page++) {
      const params: Record<string, unknown> = { cursor: cursor ?? '' };
      if (this.ctx.withUserTools) params.withUserTools = true;
      const reply = await this.request('tools/list', params);
      const result = reply.result as { tools?: unknown; nextCursor?: unknown } | undefined;
      if (!result || !Array.isArray(result.tools))
        throw new Error(`tools/list failed: ${JSON.stringify(reply.error ?? reply)}`);
      for (const raw of result.tools as Array<Record<string, unknown>>) {
        const name = String(raw.name);
        if (seen.has(name)) this.ctx.violation(`tools/list sent '${name}' twice`);
        seen.add(name);
        tools.push({
          name: this.ctx.renameDots ? name.replaceAll('.', '_') : name,
          listedName: name,
          description: String(raw.description ?? ''),
          inputSchema: (raw.inputSchema ?? {}) as Record<string, unknown>,
          ...(raw.annotations ? { annotations: raw.annotations as Record<string, unknown> } : {}),
        });
      }
      const next = result.nextCursor;
      if (next === undefined || next === null || next === '') {
        this.tools = tools;
        this.ctx.listed(tools);
        return;
      }
      if (typeof next !== 'string' || next === cursor) {
        this.ctx.violation(`tools/list nextCursor ${JSON.stringify(next)} does not move on`);
        return;
      }
      cursor = next;
    }
    this.ctx.violation(`tools/list did not end within ${MAX_PAGES} pages`);
  }

  private request(method: string, params: unknown): Promise<Record<string, unknown>> {
    if (this.closed)
      return Promise.reject(
        new Error(`connection ${this.conn} is closed; cannot send '${method}'`),
      );
    const id = ++this.nextId;
    return new Promise((resolve, reject) => {
      const timer = this.ctx.timers.set(() => {
        this.pending.delete(id);
        reject(
          new Error(
            `'${method}' (id ${id}) got no reply within ${this.ctx.callTimeoutMs} ms on connection ${this.conn}`,
          ),
        );
      }, this.ctx.callTimeoutMs);
      this.pending.set(id, { method, id, resolve, reject, timer });
      this.send({ jsonrpc: '2.0', id, method, params });
    });
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
    this.pending.delete(pending.id);
    this.answered.add(pending.id);
    this.ctx.timers.clear(pending.timer);
    if (pending.method === 'tools/list') {
      const bytes = Buffer.byteLength(text);
      if (bytes > this.ctx.pageBytes)
        this.ctx.violation(`a tools/list page of ${bytes} bytes (limit ${this.ctx.pageBytes})`);
    }
    pending.resolve(m);
  }
}
