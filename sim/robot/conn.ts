/**
 * The robot simulator's side of one WebSocket connection: it reads what the client sends, checks
 * it against protocols/robot-rpc.md (every rule broken is a violation), and speaks the server's
 * part, quirks included — each execute sent twice, acks without `jsonrpc`, events encoded twice.
 */
import WebSocket from 'ws';
import type { Clock } from '../../app/clock.js';
import type { IdSource } from '../../app/ids.js';
import { pieces } from '../advent/demo.js';
import { type CallWait, callWaitMs } from '../kit/deadline.js';
import { cancelledNotification } from '../kit/mcp-client.js';
import { TimerSet } from '../kit/timers.js';

export type AckShape = 'registered' | 'success';
export type DuplicateOrder = 'id-first' | 'idless-first';

export interface RobotToolRecord {
  name?: unknown;
  description?: unknown;
  main_type?: unknown;
  sub_type?: unknown;
  parameters?: unknown;
}

export interface RobotRegistration {
  conn: number;
  id: string | number | undefined;
  macAddr: string | undefined;
  tools: RobotToolRecord[];
  at: number;
}

/** One message the client sent: text (with its JSON when it parses) or binary. */
export interface RobotReceived {
  conn: number;
  text?: string;
  json?: unknown;
  binary?: Buffer;
  at: number;
}

/** One voice upload: from `start_stream` (or the first audio) to its end. */
export interface RobotStream {
  conn: number;
  /** `mcp/audio/start_stream` came first (the newer reference server does not need it). */
  started: boolean;
  pcm: Buffer;
  /** What ended it: the client's `end_stream`, the simulated VAD's `stop_stream`, or a close. */
  end?: 'end_stream' | 'stop_stream' | 'closed';
  /** `params` of the client's `end_stream`. */
  endParams?: unknown;
}

export interface ExecuteOutcome {
  result?: unknown;
  error?: { code: number; message: string; data?: unknown };
}

export interface ExecuteOptions {
  timeoutMs?: number;
  /** Send the id-less twin too (default: the simulator's `duplicateExecutes`). */
  duplicate?: boolean;
  order?: DuplicateOrder;
}

export interface ConnSettings {
  ackShape: AckShape;
  noAck: boolean;
  ackError: string | undefined;
  duplicateExecutes: boolean;
  duplicateOrder: DuplicateOrder;
  doubleEncodeEvents: boolean;
  numericIds: boolean;
  writeTools: readonly string[];
  executeTimeoutMs: CallWait;
  vadStopAfterMs: number | undefined;
}

/** What a connection tells its simulator. */
export interface ConnHost {
  clock: Clock;
  ids: IdSource;
  settings(): ConnSettings;
  received(message: RobotReceived): void;
  violation(conn: number, message: string): void;
  registered(registration: RobotRegistration): void;
  streamEnded(stream: RobotStream, conn: RobotConn): void;
  userText(text: string, conn: RobotConn): void;
  executed(e: { conn: number; id: string | number; tool: string; input: unknown }): void;
  answered(e: { conn: number; id: string | number; outcome: ExecuteOutcome }): void;
  changed(): void;
}

interface PendingExecute {
  resolve(outcome: ExecuteOutcome): void;
  reject(err: Error): void;
  timer: ReturnType<TimerSet['set']>;
}

const MAC = /^[0-9A-F]{2}(-[0-9A-F]{2}){5}$/;
const SUB_TYPES = ['control', 'query'];

export class RobotConn {
  /** The latest registration's `mac_addr` and tools. */
  macAddr: string | undefined;
  tools: RobotToolRecord[] = [];
  /** Every binary byte the client sent on this connection. */
  readonly pcm: Buffer[] = [];
  private stream: RobotStream | undefined;
  /** After `stop_stream` and before the next `start_stream`: audio still in flight, not a turn. */
  private stopped = false;
  /** Bytes that arrived after `stop_stream` (in flight when it was sent, or a client ignoring it). */
  lateAudioBytes = 0;
  private readonly sentIds = new Map<string, string | number>();
  private readonly answers = new Map<string, number>();
  private readonly pending = new Map<string, PendingExecute>();
  /** Executes this server gave up on and cancelled: a response to one is a broken rule. */
  private readonly cancelled = new Set<string>();
  readonly timers: TimerSet;
  private closedFlag = false;

