/**
 * The robot JSON-RPC dialect's messages (protocols/robot-rpc.md, seed 004): building what we send,
 * reading what the server sends. Liberal in (ids of either type, acks without `jsonrpc`, events
 * whose JSON was encoded twice), strict out (always `jsonrpc: "2.0"`, ids echoed as received).
 */
import type { ErrorCode } from '../../contract/errors.js';
import { MAX_NAME_CHARS, cutString } from '../kit/bounds.js';
import { type JsonRpcId, type JsonRpcMessage, classify, rpcError } from '../kit/jsonrpc.js';
import type { ToolEntry } from '../session.js';

export const METHODS = {
  register: 'mcp/registerTools',
  execute: 'mcp/tool/execute',
  aiMessage: 'mcp/ai/message',
  startStream: 'mcp/audio/start_stream',
  endStream: 'mcp/audio/end_stream',
  stopStream: 'mcp/audio/stop_stream',
  startAudio: 'mcp/server/start_audio',
  /** Listed in the reference server's README next to start_audio; its code ends with an empty frame. */
  endAudio: 'mcp/server/end_audio',
  /** GUESS: no document or reference code has a text-input method (see `userTextMessage`). */
  userMessage: 'mcp/user/message',
  /**
   * Not in the dialect's documents: MCP's `{requestId, reason?}`, which a JSON-RPC server that
   * gives up on an execute may send. Understood so the call is withdrawn instead of run late.
   */
  cancelled: 'notifications/cancelled',
} as const;

// --- registration ----------------------------------------------------------------------------

export interface RobotToolDefinition {
  name: string;
  description: string;
  main_type: 'remote';
  sub_type: 'control' | 'query';
  parameters: Record<string, unknown>;
}

/**
 * What the server is told about our services. User-only services are never offered to a server.
 *
 * `sub_type` is always `query`. The reference server fakes success for a `control` tool and never
 * waits for its result, so the model would tell the user "done" for a call the user may yet deny,
 * or that failed (a file that already exists, a full disk). Every one of our services goes through
 * the permission gate and can be refused, so the model must always see the real outcome.
 */
export function toolDefinitions(tools: readonly ToolEntry[]): RobotToolDefinition[] {
  return tools
    .filter((t) => !t.userOnly)
    .map((t) => ({
      name: t.name,
      description: t.description,
      main_type: 'remote',
      sub_type: 'query',
      parameters: t.inputSchema,
    }));
}

export function registerRequest(
  id: string,
  macAddr: string,
  tools: RobotToolDefinition[],
): Record<string, unknown> {
  return { jsonrpc: '2.0', method: METHODS.register, params: { mac_addr: macAddr, tools }, id };
}

export type AckVerdict = { ok: true } | { ok: false; message: string };

/**
 * A registration ack, either shape: `{jsonrpc, id, result: {status: "registered"}}` (the doc) or
 * `{id, result: {status: "success"}}` (the server code). An `error`, or a result whose status says
 * it failed, is a refusal.
 */
export function readAck(msg: Extract<JsonRpcMessage, { kind: 'response' }>): AckVerdict {
  if (msg.error) return { ok: false, message: msg.error.message || `error ${msg.error.code}` };
  const result = msg.result as { status?: unknown; message?: unknown } | null | undefined;
  const status = typeof result?.status === 'string' ? result.status.toLowerCase() : undefined;
  if (status === 'error' || status === 'failed' || status === 'fail') {
    return {
      ok: false,
      message: typeof result?.message === 'string' && result.message ? result.message : status,
    };
  }
  return { ok: true };
}

// --- incoming frames -------------------------------------------------------------------------

/**
 * Parse a text frame. One version of the reference server sends its events JSON-encoded twice (a
 * JSON string holding the JSON), so a string that itself parses to an object is unwrapped once.
 */
export function parseServerText(text: string): JsonRpcMessage {
  let value: unknown;
  try {
    value = JSON.parse(text);
    if (typeof value === 'string') value = JSON.parse(value);
  } catch (err) {
    return { kind: 'invalid', message: `not JSON (${(err as Error).message})` };
  }
  return classify(value);
}

export type ExecuteParams =
  { ok: true; tool: string; input: unknown } | { ok: false; message: string };

/** `params.tool_name` (required) and `params.tool_input` (an object; missing means `{}`). */
export function readExecute(params: unknown): ExecuteParams {
  if (!params || typeof params !== 'object' || Array.isArray(params))
    return { ok: false, message: 'mcp/tool/execute needs params with a tool_name' };
  const p = params as Record<string, unknown>;
  if (typeof p.tool_name !== 'string' || !p.tool_name.trim())
    return { ok: false, message: 'mcp/tool/execute needs params.tool_name (a non-empty string)' };
  let input = p.tool_input ?? {};
  // Some model stacks pass tool arguments as a JSON string; accept it when it holds an object.
  if (typeof input === 'string') {
    try {
      const parsed: unknown = JSON.parse(input);
      if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) input = parsed;
    } catch {
      // Left as it is: the gate refuses non-object params with a clear message.
    }
  }
  // Cut, not refused: the gate still records the call (an unknown service) and answers it.
  return { ok: true, tool: cutString(p.tool_name, MAX_NAME_CHARS), input };
}

