/**
 * The MCP *client* half that the XiaoZhi server (B) and the MCP endpoint (B′) simulators share:
 * in both the server asks and the agent answers. Here: requests waiting for their reply by id,
 * walking `tools/list` the way the real servers do, and the record of a tool and of a call result.
 * What differs between the two stays in their connections: the envelope (B wraps JSON-RPC in
 * `{type: 'mcp', payload}`), how ids are chosen, and how loosely a reply's id is matched.
 */
import type { TimerSet } from './timers.js';

/** A tool as the simulated server keeps it (names renamed when the `renameDots` quirk is on). */
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

/** A request sent and not answered yet. */
export interface PendingRequest {
  method: string;
  /** The id as sent, to check the reply echoes its value and its type. */
  id: number | string;
  resolve(message: Record<string, unknown>): void;
  reject(err: Error): void;
  timer: ReturnType<TimerSet['set']>;
}

/**
 * The requests of one connection waiting for their reply, keyed by `String(id)`. Each has a timer
 * in the connection's TimerSet; `closeAll()` (the socket closed) rejects them all and every request
 * after it, so nobody waits on a dead connection and no timer stays behind.
 */
export class PendingRequests {
  private readonly waiting = new Map<string, PendingRequest>();
  private isClosed = false;

  /**
   * `timeoutMs` is read at each request (a demo follows the agent's prompt timeout as it
   * changes). `gaveUp` hears of each request that timed out, so the connection can tell the
   * agent it stopped waiting (MCP `notifications/cancelled`).
   */
  constructor(
    private readonly conn: number,
    private readonly timers: TimerSet,
    private readonly timeoutMs: number | (() => number),
    private readonly gaveUp: (request: PendingRequest) => void = () => undefined,
  ) {}

  get closed(): boolean {
    return this.isClosed;
  }

  /** Wait for the reply to `method` sent with `id`; `send` puts the request on the wire. */
  request(method: string, id: number | string, send: () => void): Promise<Record<string, unknown>> {
    if (this.isClosed)
      return Promise.reject(
        new Error(`connection ${this.conn} is closed; cannot send '${method}'`),
      );
    const key = String(id);
    if (this.waiting.has(key))
      return Promise.reject(new Error(`request id ${key} is already waiting for a reply`));
    const timeoutMs = typeof this.timeoutMs === 'function' ? this.timeoutMs() : this.timeoutMs;
    return new Promise((resolve, reject) => {
      const timer = this.timers.set(() => {
        this.waiting.delete(key);
        this.gaveUp(request);
        reject(
          new Error(
            `'${method}' (id ${key}) got no reply within ${timeoutMs} ms on connection ${this.conn}`,
          ),
        );
      }, timeoutMs);
      const request: PendingRequest = { method, id, resolve, reject, timer };
      this.waiting.set(key, request);
      send();
    });
  }

  /** The request waiting under `id` (compared as a string: the caller decides how loosely). */
  get(id: number | string): PendingRequest | undefined {
    return this.waiting.get(String(id));
  }

  /** Its reply came: stop its timer and hand the reply over. */
  settle(pending: PendingRequest, reply: Record<string, unknown>): void {
    this.waiting.delete(String(pending.id));
    this.timers.clear(pending.timer);
    pending.resolve(reply);
  }

  /** The socket closed: whoever waits is told, no timer stays behind, nothing more is sent. */
  closeAll(): void {
    this.isClosed = true;
    for (const p of this.waiting.values()) {
      this.timers.clear(p.timer);
      p.reject(new Error(`connection ${this.conn} closed before '${p.method}' was answered`));
    }
    this.waiting.clear();
  }
}

/** A client walking a broken cursor chain must stop somewhere. */
const MAX_PAGES = 1000;

export interface ToolWalk {
  /** Ask for one page (`{cursor}`, plus `withUserTools` when set) and return the whole reply. */
  page(params: Record<string, unknown>): Promise<Record<string, unknown>>;
  withUserTools: boolean;
  renameDots: boolean;
  violation(message: string): void;
  /** The complete listing, once the last page came. */
  listed(tools: SimTool[]): void;
}

/**
 * `tools/list` page after page following `nextCursor`, as the real servers do. A listing that
 * ends is given to `listed`; a cursor that does not move on, or a chain longer than MAX_PAGES, is
 * a violation and ends the walk without one. A failed page rejects. Resolves with what was read.
 */
export async function walkTools(walk: ToolWalk): Promise<SimTool[]> {
  const tools: SimTool[] = [];
  const seen = new Set<string>();
  let cursor = '';
  for (let page = 0; page < MAX_PAGES; page++) {
    const params: Record<string, unknown> = { cursor };
    if (walk.withUserTools) params.withUserTools = true;
    const reply = await walk.page(params);
    const result = reply.result as { tools?: unknown; nextCursor?: unknown } | undefined;
    if (!result || !Array.isArray(result.tools))
      throw new Error(`tools/list failed: ${JSON.stringify(reply.error ?? reply)}`);
    for (const raw of result.tools as Array<Record<string, unknown>>) {
      const name = String(raw.name);
      if (seen.has(name)) walk.violation(`tools/list sent '${name}' twice`);
      seen.add(name);
      tools.push({
        name: walk.renameDots ? name.replaceAll('.', '_') : name,
        listedName: name,
        description: String(raw.description ?? ''),
        inputSchema: (raw.inputSchema ?? {}) as Record<string, unknown>,
        ...(raw.annotations ? { annotations: raw.annotations as Record<string, unknown> } : {}),
      });
    }
    const next = result.nextCursor;
    if (next === undefined || next === null || next === '') {
      walk.listed(tools);
      return tools;
    }
    if (typeof next !== 'string' || next === cursor) {
      walk.violation(`tools/list nextCursor ${JSON.stringify(next)} does not move on`);
      return tools;
    }
    cursor = next;
  }
  walk.violation(`tools/list did not end within ${MAX_PAGES} pages`);
  return tools;
}

/** `content[0].text` of a call's reply, all the real servers read of it (not checked to be text). */
export function firstText(reply: Record<string, unknown>): unknown {
  const result = reply.result as { content?: unknown } | undefined;
  const first = Array.isArray(result?.content) ? (result.content[0] as unknown) : undefined;
  return (first as { text?: unknown } | undefined)?.text;
}

/** What a server that stops waiting for a tool call tells the agent (MCP `notifications/cancelled`). */
export function cancelledNotification(id: number | string): Record<string, unknown> {
  return {
    jsonrpc: '2.0',
    method: 'notifications/cancelled',
    params: { requestId: id, reason: 'the server stopped waiting for the result' },
  };
}
