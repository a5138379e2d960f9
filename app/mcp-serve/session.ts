/**
 * One MCP client session of the agent's own server (issue 12): an SDK `Server` whose tools are the
 * enabled services, every `tools/call` through the one gate as the connection the client is
 * (identity.ts, dialect `mcp`). The transport is the caller's (stdio, a socket of the running
 * agent, Streamable HTTP); the session is the same on each.
 *
 * - A refusal or a failing service is a result with `isError: true` carrying the gate's sentence,
 *   so the model reads why; invalid arguments too (the model can correct them). A name that is no
 *   tool of this session is a protocol error (-32602), as the spec's example has it.
 * - `notifications/cancelled` (or the session closing) aborts the handler's signal: the gate then
 *   withdraws a waiting prompt or tells the running service to stop. The session's end reaches
 *   every call through a signal of its own, not through the SDK's table of handlers by id.
 * - A `tools/call` whose id a call still in flight has is a protocol error (-32600), and the call
 *   in flight is withdrawn too (see below).
 * - With no window open, a client that can elicit is asked instead (elicit.ts); one that cannot
 *   gets the gate's refusal, which tells the user to open the app or set a policy.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  ListToolsRequestSchema,
  type RequestId,
} from '@modelcontextprotocol/sdk/types.js';
import type { Clock } from '../clock.js';
import type { ConnectionRef } from '../contract/connection.js';
import type { DispatchResult } from '../dispatch.js';
import type { Disposable } from '../lifecycle.js';
import { isImageResult, isStructuredResult } from '../services/content.js';
import { MAX_ID_CHARS, MAX_NAME_CHARS, cutString } from '../wire/kit/bounds.js';
import { cutText } from '../wire/kit/mcp-server.js';
import type { Gate, ToolEntry } from '../wire/session.js';
import { canElicit, elicitationAsker } from './elicit.js';
import { clientConnection } from './identity.js';
import { MAX_CALLS_PER_SESSION, RESULT_TEXT_BYTES, TOOLS_PAGE_SIZE } from './limits.js';
import { type McpTool, mcpTool, toolsPage } from './tools.js';

/**
 * Which services a connection is offered. The seam for per-connection selection: the default
 * offers every enabled service; a host passes the user's choice for this connection here.
 */
export type Offered = (connectionId: string, tool: ToolEntry) => boolean;

export interface McpSessionDeps {
  gate: Gate;
  /** The enabled services (user-only ones included; never listed here). */
  tools: () => readonly ToolEntry[];
  /** Calls `listener` when the tool set (or what a connection is offered) may have changed. */
  onToolsChanged: (listener: () => void) => Disposable;
  serverInfo: { name: string; version: string };
  clock: Clock;
  /** The app's language, for the questions a client shows its user. */
  language: () => string;
  offered?: Offered;
  maxCalls?: number;
  pageSize?: number;
  /** Anything worth a line (protocol trouble); never the stdout of a stdio server. */
  log?: (message: string) => void;
  /** Called once when the session ends. */
  onDispose?: () => void;
}

export interface McpSession extends Disposable {
  readonly server: Server;
  /** The connection this client is, once it has said who it is. */
  connection(): ConnectionRef;
}

const SESSION_ENDED = 'the MCP client session ended';

const INSTRUCTIONS =
  "Advent Agent's local services (files, apps, clipboard, reminders, and MCP servers the user imported). Calls that change something or send the user's data need the user's permission; a refusal says why and what the user can do.";

