/**
 * What the simulator holds the client to (protocols/advent.md; the seeds for MCP). The agent is
 * "strict out", so anything here that fails is a bug in the client, not a server quirk. Each check
 * returns readable problems instead of throwing: a test wants the whole list, not the first one.
 */

export interface AuthPayload {
  token: string;
  /** `key:value` pairs after the token, split at the first colon (voice ids may contain spaces). */
  params: Record<string, string>;
}

export function parseAuth(text: string): { auth: AuthPayload; problems: string[] } {
  const [token = '', ...pairs] = text.split('##');
  const problems: string[] = [];
  if (token.trim() === '') problems.push('AUTH has an empty token');
  const params: Record<string, string> = {};
  for (const pair of pairs) {
    const colon = pair.indexOf(':');
    if (colon <= 0) {
      problems.push(`AUTH parameter '${pair}' is not key:value`);
      continue;
    }
    const key = pair.slice(0, colon);
    if (key in params) problems.push(`AUTH parameter '${key}' is sent twice`);
    params[key] = pair.slice(colon + 1);
  }
  return { auth: { token, params }, problems };
}

export interface McpMessage {
  type: string;
  data: unknown;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** An MCP payload must be JSON `{type, data}` (seed §2.2, §3.2, §4.3). */
export function parseMcp(text: string): {
  json?: unknown;
  message?: McpMessage;
  problems: string[];
} {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    return { problems: [`MCP payload is not valid JSON (${(err as Error).message})`] };
  }
  if (!isObject(json) || typeof json.type !== 'string' || !('data' in json)) {
    return { json, problems: ['MCP payload is not an object {type: string, data}'] };
  }
  return { json, message: { type: json.type, data: json.data }, problems: [] };
}

// DESIGN.md §3 names services [a-z][a-z0-9_]*; the server's own rule is unknown, ours is stricter.
const SERVICE_NAME = /^[a-z][a-z0-9_]*$/;
const SCHEMA_TYPES = new Set(['string', 'number', 'integer', 'boolean', 'array', 'object']);

/** A `register`'s data: `{services: {name: {description: string, parameters: {type:'object',…}}}}`. */
export function checkRegister(data: unknown): string[] {
  if (!isObject(data) || !isObject(data.services)) return ['register data has no services object'];
  const problems: string[] = [];
  for (const [name, def] of Object.entries(data.services)) {
    const where = `register: service '${name}'`;
    if (!SERVICE_NAME.test(name)) problems.push(`${where} has a name outside [a-z][a-z0-9_]*`);
    if (!isObject(def)) {
      problems.push(`${where} is not an object`);
      continue;
    }
    if (typeof def.description !== 'string' || def.description.trim() === '') {
      problems.push(`${where} has no description string`);
    }
    problems.push(...checkParameters(where, def.parameters));
  }
  return problems;
}

function checkParameters(where: string, params: unknown): string[] {
  if (!isObject(params) || params.type !== 'object') {
    return [`${where}: parameters is not a JSON Schema {type: 'object', ...}`];
  }
  const problems: string[] = [];
  const props = params.properties;
  if (props !== undefined && !isObject(props))
    problems.push(`${where}: properties is not an object`);
  if (isObject(props)) {
    for (const [prop, schema] of Object.entries(props)) {
      if (!isObject(schema)) {
        problems.push(`${where}: property '${prop}' is not a schema object`);
        continue;
      }
      const types = Array.isArray(schema.type) ? schema.type : [schema.type];
      if (schema.type !== undefined && !types.every((t) => SCHEMA_TYPES.has(t as string))) {
        problems.push(`${where}: property '${prop}' has type ${JSON.stringify(schema.type)}`);
      }
      if (schema.enum !== undefined && (!Array.isArray(schema.enum) || schema.enum.length === 0)) {
        problems.push(`${where}: property '${prop}' has an enum that is not a non-empty array`);
      }
    }
  }
  const required = params.required;
  if (required !== undefined) {
    if (!Array.isArray(required) || !required.every((r) => typeof r === 'string')) {
      problems.push(`${where}: required is not an array of strings`);
    } else if (isObject(props)) {
      for (const r of required) {
        if (!(r in props)) problems.push(`${where}: required '${r}' is not among its properties`);
      }
    }
  }
  return problems;
}

export interface CallResult {
  success: boolean;
  data?: unknown;
  error?: string;
}

/** A `result`'s data: `{call_id: string, result: {success: true, data} | {success: false, error}}`. */
export function checkResult(data: unknown): {
  callId?: string;
  result?: CallResult;
  problems: string[];
} {
  if (!isObject(data)) return { problems: ['result data is not an object'] };
  const problems: string[] = [];
  const callId = typeof data.call_id === 'string' ? data.call_id : undefined;
  if (callId === undefined) problems.push('result has no call_id string');
  const r = data.result;
  if (!isObject(r) || typeof r.success !== 'boolean') {
    problems.push(`result${callId ? ` for ${callId}` : ''} has no {success: boolean} object`);
    return { callId, problems };
  }
  const result: CallResult = { success: r.success };
  if ('data' in r) result.data = r.data;
  if (typeof r.error === 'string') result.error = r.error;
  if (r.success && !('data' in r))
    problems.push(`result for ${callId} has success:true but no data`);
  if (!r.success && (typeof r.error !== 'string' || r.error.trim() === '')) {
    problems.push(`result for ${callId} has success:false but no error message`);
  }
  return { callId, result, problems };
}

/** LISTEN (type 8): `{taskid, type: "listen", state, [mode]}` (protocol §6.3). */
export function checkListen(json: unknown): string[] {
  if (!isObject(json) || json.type !== 'listen' || typeof json.state !== 'string') {
    return ['LISTEN payload is not {taskid, type: "listen", state}'];
  }
  return typeof json.taskid === 'string' ? [] : ['LISTEN payload has no taskid string'];
}

const START = Buffer.from('##START', 'latin1');
const HEADER = 20;

/**
 * The decoder drops a header whose seq is not 4 digits as garbage without saying why, so the raw
 * stream is scanned for headers that are right except for the seq. The last 19 bytes are carried
 * between chunks: a header cut by a chunk boundary is seen whole exactly once.
 */
export class BadSeqScanner {
  private carry = Buffer.alloc(0);

  push(chunk: Buffer): string[] {
    const data = this.carry.length ? Buffer.concat([this.carry, chunk]) : chunk;
    const problems: string[] = [];
    for (let at = data.indexOf(START); at >= 0; at = data.indexOf(START, at + 1)) {
      if (data.length - at < HEADER) break;
      const type = data[at + 7]!;
      const task = data.subarray(at + 8, at + 16);
      const seq = data.subarray(at + 16, at + 20);
      if (type < 1 || type > 31 || !task.every((c) => c >= 0x20 && c <= 0x7e)) continue;
      if (!seq.every((c) => c >= 0x30 && c <= 0x39)) {
        problems.push(
          `frame type ${type} on task '${task.toString('latin1')}' has seq ${JSON.stringify(seq.toString('latin1'))}: seq must be 4 ASCII digits`,
        );
      }
    }
    this.carry = Buffer.from(data.subarray(Math.max(0, data.length - (HEADER - 1))));
    return problems;
  }
}
