/**
 * The agent as an MCP server (protocols/xiaozhi.md, "MCP inside" and B′), shared by the XiaoZhi
 * device dialect (inside `{"type":"mcp"}`) and the XiaoZhi MCP endpoint (bare frames).
 *
 * - `initialize` may come before anything else (even before the XiaoZhi hello); a
 *   `capabilities.vision` it carries is kept for camera-like services.
 * - `tools/list` pages stay under 8000 bytes of JSON; `nextCursor` is the name of the first tool
 *   not sent. User-only services are listed only for `withUserTools`, marked
 *   `annotations.audience: ["user"]` — a visibility filter, not an authorisation: their calls
 *   go through the same gate as any other.
 * - `tools/call` goes through the one gate. Protocol trouble is a JSON-RPC error (-32601 unknown
 *   tool, -32602 invalid params, -32603 internal); a refusal or a failing service is a result with
 *   `isError: true` whose text (and `error`, which one backend reads) tells the model why.
 * - `notifications/cancelled {requestId}` (the server stopped waiting) withdraws that call at the
 *   gate: its prompt leaves the window, nothing more runs, and — as the MCP spec says of a
 *   cancelled request — no response is sent. The socket ending does the same for its calls.
 * - Results are cut to 8 KB of text with a note saying so. Replies carry the request's id with the
 *   same value and type; notifications get no reply.
 * - One server per socket: `serve()` answers through the reply function of the socket the message
 *   came on (kit/link.ts Channel), as the MCP SDK's protocol layer replies on the transport a
 *   request came from; an answer whose socket is gone is dropped, never sent on the next one.
 * - Registration is what the server has seen: "registered" once a walk through the `tools/list`
 *   pages — first page (no cursor) to a page without `nextCursor` — has gone out, with the names
 *   it carried. `restartWalk()` forgets a walk begun before the set changed.
 */
import type { Dialect } from '../../contract/audit.js';
import type { ConnectionRef } from '../../contract/connection.js';
import type { DispatchResult } from '../../dispatch.js';
import { isImageResult } from '../../services/content.js';
import type { Gate, ToolEntry } from '../session.js';
import { MAX_ID_CHARS, MAX_NAME_CHARS, MAX_STATUS_CHARS, cutString } from './bounds.js';
import { type JsonRpcId, type JsonRpcMessage, RPC, rpcError, rpcResult } from './jsonrpc.js';

export const MCP_PROTOCOL_VERSIONS = ['2024-11-05', '2025-03-26', '2025-06-18'] as const;
/** The version XiaoZhi firmware and servers speak; answered when the client asks for another. */
const DEFAULT_PROTOCOL_VERSION = '2024-11-05';
export const PAGE_BYTES = 8000;
export const RESULT_BYTES = 8000;

/** Who we say we are when a session is not told the app's version (tests, older callers). */
export const DEFAULT_SERVER_INFO = { name: 'advent-agent', version: '0.1.0' };

export interface McpServerOptions {
  /** The connection the calls come on (its id and display name go into the audit log). */
  connection: ConnectionRef;
  dialect: Dialect;
  gate: Gate;
  /** The enabled services, in registry order, user-only ones included (filtered here). */
  tools: () => readonly ToolEntry[];
  serverInfo: { name: string; version: string };
  /** Announce `tools.listChanged` (the endpoint does; the device dialect never did). */
  listChanged: boolean;
  /** A fresh id for calls whose request id cannot serve as an audit call id. */
  callId?: () => string;
  pageBytes?: number;
  resultBytes?: number;
  /** The server has listed every page of our tools, or its listing failed. */
  onListing?: (listing: Listing) => void;
  /** The device identity a vision upload carries (XiaoZhi: Device-Id, Client-Id headers). */
  identity?: { deviceId: string; clientId: string };
}

/** The end of a `tools/list` walk as the server saw it. */
export type Listing = { ok: true; services: string[] } | { ok: false; message: string };

/** Sends one answer on the socket its request came on; false when that socket is gone. */
export type Reply = (response: Record<string, unknown>) => boolean;

export interface VisionCapability {
  url?: string;
  token?: string;
}

export type McpLog = { level: 'info' | 'warn'; message: string };