export type AiMessage = { type: 'chunk' | 'final' | 'thought'; content: string };

/** `params.type` and `params.content` of `mcp/ai/message`; undefined when unreadable. */
export function readAiMessage(params: unknown): AiMessage | { unknownType: string } | undefined {
  if (!params || typeof params !== 'object') return undefined;
  const p = params as Record<string, unknown>;
  const content =
    typeof p.content === 'string' ? p.content : p.content == null ? '' : JSON.stringify(p.content);
  if (p.type === 'chunk' || p.type === 'final' || p.type === 'thought')
    return { type: p.type, content };
  const type = typeof p.type === 'string' ? p.type : String(JSON.stringify(p.type));
  return { unknownType: cutString(type, MAX_NAME_CHARS) };
}

// --- tool results ----------------------------------------------------------------------------

/**
 * The gate's stable error codes on the wire. The doc reserves -32000…-32099 for these; the code
 * tells a program the kind, the message (the gate's, verbatim) tells the model what to do.
 *
 * | code   | gate codes                                          | meaning                       |
 * |--------|-----------------------------------------------------|-------------------------------|
 * | -32000 | (any code not listed below)                         | the call failed               |
 * | -32001 | unknown_service                                     | no such service               |
 * | -32002 | invalid_params, path_invalid, not_found (+ malformed execute) | fix the arguments   |
 * | -32003 | denied, prompt_timeout, no_prompt_ui                | the user did not allow it     |
 * | -32004 | service_error, service_timeout, cancelled, unsupported, limit_reached | it failed   |
 * | -32005 | disabled                                            | switched off by the user      |
 * | -32006 | duplicate                                           | a repeat; not run twice       |
 * | -32007 | path_outside_roots                                  | outside the allowed folders   |
 * | -32008 | file_exists, file_too_large, disk_full              | the file could not be written |
 *
 * A malformed `mcp/tool/execute` (no tool_name) is answered with -32002 too, not JSON-RPC's
 * -32602: every answer to an execute stays in the range the doc gives for tool errors.
 */
export const ROBOT_ERROR_CODES: Record<ErrorCode, number> = {
  unknown_service: -32001,
  invalid_params: -32002,
  path_invalid: -32002,
  denied: -32003,
  prompt_timeout: -32003,
  no_prompt_ui: -32003,
  service_error: -32004,
  service_timeout: -32004,
  cancelled: -32004,
  audit_unavailable: -32004,
  disabled: -32005,
  duplicate: -32006,
  path_outside_roots: -32007,
  file_exists: -32008,
  file_too_large: -32008,
  disk_full: -32008,
  not_found: -32002,
  unsupported: -32004,
  limit_reached: -32004,
};

export const MALFORMED_EXECUTE_CODE = -32002;
export const GENERIC_ERROR_CODE = -32000;

export function robotErrorCode(code: string): number {
  return (ROBOT_ERROR_CODES as Record<string, number>)[code] ?? GENERIC_ERROR_CODE;
}

export type ToolOutcome =
  { ok: true; data: unknown } | { ok: false; code: string; message: string };

/**
 * The one response to an execute, as text. Success carries the service's data as it is (an
 * object stays an object); `undefined` becomes `null` so the `result` member is never dropped.
 * Data that cannot be encoded still answers the call, with an error.
 */
export function executeResponse(id: JsonRpcId, outcome: ToolOutcome): string {
  if (!outcome.ok)
    return JSON.stringify(rpcError(id, robotErrorCode(outcome.code), outcome.message));
  try {
    return JSON.stringify({ jsonrpc: '2.0', id, result: outcome.data ?? null });
  } catch (err) {
    return JSON.stringify(
      rpcError(
        id,
        ROBOT_ERROR_CODES.service_error,
        `the result could not be encoded: ${(err as Error).message}`,
      ),
    );
  }
}

// --- chat and voice --------------------------------------------------------------------------

export function notification(method: string, params: Record<string, unknown> = {}): string {
  return JSON.stringify({ jsonrpc: '2.0', method, params });
}

/**
 * GUESS: a typed chat turn. Neither the doc nor the reference server has a way to send text (its
 * own simulator speaks text through local TTS instead), so this mirrors `mcp/ai/message`. A server
 * that does not know it ignores it (the reference server logs unknown methods and goes on).
 */
export function userTextMessage(content: string, macAddr: string): string {
  return notification(METHODS.userMessage, { type: 'text', content, mac_addr: macAddr });
}