export function createMcpSession(deps: McpSessionDeps): McpSession {
  const server = new Server(deps.serverInfo, {
    capabilities: { tools: { listChanged: true } },
    instructions: INSTRUCTIONS,
  });
  const offered = deps.offered ?? (() => true);
  const maxCalls = deps.maxCalls ?? MAX_CALLS_PER_SESSION;
  let ref: ConnectionRef | undefined;
  const connection = (): ConnectionRef => (ref ??= clientConnection(server.getClientVersion()));
  /**
   * The calls waiting or running, by request id, each with a controller of its own, which the
   * session's end aborts. The SDK aborts the handlers it knows of when its transport closes, but
   * it knows them by request id: a second request with an id in use replaces the first in its
   * table, and the first would then outlive its client. (Not one session-wide signal each call's
   * follows through AbortSignal.any: Node 20 keeps every signal made so alive while a listener
   * is left on it, for as long as the session's lasts.)
   */
  const inFlight = new Map<RequestId, AbortController>();
  let disposed = false;

  const listed = (): McpTool[] => {
    const conn = connection();
    return deps
      .tools()
      .filter((t) => !t.userOnly && offered(conn.id, t))
      .map(mcpTool);
  };
  const signature = (tools: readonly McpTool[]): string => JSON.stringify(tools);
  let lastSeen: string | undefined;

  server.setRequestHandler(ListToolsRequestSchema, (request) => {
    const tools = listed();
    lastSeen = signature(tools);
    const cursor = request.params?.cursor;
    const page = toolsPage(tools, cursor, deps.pageSize ?? TOOLS_PAGE_SIZE);
    if (!page)
      throw protocolError(
        ErrorCode.InvalidParams,
        `unknown cursor '${cutString(String(cursor), MAX_NAME_CHARS)}': the tool list changed; list again from the start`,
      );
    return page;
  });

  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const id = extra.requestId;
    const inUse = inFlight.get(id);
    if (inUse) {
      // A client must not reuse an id in flight (MCP, JSON-RPC). Both calls now share one answer
      // id and one `notifications/cancelled`, and the SDK's table keeps only the newest: no answer
      // or withdrawal could be told apart, and the client, told this id failed, may well try again.
      // So neither is run: the first is withdrawn (its question leaves the window), this one is
      // a protocol error, as it is the client's mistake and not the model's to correct.
      inUse.abort(`another call came with the same request id`);
      throw protocolError(
        ErrorCode.InvalidRequest,
        `request id ${cutString(JSON.stringify(id), MAX_ID_CHARS)} is already in use by a call in flight; both calls were refused. Give every request an id of its own`,
      );
    }
    const name = cutString(request.params.name, MAX_NAME_CHARS);
    const conn = connection();
    // A tool not offered to this connection goes on to the gate like any other call: the gate
    // refuses it as unknown (it applies the same selection) and the attempt is audited.
    if (inFlight.size >= maxCalls)
      return errorResult(
        `too many calls at once (${maxCalls} are waiting or running); wait for some to finish, then try again`,
      );
    const own = new AbortController();
    if (disposed) own.abort(SESSION_ENDED);
    // The client's cancel (the SDK aborts `extra.signal`) reaches the call through its own
    // controller, forwarded by hand: AbortSignal.any makes a signal per call that the GC tracks
    // by weak reference, and it was the session's largest cost per call (the bench).
    const cancelled = (): void => own.abort(extra.signal.reason);
    if (extra.signal.aborted) cancelled();
    else extra.signal.addEventListener('abort', cancelled, { once: true });
    inFlight.set(id, own);
    try {
      const result = await deps.gate.dispatch({
        connection: conn,
        dialect: 'mcp',
        callId: cutString(String(id), MAX_ID_CHARS),
        service: name,
        params: request.params.arguments ?? {},
        signal: own.signal,
        ...(canElicit(server)
          ? {
              asker: elicitationAsker({
                server,
                clock: deps.clock,
                language: deps.language,
                titleOf: (service) =>
                  deps.tools().find((t) => t.name === service)?.title ?? service,
                relatedRequestId: extra.requestId,
              }),
            }
          : {}),
      });
      return toolResult(result);
    } finally {
      extra.signal.removeEventListener('abort', cancelled);
      // Only this call's entry: a refused duplicate never took the id's place.
      inFlight.delete(id);
    }
  });

  server.onerror = (err) => deps.log?.(`MCP client session: ${err.message}`);

  const watch = deps.onToolsChanged(() => {
    // Only a client that has listed (or initialised) hears of changes, and only of real ones.
    if (!server.transport || !server.getClientVersion()) return;
    const now = signature(listed());
    if (now === lastSeen) return;
    lastSeen = now;
    server.sendToolListChanged().catch(() => undefined);
  });

  server.oninitialized = () => {
    lastSeen = signature(listed());
  };

  return {
    server,
    connection,
    dispose() {
      if (disposed) return;
      disposed = true;
      watch.dispose();
      deps.onDispose?.();
      // Every call still waiting or running is withdrawn: its prompt leaves the window, a running
      // service is told to stop. Then the transport closes.
      for (const call of inFlight.values()) call.abort(SESSION_ENDED);
      void server.close().catch(() => undefined);
    },
  };
}

/**
 * A JSON-RPC error with exactly this message (the SDK's McpError would send its own prefix, which
 * the client's McpError then prefixes again).
 */
function protocolError(code: number, message: string): Error {
  return Object.assign(new Error(message), { code });
}

function errorResult(text: string): CallToolResult {
  return { content: [{ type: 'text', text }], isError: true };
}

/** The gate's answer as an MCP tool result. */
export function toolResult(result: DispatchResult): CallToolResult {
  if (!result.ok) {
    if (result.code === 'unknown_service')
      throw protocolError(ErrorCode.InvalidParams, result.message);
    return errorResult(result.message);
  }
  const data = result.data;
  if (isImageResult(data))
    return {
      content: [
        { type: 'text', text: cutText(data.text, RESULT_TEXT_BYTES) },
        { type: 'image', data: data.image.data, mimeType: data.image.mimeType },
      ],
    };
  if (isStructuredResult(data))
    return {
      content: [{ type: 'text', text: cutText(data.text, RESULT_TEXT_BYTES) }],
      structuredContent: data.structured,
    };
  const text = typeof data === 'string' ? data : (JSON.stringify(data) ?? 'null');
  return { content: [{ type: 'text', text: cutText(text, RESULT_TEXT_BYTES) }] };
}