export class McpToolServer {
  /** `capabilities.vision` from the last `initialize`, if the server sent one. */
  vision: VisionCapability | undefined;
  initialized = false;
  /**
   * This server asked for user-only tools (`withUserTools`), so it may call them — still through
   * the gate. A server that never asked does not see them and gets "unknown tool", as for any
   * name it was never shown.
   */
  private userToolsListed = false;
  /** Names sent so far in the current `tools/list` walk (undefined: none under way). */
  private walk: Set<string> | undefined;
  /**
   * Calls waiting for the gate, by request id (as a string: a server may name a numeric id as a
   * string in its cancel), so `notifications/cancelled` can withdraw one. Bounded by the calls a
   * socket may have in flight (`Channel.track`).
   */
  private readonly calls = new Map<string, AbortController>();

  constructor(private readonly options: McpServerOptions) {}

  /**
   * Answer one message through `reply`, and follow the `tools/list` walk with what went out.
   * Never throws; `log` receives anything worth a line.
   */
  async serve(
    msg: JsonRpcMessage,
    reply: Reply,
    log: (line: McpLog) => void = () => undefined,
    gone?: AbortSignal,
  ): Promise<void> {
    const response = await this.handle(msg, log, gone);
    if (!response) return;
    if (!reply(response)) {
      log({
        level: 'warn',
        message: `the answer to ${describe(msg)} was not sent: the connection it came on is gone`,
      });
      return;
    }
    if (msg.kind === 'request' && msg.method === 'tools/list')
      this.followWalk(msg.params, response);
  }

  /** The tool set changed: a walk under way cannot show it; only the next full walk counts. */
  restartWalk(): void {
    this.walk = undefined;
  }

  /**
   * Answer one message. Returns the response to send, or undefined (notifications, responses,
   * requests without an id, and calls the server cancelled). Never throws; `log` receives
   * anything worth a line. `gone` aborts when the socket the message came on ends.
   */
  async handle(
    msg: JsonRpcMessage,
    log: (line: McpLog) => void = () => undefined,
    gone?: AbortSignal,
  ): Promise<Record<string, unknown> | undefined> {
    switch (msg.kind) {
      case 'invalid':
        log({ level: 'warn', message: `bad MCP message: ${msg.message}` });
        return msg.id === undefined
          ? undefined
          : rpcError(msg.id, RPC.INVALID_REQUEST, msg.message);
      case 'response':
        // We send no requests; a stray response is only worth a note.
        log({ level: 'info', message: `unexpected MCP response (id ${String(msg.id)})` });
        return undefined;
      case 'notification':
        if (msg.method === 'notifications/initialized') this.initialized = true;
        else if (msg.method === 'notifications/cancelled') this.cancel(msg.params, log);
        else if (msg.method === 'tools/call')
          log({
            level: 'warn',
            message: 'a tools/call without an id was ignored: nobody could receive its result',
          });
        else if (!msg.method.startsWith('notifications/'))
          log({ level: 'info', message: `MCP notification '${msg.method}' ignored` });
        return undefined;
      case 'request':
        try {
          return await this.request(msg.id, msg.method, msg.params, log, gone);
        } catch (err) {
          return rpcError(msg.id, RPC.INTERNAL_ERROR, `internal error: ${(err as Error).message}`);
        }
    }
  }

  private async request(
    id: JsonRpcId,
    method: string,
    params: unknown,
    log: (line: McpLog) => void,
    gone: AbortSignal | undefined,
  ): Promise<Record<string, unknown> | undefined> {
    const p = (params && typeof params === 'object' ? params : {}) as Record<string, unknown>;
    // Some servers send notifications with an id; a request deserves an answer, so say "ok".
    if (method.startsWith('notifications/')) {
      if (method === 'notifications/initialized') this.initialized = true;
      if (method === 'notifications/cancelled') this.cancel(params, log);
      return rpcResult(id, {});
    }
    switch (method) {
      case 'initialize':
        return rpcResult(id, this.initialize(p));
      case 'ping':
        return rpcResult(id, {});
      case 'tools/list':
        return this.list(id, p);
      case 'tools/call':
        return this.call(id, p, gone);
      default:
        return rpcError(id, RPC.METHOD_NOT_FOUND, `method '${method}' is not supported`);
    }
  }

