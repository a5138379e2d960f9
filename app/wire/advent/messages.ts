/**
 * MCP over Advent (type 6, seeds 000–002): `register` our services, answer each `call` with
 * exactly one `result` on the call's task id. Every call goes through the one gate.
 */
import type { DispatchResult } from '../../dispatch.js';
import { MAX_ID_CHARS, MAX_NAME_CHARS, cutString } from '../kit/bounds.js';
import type { ToolEntry } from '../session.js';

export interface RegisterService {
  description: string;
  parameters: unknown;
}

// The keywords the Advent MCP supplement documents (§3.2, §5.1), plus `properties` and `items`
// that carry them. Strict out (DESIGN §1.4): everything else is enforced by the gate, not sent.
const SERVER_KEYWORDS = new Set([
  'type',
  'properties',
  'items',
  'required',
  'enum',
  'minimum',
  'maximum',
  'minLength',
  'maxLength',
  'description',
]);

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** A service's parameters with only the keywords the Advent server documents (a copy). */
export function adventParameters(schema: unknown): unknown {
  if (!isRecord(schema)) return schema;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (!SERVER_KEYWORDS.has(key)) continue;
    if (key === 'properties' && isRecord(value)) {
      out[key] = Object.fromEntries(
        Object.entries(value).map(([k, v]) => [k, adventParameters(v)]),
      );
    } else if (key === 'items') {
      out[key] = Array.isArray(value) ? value.map(adventParameters) : adventParameters(value);
    } else {
      out[key] = structuredClone(value);
    }
  }
  return out;
}

/** The `services` map of `register`: every service a server may call (user-only ones left out). */
export function registerServices(tools: readonly ToolEntry[]): Record<string, RegisterService> {
  return Object.fromEntries(
    tools
      .filter((t) => !t.userOnly)
      .map((t) => [
        t.name,
        { description: t.description, parameters: adventParameters(t.inputSchema) },
      ]),
  );
}

export function registerMessage(services: Record<string, RegisterService>): string {
  return frameJson({ type: 'register', data: { services } });
}

/**
 * JSON for a frame payload. Frames have no escaping (§2): a payload holding `##END` would end its
 * frame early, and `encodeFrame` refuses it. Text from the other side can hold it (a call id or
 * a service name echoed back, a file's contents, an imported tool's description), so every `#`
 * is written as the JSON escape `\u0023`: the same JSON to any parser, and no marker on the wire.
 * JSON has `#` only inside strings, where the escape is valid.
 */
export function frameJson(value: unknown): string {
  return JSON.stringify(value).replace(/#/g, '\\u0023');
}

export interface IncomingCall {
  callId: string;
  /** The call_id exactly as sent (string or number), echoed back unchanged. */
  rawCallId: string | number;
  method: string;
  params: unknown;
}

export type ParsedMcp =
  | { kind: 'call'; call: IncomingCall }
  | { kind: 'bad_call'; rawCallId?: string | number; message: string }
  | { kind: 'other'; type: string; message: unknown }
  | { kind: 'unreadable'; message: string };

/** Liberal in: string or number call ids, params missing (= {}), extra fields ignored. */
export function parseMcp(payload: string): ParsedMcp {
  let msg: unknown;
  try {
    msg = JSON.parse(payload);
  } catch (err) {
    return { kind: 'unreadable', message: `MCP frame is not JSON (${(err as Error).message})` };
  }
  if (!msg || typeof msg !== 'object' || Array.isArray(msg))
    return { kind: 'unreadable', message: 'MCP frame is not a JSON object' };
  const { type, data } = msg as { type?: unknown; data?: unknown };
  if (type !== 'call')
    return { kind: 'other', type: cutString(String(type), MAX_NAME_CHARS), message: msg };
  if (!data || typeof data !== 'object')
    return { kind: 'bad_call', message: "the call has no 'data' object" };
  const d = data as { call_id?: unknown; method?: unknown; params?: unknown };
  const rawCallId =
    typeof d.call_id === 'string' || typeof d.call_id === 'number' ? d.call_id : undefined;
  if (rawCallId === undefined || String(rawCallId) === '')
    return { kind: 'bad_call', message: "the call has no 'call_id'" };
  // An id nobody could mean is not kept (to run it, remember it or echo it back later).
  if (String(rawCallId).length > MAX_ID_CHARS)
    return {
      kind: 'bad_call',
      message: `a call_id of ${String(rawCallId).length} characters was ignored (at most ${MAX_ID_CHARS})`,
    };
  if (typeof d.method !== 'string' || !d.method) {
    return { kind: 'bad_call', rawCallId, message: "the call has no 'method' naming the service" };
  }
  return {
    kind: 'call',
    call: {
      callId: String(rawCallId),
      rawCallId,
      // Cut, not refused: the gate still records the call (an unknown service) and answers it.
      method: cutString(d.method, MAX_NAME_CHARS),
      params: d.params ?? {},
    },
  };
}

/** The `result` for one call: `success:false` always carries a message a model can act on. */
export function resultMessage(rawCallId: string | number, result: DispatchResult): string {
  const body = result.ok
    ? { success: true, data: result.data === undefined ? null : result.data }
    : { success: false, error: result.message };
  return frameJson({ type: 'result', data: { call_id: rawCallId, result: body } });
}

export function badCallResult(rawCallId: string | number, message: string): string {
  return frameJson({
    type: 'result',
    data: { call_id: rawCallId, result: { success: false, error: message } },
  });
}
