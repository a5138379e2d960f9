/**
 * JSON-RPC 2.0 messages as the WebSocket dialects see them. Liberal in what we accept (string or
 * number ids, a missing `jsonrpc`), strict in what we send (always `jsonrpc: "2.0"`, the id echoed
 * with the same value and the same type). Ids and method names longer than any real one
 * (kit/bounds.ts) make a message invalid here, before anything keeps them.
 */
import { MAX_ID_CHARS, MAX_NAME_CHARS } from './bounds.js';

export type JsonRpcId = string | number;

export type JsonRpcMessage =
  | { kind: 'request'; id: JsonRpcId; method: string; params: unknown }
  | { kind: 'notification'; method: string; params: unknown }
  | { kind: 'response'; id: JsonRpcId | null; result?: unknown; error?: RpcErrorBody }
  | { kind: 'invalid'; id?: JsonRpcId; message: string };

export interface RpcErrorBody {
  code: number;
  message: string;
  data?: unknown;
}

export const RPC = {
  PARSE_ERROR: -32700,
  INVALID_REQUEST: -32600,
  METHOD_NOT_FOUND: -32601,
  INVALID_PARAMS: -32602,
  INTERNAL_ERROR: -32603,
} as const;

/** Classify one decoded JSON value (a text frame already parsed, or an MCP envelope's payload). */
export function classify(msg: unknown): JsonRpcMessage {
  if (!msg || typeof msg !== 'object' || Array.isArray(msg))
    return { kind: 'invalid', message: 'a JSON-RPC message must be a JSON object' };
  const m = msg as Record<string, unknown>;
  if (typeof m.id === 'string' && m.id.length > MAX_ID_CHARS)
    return {
      kind: 'invalid',
      message: `an id of ${m.id.length} characters is not accepted (at most ${MAX_ID_CHARS})`,
    };
  const id = isId(m.id) ? m.id : undefined;
  if (m.id !== undefined && m.id !== null && id === undefined)
    return { kind: 'invalid', message: 'the id must be a string or a number' };
  if (typeof m.method === 'string' && m.method.length > MAX_NAME_CHARS)
    return {
      kind: 'invalid',
      id,
      message: `a method name of ${m.method.length} characters is not accepted (at most ${MAX_NAME_CHARS})`,
    };
  if (typeof m.method === 'string' && m.method) {
    const params = m.params ?? {};
    return id === undefined
      ? { kind: 'notification', method: m.method, params }
      : { kind: 'request', id, method: m.method, params };
  }
  if (m.method !== undefined)
    return { kind: 'invalid', id, message: "'method' must be a non-empty string" };
  if ('result' in m || 'error' in m) {
    const error = isErrorBody(m.error) ? m.error : undefined;
    return { kind: 'response', id: id ?? null, result: m.result, error };
  }
  return { kind: 'invalid', id, message: "the message has neither 'method' nor 'result'" };
}

/** Parse a text frame; unreadable text is reported, never thrown. */
export function parseText(text: string): JsonRpcMessage {
  let msg: unknown;
  try {
    msg = JSON.parse(text);
  } catch (err) {
    return { kind: 'invalid', message: `not JSON (${(err as Error).message})` };
  }
  return classify(msg);
}

export function rpcResult(id: JsonRpcId, result: unknown): Record<string, unknown> {
  return { jsonrpc: '2.0', id, result };
}

export function rpcError(
  id: JsonRpcId | null,
  code: number,
  message: string,
  data?: unknown,
): Record<string, unknown> {
  return {
    jsonrpc: '2.0',
    id,
    error: data === undefined ? { code, message } : { code, message, data },
  };
}

function isId(v: unknown): v is JsonRpcId {
  return typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v));
}

function isErrorBody(v: unknown): v is RpcErrorBody {
  return (
    !!v &&
    typeof v === 'object' &&
    typeof (v as RpcErrorBody).code === 'number' &&
    typeof (v as RpcErrorBody).message === 'string'
  );
}

/** A short, single-line view of a message for log lines. */
export function preview(text: string, max = 200): string {
  const flat = text.replace(/\s+/g, ' ');
  return flat.length > max ? `${flat.slice(0, max)}…` : flat;
}
