/**
 * Answers for the lines of a stream client (stdio, the data folder's socket) that the SDK's
 * StdioServerTransport cannot read. Its ReadBuffer throws on a line that is not JSON, or not a
 * JSON-RPC message its schema takes (a batch, an object with no `jsonrpc` or an id like `{}`); the
 * transport tells `onerror` and drops the line, so a client that sent a request so waited for the
 * answer until its own timeout. JSON-RPC 2.0 answers such a line instead: -32700 when it is not
 * JSON, -32600 when it is not a valid request. MCP 2025-06-18 has no batches (2025-03-26 had them),
 * so a batch is told to come one request a line. (The HTTP endpoint is the SDK's, which answers
 * these itself.)
 */
import type { Readable } from 'node:stream';
import type { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import {
  ErrorCode,
  JSONRPCMessageSchema,
  type JSONRPCErrorResponse,
  type RequestId,
  RequestIdSchema,
} from '@modelcontextprotocol/sdk/types.js';

/** What a client is told of a line that is not JSON (the log says it too). */
export const NOT_JSON =
  'Parse error: the line is not JSON; send each JSON-RPC message as one line of JSON';
/** What a client is told of a JSON-RPC batch (an array): this MCP version has none. */
export const NO_BATCHES =
  'Invalid Request: batches are not supported here; send each request as its own line';

/** A client's message was refused (answered with an error, not served): told for the log. */
export type Refused = (id: RequestId | undefined, reason: string) => void;

/** How much of a refused request's id the log shows: the id is the client's, of any length. */
const LOGGED_ID_CHARS = 40;

/** The log's line for a refusal: its reason and the request's id (cut short), never the message. */
export function refusalNotice(id: RequestId | undefined, reason: string): string {
  if (id === undefined) return `an MCP client's message was refused: ${reason}`;
  const shown = JSON.stringify(id);
  const cut = shown.length > LOGGED_ID_CHARS ? `${shown.slice(0, LOGGED_ID_CHARS)}…` : shown;
  return `an MCP client's message (request ${cut}) was refused: ${reason}`;
}

/**
 * Answer each line of `lines` that `transport` cannot read, and tell `refused`; the session goes
 * on with the next line. Call once the session has connected to `transport`: connect sets its
 * `onerror` and starts its reading.
 *
 * Why this knows which line failed: the transport is handed one whole line per chunk (lines.ts)
 * and reads it in its 'data' listener to the end before returning (the SDK's stdio.js: `_ondata`
 * → `processReadBuffer`, which tells `onerror` of each failure inside that loop). So an error told
 * between a listener ahead of the transport's and one after it came from the line they saw. A
 * valid line costs two listener calls here; only a line that failed is parsed again, to say why.
 */
export function answerMalformedLines(
  transport: StdioServerTransport,
  lines: Readable,
  refused: Refused,
): void {
  let reading: Buffer | undefined;
  const see = (line: Buffer): void => {
    reading = line;
  };
  // Let go of the line once the transport is done with it: a session holds no line in between.
  const forget = (): void => {
    reading = undefined;
  };
  lines.prependListener('data', see);
  lines.on('data', forget);

  const told = transport.onerror;
  transport.onerror = (error) => {
    const line = reading;
    reading = undefined;
    const answer = line && malformedAnswer(line);
    // Not a line's fault (the stream failed, a valid message's handler threw): as before.
    if (!answer) return told?.(error);
    // The error itself is not passed on: its text quotes the line, which may hold secrets.
    void transport.send(answer).catch(() => undefined);
    refused(answer.id, answer.error.message);
  };

  // The transport stops reading when it closes; so does this (it pauses `lines` only when no
  // other listener is left, and lines that still come are then held, not read for nothing).
  const closed = transport.onclose;
  transport.onclose = () => {
    lines.off('data', see);
    lines.off('data', forget);
    if (lines.listenerCount('data') === 0) lines.pause();
    closed?.();
  };
}

/**
 * The error a client is answered for `line` when the SDK cannot read it; undefined when the line
 * is blank (nothing was asked) or is a message the SDK reads (the failure was not the line's).
 * It carries the request's id when the line surely is a request (it has a `method`) with a valid
 * id, so the client can match it; otherwise none (MCP's schema has no null id).
 */
export function malformedAnswer(line: Buffer): JSONRPCErrorResponse | undefined {
  const text = line.toString('utf8');
  if (text.trim() === '') return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return errorAnswer(ErrorCode.ParseError, NOT_JSON);
  }
  if (Array.isArray(value)) return errorAnswer(ErrorCode.InvalidRequest, NO_BATCHES);
  if (JSONRPCMessageSchema.safeParse(value).success) return undefined;
  return errorAnswer(
    ErrorCode.InvalidRequest,
    `Invalid Request: ${whatIsWrong(value)}`,
    requestIdOf(value),
  );
}

function errorAnswer(code: ErrorCode, message: string, id?: RequestId): JSONRPCErrorResponse {
  return { jsonrpc: '2.0', ...(id !== undefined && { id }), error: { code, message } };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function validId(id: unknown): id is RequestId {
  return RequestIdSchema.safeParse(id).success;
}

/**
 * The id of a request: a `method` says the object is one (a response to our own question has
 * none, and the client would read our error as the answer to its request of that number).
 */
function requestIdOf(value: unknown): RequestId | undefined {
  return isObject(value) && 'method' in value && validId(value.id) ? value.id : undefined;
}

/** The members of a request (a notification has no `id`); the SDK takes no others. */
const REQUEST_KEYS = new Set(['jsonrpc', 'id', 'method', 'params']);

/** The first thing wrong with a message the SDK's schema refused, for the client's model to fix. */
function whatIsWrong(value: unknown): string {
  if (!isObject(value)) return 'a message must be a JSON object';
  if (value.jsonrpc !== '2.0') return 'a message must have "jsonrpc": "2.0"';
  if ('id' in value && !validId(value.id)) return '"id" must be a string or an integer';
  if ('method' in value) {
    if (typeof value.method !== 'string') return '"method" must be a string';
    if ('params' in value && !isObject(value.params)) return '"params" must be an object';
    if (Object.keys(value).some((key) => !REQUEST_KEYS.has(key)))
      return 'a request has only "jsonrpc", "id", "method" and "params"';
  }
  return 'not a JSON-RPC request, notification or response this server reads';
}