  constructor(
    readonly conn: number,
    readonly socket: WebSocket,
    private readonly host: ConnHost,
  ) {
    this.timers = new TimerSet(host.clock);
    socket.on('message', (data, isBinary) => this.onMessage(toBuffer(data), isBinary));
  }

  get closed(): boolean {
    return this.closedFlag || this.socket.readyState !== WebSocket.OPEN;
  }

  /** Names of the tools the client registered last. */
  get toolNames(): string[] {
    return this.tools.map((t) => String(t.name));
  }

  // --- the server's part ---------------------------------------------------------------------

  /**
   * Ask the client to run a tool, the way the reference server does: a request with an id and,
   * unless told otherwise, the same call again without one. Resolves with the response to the id.
   */
  execute(tool: string, input: unknown, options: ExecuteOptions = {}): Promise<ExecuteOutcome> {
    const s = this.host.settings();
    if (this.closed) return Promise.reject(new Error(`connection ${this.conn} is closed`));
    const id: string | number = s.numericIds
      ? parseInt(this.host.ids.hex(8), 16)
      : `tool-call-${this.host.ids.hex(12)}`;
    const key = String(id);
    this.sentIds.set(key, id);
    const params = { tool_name: tool, tool_input: input };
    const withId = { jsonrpc: '2.0', method: 'mcp/tool/execute', params, id };
    const idless = { jsonrpc: '2.0', method: 'mcp/tool/execute', params };
    const timeoutMs = callWaitMs(options.timeoutMs ?? s.executeTimeoutMs);
    const answer = new Promise<ExecuteOutcome>((resolve, reject) => {
      const timer = this.timers.set(() => {
        this.pending.delete(key);
        // A server that gives up says so (MCP's way); the client must send nothing more for it.
        this.cancelled.add(key);
        this.sendJson(cancelledNotification(id));
        reject(new Error(`no response to execute '${key}' (${tool}) within ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending.set(key, { resolve, reject, timer });
    });
    this.host.executed({ conn: this.conn, id, tool, input });
    const duplicate = options.duplicate ?? s.duplicateExecutes;
    const order = options.order ?? s.duplicateOrder;
    if (duplicate && order === 'idless-first') this.event(idless);
    this.sendJson(withId);
    if (duplicate && order === 'id-first') this.event(idless);
    return answer;
  }

  aiMessage(type: string, content: string): void {
    this.event({ jsonrpc: '2.0', method: 'mcp/ai/message', params: { type, content } });
  }

  /** A streamed reply: a thought (if any), the text in pieces, then the whole text as `final`. */
  reply(text: string, thought?: string): void {
    if (thought) this.aiMessage('thought', thought);
    for (const piece of pieces(text)) this.aiMessage('chunk', piece);
    this.aiMessage('final', text);
  }

  /** Playback: `start_audio`, the PCM in frames of `chunkBytes`, then the empty frame. */
  sendAudio(pcm: Buffer, chunkBytes = 3200): void {
    this.event({ jsonrpc: '2.0', method: 'mcp/server/start_audio', params: {} });
    for (let at = 0; at < pcm.length; at += chunkBytes)
      this.sendBinary(pcm.subarray(at, at + chunkBytes));
    this.sendBinary(Buffer.alloc(0));
  }

  /** The VAD heard the end of speech: the client must stop uploading. */
  stopStream(): void {
    this.event({ jsonrpc: '2.0', method: 'mcp/audio/stop_stream', params: {} });
    this.stopped = true;
    const stream = this.stream;
    if (stream) this.finishStream(stream, 'stop_stream');
  }

  /** Anything at all, for hostile scripts: a string goes out as it is. */
  sendRaw(data: string | Buffer): void {
    if (this.closed) return;
    if (typeof data === 'string') this.socket.send(data);
    else this.socket.send(data, { binary: true });
  }

  sendJson(value: unknown): void {
    this.sendRaw(JSON.stringify(value));
  }

  sendBinary(data: Buffer): void {
    this.sendRaw(Buffer.from(data));
  }

  terminate(): void {
    this.socket.terminate();
  }

  /** The socket closed: fail whoever waits for an answer, end the open upload. */
  closedNow(): void {
    if (this.closedFlag) return;
    this.closedFlag = true;
    this.timers.clearAll();
    for (const [key, p] of this.pending)
      p.reject(new Error(`connection ${this.conn} closed before execute '${key}' was answered`));
    this.pending.clear();
    if (this.stream) this.finishStream(this.stream, 'closed');
  }

  // --- what the client sends -----------------------------------------------------------------

  private onMessage(data: Buffer, isBinary: boolean): void {
    const at = this.host.clock.now();
    if (isBinary) {
      this.host.received({ conn: this.conn, binary: data, at });
      this.onAudio(data);
      return;
    }
    const text = data.toString('utf8');
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      this.host.received({ conn: this.conn, text, at });
      this.violation(`a text frame that is not JSON: ${short(text)}`);
      return;
    }
    this.host.received({ conn: this.conn, text, json, at });
    if (!json || typeof json !== 'object' || Array.isArray(json)) {
      this.violation(`a JSON-RPC message must be an object: ${short(text)}`);
      return;
    }
    const m = json as Record<string, unknown>;
    if (m.jsonrpc !== '2.0') this.violation(`a message without jsonrpc "2.0": ${short(text)}`);
    if (typeof m.method === 'string') this.onMethod(m.method, m.params, m.id);
    else if ('result' in m || 'error' in m) this.onResponse(m);
    else this.violation(`a message with neither method nor result: ${short(text)}`);
  }

  private onMethod(method: string, params: unknown, id: unknown): void {
    const p = (params && typeof params === 'object' ? params : {}) as Record<string, unknown>;
    switch (method) {
      case 'mcp/registerTools':
        this.onRegister(p, id);
        return;
      case 'mcp/audio/start_stream':
        if (this.stream) this.finishStream(this.stream, 'end_stream');
        this.stopped = false;
        this.stream = { conn: this.conn, started: true, pcm: Buffer.alloc(0) };
        this.host.changed();
        return;
      case 'mcp/audio/end_stream': {
        this.stopped = false;
        const stream = this.stream ?? { conn: this.conn, started: false, pcm: Buffer.alloc(0) };
        stream.endParams = params;
        this.finishStream(stream, 'end_stream');
        return;
      }
      case 'mcp/user/message':
        if (typeof p.content === 'string') this.host.userText(p.content, this);
        else this.violation('mcp/user/message without a string content');
        return;
      default:
        // Unknown methods are logged and ignored, as the reference server does.
        return;
    }
  }

  private onRegister(p: Record<string, unknown>, id: unknown): void {
    if (id === undefined || id === null)
      this.violation('mcp/registerTools without an id (the doc requires one for the ack)');
    const mac = typeof p.mac_addr === 'string' ? p.mac_addr : undefined;
    if (mac === undefined) this.violation('mcp/registerTools without params.mac_addr');
    else if (!MAC.test(mac))
      this.violation(`mac_addr '${mac}' is not in the doc's form AA-BB-CC-DD-EE-FF`);
    const tools = Array.isArray(p.tools) ? (p.tools as RobotToolRecord[]) : [];
    if (!Array.isArray(p.tools)) this.violation('mcp/registerTools without a params.tools array');
    const writeTools = this.host.settings().writeTools;
    for (const t of tools) {
      const name = typeof t?.name === 'string' ? t.name : undefined;
      if (!name) {
        this.violation(`a tool without a name: ${short(JSON.stringify(t))}`);
        continue;
      }
      if (typeof t.description !== 'string') this.violation(`tool '${name}' has no description`);
      if (t.main_type !== 'remote')
        this.violation(`tool '${name}' has main_type ${JSON.stringify(t.main_type)}, not "remote"`);
      if (!SUB_TYPES.includes(t.sub_type as string))
        this.violation(`tool '${name}' has sub_type ${JSON.stringify(t.sub_type)}`);
      if (t.sub_type === 'control' && writeTools.includes(name))
        this.violation(
          `write-class tool '${name}' registered as control: the server fakes its success`,
        );
      const schema = t.parameters as { type?: unknown } | undefined;
      if (!schema || typeof schema !== 'object' || schema.type !== 'object')
        this.violation(`tool '${name}' has no object JSON Schema in parameters`);
    }
    this.macAddr = mac;
    this.tools = tools;
    this.host.registered({
      conn: this.conn,
      id: typeof id === 'string' || typeof id === 'number' ? id : undefined,
      macAddr: mac,
      tools,
      at: this.host.clock.now(),
    });
    this.ack(id);
  }

  private ack(id: unknown): void {
    const s = this.host.settings();
    if (s.noAck || id === undefined || id === null) return;
    if (s.ackError !== undefined) {
      this.sendJson({ jsonrpc: '2.0', id, error: { code: -32000, message: s.ackError } });
      return;
    }
    // The doc's shape, or the server code's: no jsonrpc member, status "success".
    if (s.ackShape === 'success') this.sendJson({ id, result: { status: 'success' } });
    else
      this.sendJson({
        jsonrpc: '2.0',
        id,
        result: { status: 'registered', message: 'Tools were successfully registered.' },
      });
  }

  private onResponse(m: Record<string, unknown>): void {
    const id = m.id;
    if (id === undefined || id === null) {
      this.violation(
        `a response without an id (an id-less execute must not be answered): ${short(JSON.stringify(m))}`,
      );
      return;
    }
    const key = String(id);
    const sent = this.sentIds.get(key);
    if (sent === undefined) {
      this.violation(`a response to id ${JSON.stringify(id)}, which the server never sent`);
      return;
    }
    if (this.cancelled.has(key)) {
      this.violation(`a response to execute '${key}', which the server had cancelled`);
      return;
    }
    if (typeof sent !== typeof id)
      this.violation(`the response to ${JSON.stringify(sent)} changed the id's type`);
    const count = (this.answers.get(key) ?? 0) + 1;
    this.answers.set(key, count);
    if (count > 1) {
      this.violation(`${count} responses to execute '${key}' (exactly one is allowed)`);
      return;
    }
    const outcome: ExecuteOutcome = {};
    if ('error' in m) {
      const e = m.error as { code?: unknown; message?: unknown } | null;
      if (!e || typeof e.code !== 'number' || typeof e.message !== 'string') {
        this.violation(`a malformed error in the response to '${key}'`);
      } else if (e.code < -32099 || e.code > -32000) {
        this.violation(`error code ${e.code} for '${key}' is outside -32000…-32099`);
      }
      outcome.error = m.error as ExecuteOutcome['error'];
    } else {
      outcome.result = m.result;
    }
    this.host.answered({ conn: this.conn, id: sent, outcome });
    const pending = this.pending.get(key);
    if (pending) {
      this.pending.delete(key);
      this.timers.clear(pending.timer);
      pending.resolve(outcome);
    }
  }

  private onAudio(data: Buffer): void {
    this.pcm.push(data);
    if (data.length === 0) return;
    if (this.stopped) {
      this.lateAudioBytes += data.length;
      return;
    }
    // The newer reference server takes audio without start_stream: not a violation.
    this.stream ??= { conn: this.conn, started: false, pcm: Buffer.alloc(0) };
    const stream = this.stream;
    stream.pcm = Buffer.concat([stream.pcm, data]);
    const vad = this.host.settings().vadStopAfterMs;
    if (vad !== undefined && stream.pcm.length >= vad * 32) this.stopStream();
  }

  private finishStream(stream: RobotStream, end: NonNullable<RobotStream['end']>): void {
    if (this.stream === stream) this.stream = undefined;
    if (stream.end) return;
    stream.end = end;
    this.host.streamEnded(stream, this);
  }

  /** A server event: encoded twice when the simulator copies that reference-server version. */
  private event(value: unknown): void {
    const text = JSON.stringify(value);
    this.sendRaw(this.host.settings().doubleEncodeEvents ? JSON.stringify(text) : text);
  }

  private violation(message: string): void {
    this.host.violation(this.conn, message);
  }
}

function toBuffer(data: WebSocket.RawData): Buffer {
  if (Buffer.isBuffer(data)) return data;
  if (Array.isArray(data)) return Buffer.concat(data);
  return Buffer.from(data);
}

function short(text: string, max = 160): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}