  private initialize(p: Record<string, unknown>): Record<string, unknown> {
    // A new MCP session: what the previous one asked for no longer holds.
    this.vision = undefined;
    this.initialized = false;
    this.userToolsListed = false;
    const caps = p.capabilities as { vision?: unknown } | undefined;
    const vision = caps?.vision;
    if (vision && typeof vision === 'object') {
      const v = vision as Record<string, unknown>;
      this.vision = {
        url: typeof v.url === 'string' ? v.url : undefined,
        token: typeof v.token === 'string' ? v.token : undefined,
      };
    }
    const asked = p.protocolVersion;
    const protocolVersion =
      typeof asked === 'string' && (MCP_PROTOCOL_VERSIONS as readonly string[]).includes(asked)
        ? asked
        : DEFAULT_PROTOCOL_VERSION;
    return {
      protocolVersion,
      capabilities: { tools: this.options.listChanged ? { listChanged: true } : {} },
      serverInfo: this.options.serverInfo,
    };
  }

  private list(id: JsonRpcId, p: Record<string, unknown>): Record<string, unknown> {
    const withUser = p.withUserTools === true;
    if (withUser) this.userToolsListed = true;
    const tools = this.options
      .tools()
      .filter((t) => withUser || !t.userOnly)
      .map((t) => ({
        name: t.name,
        description: t.description,
        inputSchema: t.inputSchema,
        ...(t.userOnly ? { annotations: { audience: ['user'] } } : {}),
      }));
    let start = 0;
    if (p.cursor !== undefined && p.cursor !== null && p.cursor !== '') {
      start = tools.findIndex((t) => t.name === p.cursor);
      if (start < 0)
        return rpcError(
          id,
          RPC.INVALID_PARAMS,
          `unknown cursor '${cutString(String(p.cursor), MAX_NAME_CHARS)}': the tool list changed; list again from the start`,
        );
    }
    const limit = this.options.pageBytes ?? PAGE_BYTES;
    const page: typeof tools = [];
    // The page's JSON is its envelope (`"tools":[]` and the cursor) plus each tool's JSON and a
    // comma between two: summed as tools are added, each tool serialised once, instead of the
    // whole page again for every tool it might take.
    let toolBytes = 0;
    let end = start;
    while (end < tools.length) {
      const size = Buffer.byteLength(JSON.stringify(tools[end]!));
      const next = tools[end + 1]?.name;
      const envelope = Buffer.byteLength(
        JSON.stringify(rpcResult(id, { tools: [], nextCursor: next })),
      );
      const bytes = envelope + toolBytes + (page.length > 0 ? 1 : 0) + size;
      // A page always carries at least one tool, or a huge one could never be listed.
      if (bytes > limit && page.length > 0) break;
      toolBytes += (page.length > 0 ? 1 : 0) + size;
      page.push(tools[end]!);
      end += 1;
    }
    const result: Record<string, unknown> = { tools: page };
    if (end < tools.length) result.nextCursor = tools[end]!.name;
    return rpcResult(id, result);
  }

  private followWalk(params: unknown, response: Record<string, unknown>): void {
    const result = response.result as
      { tools?: { name: string }[]; nextCursor?: string } | undefined;
    if (!result?.tools) {
      const error = (response.error as { message?: string } | undefined)?.message;
      this.walk = undefined;
      this.options.onListing?.({
        ok: false,
        message: `the server could not list the services: ${error ?? 'no result'}`,
      });
      return;
    }
    const cursor = (params as { cursor?: unknown } | null)?.cursor;
    if (cursor === undefined || cursor === null || cursor === '') this.walk = new Set();
    // A later page of a walk begun before the set changed: it cannot show the whole set.
    else if (!this.walk) return;
    for (const t of result.tools) this.walk.add(t.name);
    if (result.nextCursor !== undefined) return;
    const services = [...this.walk];
    this.walk = undefined;
    this.options.onListing?.({ ok: true, services });
  }

  /** `notifications/cancelled`: the server stopped waiting for the call with `requestId`. */
  private cancel(params: unknown, log: (line: McpLog) => void): void {
    const p = (params && typeof params === 'object' ? params : {}) as Record<string, unknown>;
    const requestId = p.requestId;
    if (typeof requestId !== 'string' && typeof requestId !== 'number') {
      log({ level: 'info', message: 'a cancellation without a requestId was ignored' });
      return;
    }
    const key = cutString(String(requestId), MAX_ID_CHARS);
    const controller = this.calls.get(key);
    // Already answered, or never asked: the spec says to ignore it.
    if (!controller) return;
    const reason = typeof p.reason === 'string' ? cutString(p.reason, MAX_STATUS_CHARS) : '';
    controller.abort(new Error(`the server cancelled it${reason ? `: ${reason}` : ''}`));
  }

