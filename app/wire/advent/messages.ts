/**
 * MCP over Advent (type 6, seeds 000–002): `register` our services, answer each `call` with
 * exactly one `result` on the call's task id. Every call goes through the one gate.
 */
import type { DispatchResult } from '../../dispatch.js';
import { MAX_ID_CHARS, MAX_NAME_CHARS, cutString } from '../kit/bounds.js';

export interface RegisterService {
  description: string;
  parameters: unknown;
}

export function registerMessage(services: Record<string, RegisterService>): string {
  return JSON.stringify({ type: 'register', data: { services } });
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
  return JSON.stringify({ type: 'result', data: { call_id: rawCallId, result: body } });
}

export function badCallResult(rawCallId: string | number, message: string): string {
  return JSON.stringify({
    type: 'result',
    data: { call_id: rawCallId, result: { success: false, error: message } },
  });
}
