/**
 * Streamable HTTP for MCP clients that speak it (issue 12): `http://127.0.0.1:PORT/mcp`, off by
 * default. Loopback bind only, and every request is checked before the SDK sees it:
 *
 *   Host is 127.0.0.1:PORT or localhost:PORT (a DNS-rebinding page has its own name there) → 403
 *   Origin absent or a loopback origin (a web page elsewhere cannot drive it)              → 403
 *   the path is /mcp                                                                         → 404
 *   `Authorization: Bearer <token>` (kept in the SecretStore, shown in Settings)             → 401
 *   a body of at most MAX_MESSAGE_BYTES                                                      → 413
 *
 * Sessions are the SDK's (`Mcp-Session-Id`, `MCP-Protocol-Version` checked by it); at most
 * MAX_HTTP_SESSIONS live, the least recently used closed for a new one. A POST is answered with
 * one `application/json` body (the spec lets the server choose it over SSE); server-to-client
 * messages use the session's GET stream.
 *
 * Only MAX_HTTP_CONNECTIONS connections are served at once, and any local user can open them, so
 * none may be held without the token: every refusal closes its connection once answered (else
 * Node goes on reading the body of a refused request, which a sender may never end), and a request
 * must arrive whole within HTTP_REQUEST_TIMEOUT_MS (headers within HTTP_HEADERS_TIMEOUT_MS). That
 * bound is on receiving the request alone, so a GET stream or a call still being answered, whose
 * request arrived long ago, stays open.
 */