  private async call(
    id: JsonRpcId,
    p: Record<string, unknown>,
    gone: AbortSignal | undefined,
  ): Promise<Record<string, unknown> | undefined> {
    const asked = p.name;
    if (typeof asked !== 'string' || !asked)
      return rpcError(id, RPC.INVALID_PARAMS, "tools/call needs 'name', the tool to run");
    // Cut, not refused: the gate still records the call (an unknown service) and answers it.
    const name = cutString(asked, MAX_NAME_CHARS);
    const args = p.arguments ?? {};
    const entry = this.options.tools().find((t) => t.name === name);
    const callId = String(id) || (this.options.callId?.() ?? 'call');
    const key = cutString(String(id), MAX_ID_CHARS);
    const withdrawn = new AbortController();
    const onGone = (): void => withdrawn.abort(gone?.reason);
    if (gone?.aborted) onGone();
    else gone?.addEventListener('abort', onGone, { once: true });
    this.calls.set(key, withdrawn);
    let result: DispatchResult;
    try {
      result = await this.options.gate.dispatch({
        connection: this.options.connection,
        dialect: this.options.dialect,
        callId,
        service: name,
        params: args,
        // User-only services are callable by servers that list them; the gate still decides.
        userTools: entry?.userOnly === true && this.userToolsListed ? true : undefined,
        ...(this.vision?.url
          ? { vision: { ...this.vision, url: this.vision.url, ...this.options.identity } }
          : {}),
        signal: withdrawn.signal,
      });
    } finally {
      gone?.removeEventListener('abort', onGone);
      if (this.calls.get(key) === withdrawn) this.calls.delete(key);
    }
    // The server stopped waiting: it gets no answer (the card and the audit record say why).
    if (withdrawn.signal.aborted) return undefined;
    return this.toResponse(id, result);
  }

  private toResponse(id: JsonRpcId, result: DispatchResult): Record<string, unknown> {
    if (!result.ok) {
      if (result.code === 'unknown_service')
        return rpcError(id, RPC.METHOD_NOT_FOUND, result.message);
      if (result.code === 'invalid_params') return rpcError(id, RPC.INVALID_PARAMS, result.message);
      return rpcResult(id, {
        content: [{ type: 'text', text: result.message }],
        isError: true,
        error: result.message,
      });
    }
    if (isImageResult(result.data)) {
      const { text, image } = result.data;
      return rpcResult(id, {
        content: [
          { type: 'text', text: cutText(text, this.options.resultBytes ?? RESULT_BYTES) },
          { type: 'image', data: image.data, mimeType: image.mimeType },
        ],
        isError: false,
      });
    }
    const text =
      typeof result.data === 'string' ? result.data : (JSON.stringify(result.data) ?? 'null');
    return rpcResult(id, {
      content: [{ type: 'text', text: cutText(text, this.options.resultBytes ?? RESULT_BYTES) }],
      isError: false,
    });
  }
}

function describe(msg: JsonRpcMessage): string {
  return msg.kind === 'request' ? `'${msg.method}' (id ${String(msg.id)})` : `a ${msg.kind}`;
}

/** Text cut to `maxBytes` of UTF-8 (never inside a character), with a note saying so. */
export function cutText(text: string, maxBytes: number): string {
  const total = Buffer.byteLength(text);
  if (total <= maxBytes) return text;
  const note = `\n…[cut: the result was ${total} bytes; only the first part is shown]`;
  const room = Math.max(0, maxBytes - Buffer.byteLength(note));
  const bytes = Buffer.from(text);
  // Back off to the start of the character the cut would split (UTF-8 continuation bytes are
  // 10xxxxxx), so the text never ends in half a character (or a U+FFFD in its place).
  let end = room;
  while (end > 0 && end < bytes.length && (bytes[end]! & 0xc0) === 0x80) end -= 1;
  return bytes.subarray(0, end).toString('utf8') + note;
}