import { randomUUID, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { MAX_HTTP_CONNECTIONS, MAX_HTTP_SESSIONS, MAX_MESSAGE_BYTES } from './limits.js';
import type { McpSession } from './session.js';

export const MCP_HTTP_PATH = '/mcp';
export const DEFAULT_MCP_HTTP_PORT = 8931;
/** Time for a request's headers to arrive, counted from the connection or the last request. */
export const HTTP_HEADERS_TIMEOUT_MS = 10_000;
/** Time for a whole request (headers and body) to arrive; then it is answered 408 and closed. */
export const HTTP_REQUEST_TIMEOUT_MS = 30_000;

export interface McpHttpTimeouts {
  headersMs: number;
  requestMs: number;
  /** How often Node checks the two above (its default is 30 s; tests make it small). */
  checkEveryMs: number;
}

export interface McpHttpOptions {
  port: number;
  token: () => string;
  newSession: () => McpSession;
  maxSessions?: number;
  timeouts?: Partial<McpHttpTimeouts>;
  log?: (message: string) => void;
}

export interface McpHttpServer {
  readonly port: number;
  readonly url: string;
  /** Close every session (a new token: the old sessions' clients must come back with it). */
  closeSessions(): Promise<void>;
  close(): Promise<void>;
}

interface Live {
  transport: StreamableHTTPServerTransport;
  session: McpSession;
}

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

/**
 * A refusal. `Connection: close` makes Node end the connection once the answer is written instead
 * of reading on (a refused body that never ends would hold the connection for good).
 */
function plain(res: http.ServerResponse, status: number, text: string, headers = {}): void {
  if (res.headersSent) return;
  res.writeHead(status, {
    'content-type': 'text/plain; charset=utf-8',
    connection: 'close',
    ...headers,
  });
  res.end(`${text}\n`);
}

function rpcError(res: http.ServerResponse, status: number, code: number, message: string): void {
  if (res.headersSent) return;
  res.writeHead(status, { 'content-type': 'application/json', connection: 'close' });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
}

/** The Host header names this server as a loopback name with its port, nothing else. */
/** Whether an initialize request says the client can ask its user (elicitation, form). */
function declaresElicitation(initialize: unknown): boolean {
  const e = (initialize as { params?: { capabilities?: { elicitation?: unknown } } }).params
    ?.capabilities?.elicitation;
  if (typeof e !== 'object' || e === null) return false;
  // `{}` is form elicitation (the spec's older shape), as the SDK reads it.
  return Object.keys(e).length === 0 || 'form' in e;
}

export function hostAllowed(host: string | undefined, port: number): boolean {
  if (!host) return false;
  const h = host.toLowerCase();
  return h === `127.0.0.1:${port}` || h === `localhost:${port}`;
}

/** No Origin (not a browser), or a page served from this computer. */
export function originAllowed(origin: string | undefined): boolean {
  if (origin === undefined) return true;
  try {
    const u = new URL(origin);
    return (u.protocol === 'http:' || u.protocol === 'https:') && LOOPBACK_HOSTS.has(u.hostname);
  } catch {
    return false;
  }
}

function bearerMatches(header: string | undefined, token: string): boolean {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
  if (!m || !token) return false;
  const sent = Buffer.from(m[1]!);
  const want = Buffer.from(token);
  return sent.length === want.length && timingSafeEqual(sent, want);
}

/** The body, or why it cannot be had: past the bound, or not JSON. */
function readBody(
  req: http.IncomingMessage,
): Promise<{ ok: true; body: unknown } | { ok: false; status: number; message: string }> {
  const tooLarge = {
    ok: false,
    status: 413,
    message: `a message may be at most ${MAX_MESSAGE_BYTES} bytes`,
  } as const;
  return new Promise((resolve) => {
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > MAX_MESSAGE_BYTES) {
      resolve(tooLarge);
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size <= MAX_MESSAGE_BYTES) return void chunks.push(chunk);
      // Refused at once (the refusal closes the connection), not after reading a body without end.
      req.off('data', onData);
      chunks.length = 0;
      resolve(tooLarge);
    };
    req.on('data', onData);
    req.on('error', () => resolve({ ok: false, status: 400, message: 'the request broke off' }));
    req.on('end', () => {
      if (size > MAX_MESSAGE_BYTES) return;
      try {
        resolve({ ok: true, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
      } catch {
        resolve({ ok: false, status: 400, message: 'the body is not JSON' });
      }
    });
  });
}

/** The ids of the requests a client's message cancels (notifications/cancelled), batch or not. */
function cancelledIds(body: unknown): (string | number)[] {
  const ids: (string | number)[] = [];
  for (const m of Array.isArray(body) ? body : [body]) {
    if (typeof m !== 'object' || m === null) continue;
    const { method, params } = m as { method?: unknown; params?: { requestId?: unknown } };
    const id = params?.requestId;
    if (method === 'notifications/cancelled' && (typeof id === 'string' || typeof id === 'number'))
      ids.push(id);
  }
  return ids;
}

/**
 * Ends the POSTs of the requests a client just cancelled. The SDK sends no answer to a cancelled
 * request (the spec's rule), but its HTTP transport holds that request's POST open until one is
 * sent: each cancel (the user's stop, or the client's own timeout at the permission prompt) kept a
 * connection open for the session's life, and 128 of them shut every MCP app out. An error answer
 * ends it; the client ignores answers to what it cancelled. One already answered is let be.
 */
async function endCancelled(
  transport: StreamableHTTPServerTransport,
  body: unknown,
): Promise<void> {
  for (const id of cancelledIds(body))
    await transport
      .send({
        jsonrpc: '2.0',
        id,
        error: { code: REQUEST_CANCELLED, message: 'request cancelled' },
      })
      .catch(() => undefined);
}

/** JSON-RPC's code for a request its sender cancelled (as LSP numbers it; MCP names none). */
const REQUEST_CANCELLED = -32800;

export async function startMcpHttp(options: McpHttpOptions): Promise<McpHttpServer> {
  const maxSessions = options.maxSessions ?? MAX_HTTP_SESSIONS;
  // A Map iterates in insertion order: re-inserting on use keeps the least recently used first.
  const sessions = new Map<string, Live>();
  const log = options.log ?? (() => undefined);
  let port = options.port;

  const end = async (id: string): Promise<void> => {
    const live = sessions.get(id);
    if (!live) return;
    sessions.delete(id);
    live.session.dispose();
    await live.transport.close().catch(() => undefined);
  };

  const handle = async (req: http.IncomingMessage, res: http.ServerResponse): Promise<void> => {
    if (!hostAllowed(req.headers.host, port))
      return plain(res, 403, 'this server answers only to 127.0.0.1 or localhost with its port');
    if (!originAllowed(req.headers.origin))
      return plain(res, 403, 'requests from web pages of other sites are refused');
    const pathname = new URL(req.url ?? '/', 'http://127.0.0.1').pathname;
    if (pathname !== MCP_HTTP_PATH) return plain(res, 404, `the MCP endpoint is ${MCP_HTTP_PATH}`);
    if (!bearerMatches(req.headers.authorization, options.token()))
      return plain(res, 401, 'a valid bearer token is needed (Advent Agent → Settings)', {
        'www-authenticate': 'Bearer realm="advent-agent"',
      });

    const sid = req.headers['mcp-session-id'];
    const sessionId = typeof sid === 'string' ? sid : undefined;
    let body: unknown;
    if (req.method === 'POST') {
      const read = await readBody(req);
      if (!read.ok) return rpcError(res, read.status, -32700, read.message);
      body = read.body;
    }

    if (sessionId !== undefined) {
      const live = sessions.get(sessionId);
      if (!live) return rpcError(res, 404, -32001, 'session not found; initialize a new one');
      sessions.delete(sessionId);
      sessions.set(sessionId, live);
      await live.transport.handleRequest(req, res, body);
      await endCancelled(live.transport, body);
      return;
    }
    if (req.method !== 'POST' || !isInitializeRequest(body))
      return rpcError(
        res,
        400,
        -32000,
        'no session: send initialize first, without Mcp-Session-Id',
      );

    while (sessions.size >= maxSessions) {
      const oldest = sessions.keys().next().value as string;
      log(`closed the least recently used MCP HTTP session to make room (${maxSessions} at most)`);
      await end(oldest);
    }
    const session = options.newSession();
    const transport = new StreamableHTTPServerTransport({
      // One JSON answer per POST instead of an SSE stream, for a client that cannot be asked
      // anything. Every call waits for the gate (the audit's fsync at least), and the SDK's SSE
      // path then sends the headers, the event and the stream's end as separate writes the client
      // reads in separate turns: measured, that cost 0.5–0.75 ms per call more than the JSON
      // answer (test/bench/mcp-serve.ts, same run). A client that declared elicitation gets each
      // answer as a stream: the question about a call (elicit.ts) goes on that call's own stream,
      // which a JSON answer cannot carry. tools/list_changed goes on the session's GET stream.
      enableJsonResponse: !declaresElicitation(body),
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => void sessions.set(id, { transport, session }),
    });
    transport.onclose = () => {
      const id = transport.sessionId;
      if (id && sessions.get(id)?.transport === transport) {
        sessions.delete(id);
        session.dispose();
      }
    };
    await session.server.connect(transport);
    await transport.handleRequest(req, res, body);
    // An initialize that failed leaves no session behind.
    if (!transport.sessionId || !sessions.has(transport.sessionId)) session.dispose();
  };

  const timeouts: McpHttpTimeouts = {
    headersMs: HTTP_HEADERS_TIMEOUT_MS,
    requestMs: HTTP_REQUEST_TIMEOUT_MS,
    checkEveryMs: 30_000,
    ...options.timeouts,
  };
  const server = http.createServer(
    {
      // Both bound receiving a request only: a GET stream's request is whole once its headers
      // are in, so the stream itself is not cut (and an idle keep-alive connection has Node's own
      // keepAliveTimeout).
      headersTimeout: timeouts.headersMs,
      requestTimeout: timeouts.requestMs,
      connectionsCheckingInterval: timeouts.checkEveryMs,
    },
    (req, res) => {
      handle(req, res).catch((err: unknown) => {
        log(`MCP HTTP request failed: ${(err as Error).message}`);
        rpcError(res, 500, -32603, 'internal error');
      });
    },
  );
  server.maxConnections = MAX_HTTP_CONNECTIONS;

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    // Loopback only: never reachable from another machine, whatever the firewall says.
    server.listen(options.port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  port = (server.address() as { port: number }).port;

  return {
    port,
    url: `http://127.0.0.1:${port}${MCP_HTTP_PATH}`,
    async closeSessions() {
      await Promise.all([...sessions.keys()].map((id) => end(id)));
    },
    async close() {
      await Promise.all([...sessions.keys()].map((id) => end(id)));
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
