/**
 * The server's side of one XiaoZhi device connection in the simulator: it answers the device
 * hello, runs MCP as the real backend does (it is the MCP *client*), hears the device's voice and
 * lets a test script the server's replies. Every protocol rule the device breaks is noted.
 *
 * Real-server quirks it plays (protocols/xiaozhi.md B):
 * - `initialize` (id 1) goes out as soon as the device hello says `features.mcp`, before the
 *   server hello unless `mcpBeforeHello: false`;
 * - `tools/list` always uses id 2, page after page, following `nextCursor`;
 * - of a call's result only `content[0].text` is read;
 * - with `renameDots`, dots in tool names become underscores (mapped back when calling).
 */
import type WebSocket from 'ws';
import { OpusDecoder, OpusEncoder, type OpusRate } from '../../app/audio/opus.js';
import {
  BinaryFrameError,
  type ProtocolVersion,
  decodeAudioFrame,
  encodeAudioFrame,
} from '../../app/wire/xiaozhi/binary.js';
import { PendingRequests, cancelledNotification, firstText, walkTools } from '../kit/mcp-client.js';
import type {
  XzCallResult,
  XzConnectionRecord,
  XzListenEvent,
  XzSimTool,
  XzTurn,
} from './records.js';
import type { TimerSet } from '../kit/timers.js';
import { sineTone } from '../kit/tone.js';

const INITIALIZE_ID = 1;
const LIST_ID = 2;
const PAGE_BYTES = 8000;

export interface XzConnSettings {
  mcpBeforeHello: boolean;
  helloDelayMs: number;
  sendHello: boolean;
  downlinkRate: OpusRate;
  /** How long a tools/call is waited for (read at each call); then the server cancels it. */
  callTimeoutMs: number | (() => number);
  renameDots: boolean;
  withUserTools: boolean;
  /** Merged into the `initialize` params (e.g. `{capabilities: {vision: {url, token}}}`). */
  initializeParams: Record<string, unknown>;
  /** Keep uplink PCM for `receivedPcm` (off for a long-running demo). */
  keepPcm: boolean;
}

export interface XzConnHost {
  record(
    message: { kind: 'text'; text: string; json: unknown } | { kind: 'binary'; bytes: Buffer },
  ): void;
  violation(message: string): void;
  hello(version: unknown): void;
  listed(tools: XzSimTool[]): void;
  listChanged(): void;
  call(id: number | string, name: string, args: unknown): void;
  result(id: number | string, result: XzCallResult): void;
  listen(event: XzListenEvent): void;
  abort(reason: string | undefined): void;
  turn(turn: XzTurn): void;
  error(message: string): void;
}

export class XzSimConnection {
  readonly conn: number;
  /** The latest complete listing on this connection. */
  tools: XzSimTool[] | undefined;
  /** What the device answered to `initialize`. */
  initializeResult: Record<string, unknown> | undefined;
  /** `abort` messages received on this connection. */
  aborts = 0;
  private helloSent = false;
  private deviceHelloSeen = false;
  private readonly pending: PendingRequests;
  private nextCallId = 10;
  private listing = false;
  private listening: { mode: string | undefined; pcm: Buffer[] } | undefined;
  private readonly uplinkPcm: Buffer[] = [];
  private decoder: OpusDecoder | undefined;
  private downlinkPackets = 0;

  constructor(
    readonly record: XzConnectionRecord,
    private readonly socket: WebSocket,
    private readonly settings: XzConnSettings,
    private readonly timers: TimerSet,
    private readonly host: XzConnHost,
  ) {
    this.conn = record.conn;
    this.pending = new PendingRequests(record.conn, timers, settings.callTimeoutMs, (r) => {
      // A server that gives up on a call says so, as MCP has it; the agent must send nothing more.
      if (r.method === 'tools/call')
        this.sendJson({ type: 'mcp', payload: cancelledNotification(r.id) });
    });
    socket.on('message', (data, isBinary) => {
      const buf = Buffer.isBuffer(data)
        ? data
        : Array.isArray(data)
          ? Buffer.concat(data)
          : Buffer.from(data);
      if (isBinary) this.onBinary(buf);
      else this.onText(buf.toString('utf8'));
    });
  }

  get closed(): boolean {
    return this.pending.closed;
  }

  get version(): ProtocolVersion {
    return this.record.protocolVersion;
  }

  /** The rate of the reply audio this server sends (its hello says so). */
  get downlinkRate(): OpusRate {
    return this.settings.downlinkRate;
  }

  /** Everything the device uploaded on this connection, decoded to PCM s16le 16 kHz mono. */
  receivedPcm(): Buffer {
    return Buffer.concat(this.uplinkPcm);
  }

  // --- the server's voice ------------------------------------------------------------------------

  /** A JSON message with this connection's session id. */
  sendJson(message: Record<string, unknown>): void {
    this.sendRaw(JSON.stringify({ session_id: this.record.sessionId, ...message }));
  }

  /** A text frame exactly as given (hostile-server tests). */
  sendRaw(text: string): void {
    if (this.socket.readyState === this.socket.OPEN) this.socket.send(text);
  }

  sendBinary(frame: Uint8Array): void {
    if (this.socket.readyState === this.socket.OPEN) this.socket.send(frame, { binary: true });
  }

  stt(text: string): void {
    this.sendJson({ type: 'stt', text });
  }

  llm(emotion: string, text?: string): void {
    this.sendJson({ type: 'llm', emotion, ...(text !== undefined ? { text } : {}) });
  }

  ttsStart(): void {
    this.sendJson({ type: 'tts', state: 'start' });
  }

  sentence(text: string): void {
    this.sendJson({ type: 'tts', state: 'sentence_start', text });
  }

  ttsStop(): void {
    this.sendJson({ type: 'tts', state: 'stop' });
  }

  /** PCM s16le mono at the downlink rate → 60 ms Opus packets, framed for the device's version. */
  audio(pcm: Buffer): void {
    const encoder = new OpusEncoder(this.settings.downlinkRate);
    try {
      for (const packet of [...encoder.encodePcm(pcm), ...encoder.flush()]) {
        const timestampMs = this.downlinkPackets++ * 60;
        this.sendBinary(encodeAudioFrame(this.version, packet, { timestampMs }));
      }
    } finally {
      encoder.close();
    }
  }

  /**
   * A whole spoken reply: mood, tts start, the sentence, its audio (a short beep unless `pcm` is
   * given at the downlink rate; an empty buffer sends none), tts stop.
   */
  say(text: string, options: { emotion?: string; pcm?: Buffer } = {}): void {
    this.llm(options.emotion ?? 'happy');
    this.ttsStart();
    this.sentence(text);
    const pcm = options.pcm ?? sineTone(300, 440, 0.1, this.settings.downlinkRate);
    if (pcm.length) this.audio(pcm);
    this.ttsStop();
  }

  sendSystem(command: string): void {
    this.sendJson({ type: 'system', command });
  }

  sendAlert(message: string, status = 'Warning', emotion = 'sad'): void {
    this.sendJson({ type: 'alert', status, message, emotion });
  }

  sendCustom(payload: unknown): void {
    this.sendJson({ type: 'custom', payload });
  }

  // --- MCP (the server is the client) ------------------------------------------------------------

  /** Call a tool as the AI would; `name` may be the renamed one (mapped back, as servers do). */
  async callTool(
    name: string,
    args: unknown = {},
    options: { id?: number | string } = {},
  ): Promise<XzCallResult> {
    const listedName = this.tools?.find((t) => t.name === name)?.listedName ?? name;
    const id = options.id ?? this.nextCallId++;
    this.host.call(id, listedName, args);
    const reply = await this.request('tools/call', { name: listedName, arguments: args }, id);
    const result = readCallResult(reply);
    if (!reply.error && typeof firstText(reply) !== 'string')
      this.host.violation(`the result of tools/call '${listedName}' has no content[0].text`);
    this.host.result(id, result);
    return result;
  }

  /** List all pages again (the backend does this only on a new connection). */
  async listTools(): Promise<XzSimTool[]> {
    if (this.listing) throw new Error(`connection ${this.conn} is already listing tools`);
    this.listing = true;
    try {
      return await this.walk();
    } finally {
      this.listing = false;
    }
  }

  /** A JSON-RPC notification in the envelope (e.g. a `tools/call` without id, which needs none). */
  notify(method: string, params?: unknown): void {
    this.sendJson({
      type: 'mcp',
      payload: { jsonrpc: '2.0', method, ...(params !== undefined ? { params } : {}) },
    });
  }

  /** A JSON-RPC request in the envelope; resolves with the device's reply payload. */
  request(method: string, params: unknown, id: number | string): Promise<Record<string, unknown>> {
    return this.pending.request(method, id, () =>
      this.sendJson({ type: 'mcp', payload: { jsonrpc: '2.0', id, method, params } }),
    );
  }

  close(code = 1000, reason = ''): void {
    if (this.socket.readyState === this.socket.OPEN) this.socket.close(code, reason);
  }

  terminate(): void {
    this.socket.terminate();
  }

  /** The socket closed: whoever waits is told, no timer or codec stays behind. */
  closedNow(): void {
    this.record.open = false;
    this.pending.closeAll();
    this.decoder?.close();
    this.decoder = undefined;
  }

  // --- incoming ----------------------------------------------------------------------------------

  private onText(text: string): void {
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    this.host.record({ kind: 'text', text, json });
    if (!json || typeof json !== 'object' || Array.isArray(json)) {
      this.host.violation(`sent a text frame that is not a JSON object: ${text.slice(0, 80)}`);
      return;
    }
    const m = json as Record<string, unknown>;
    if (m.type === 'hello') return this.onDeviceHello(m);
    if (!this.deviceHelloSeen) this.host.violation(`sent '${String(m.type)}' before its hello`);
    if (this.helloSent) {
      if (m.session_id === undefined)
        this.host.violation(`a '${String(m.type)}' message without session_id after the hello`);
      else if (m.session_id !== this.record.sessionId)
        this.host.violation(
          `a '${String(m.type)}' message with session_id ${JSON.stringify(m.session_id)}, not '${this.record.sessionId}'`,
        );
    }
    switch (m.type) {
      case 'mcp':
        return this.onMcp(m.payload);
      case 'listen':
        return this.onListen(m);
      case 'abort':
        this.aborts += 1;
        this.host.abort(typeof m.reason === 'string' ? m.reason : undefined);
        return;
      case 'ping':
        this.sendJson({ type: 'pong' });
        return;
      default:
        this.host.violation(`sent a message of unknown type ${JSON.stringify(m.type)}`);
    }
  }

  private onDeviceHello(m: Record<string, unknown>): void {
    if (this.deviceHelloSeen) this.host.violation('sent a second hello on one connection');
    this.deviceHelloSeen = true;
    this.record.hello = m;
    this.host.hello(m.version);
    const features = m.features as { mcp?: unknown } | undefined;
    const mcp = features?.mcp === true;
    if (!mcp) this.host.violation('the device hello has no features.mcp: true');
    if (m.transport !== 'websocket')
      this.host.violation(`the device hello names transport ${JSON.stringify(m.transport)}`);
    if (m.version !== this.record.protocolVersion)
      this.host.violation(
        `the device hello says version ${JSON.stringify(m.version)} but Protocol-Version is ${this.record.protocolVersion}`,
      );
    const audio = m.audio_params as Record<string, unknown> | undefined;
    if (!audio || audio.format !== 'opus' || audio.sample_rate !== 16_000)
      this.host.violation(
        `the device hello's audio_params are not 16 kHz Opus: ${JSON.stringify(audio)}`,
      );
    if (mcp && this.settings.mcpBeforeHello) this.beginMcp();
    if (!this.settings.sendHello) return;
    const answer = (): void => {
      this.sendServerHello();
      if (mcp && !this.settings.mcpBeforeHello) this.beginMcp();
    };
    if (this.settings.helloDelayMs > 0) this.timers.set(answer, this.settings.helloDelayMs);
    else answer();
  }

  private sendServerHello(): void {
    if (this.closed) return;
    this.helloSent = true;
    this.sendRaw(
      JSON.stringify({
        type: 'hello',
        transport: 'websocket',
        session_id: this.record.sessionId,
        audio_params: {
          format: 'opus',
          sample_rate: this.settings.downlinkRate,
          channels: 1,
          frame_duration: 60,
        },
      }),
    );
  }

  /** The backend's handshake: initialize (id 1) → notifications/initialized → every page. */
  private beginMcp(): void {
    void (async () => {
      const params = {
        protocolVersion: '2024-11-05',
        capabilities: {},
        clientInfo: { name: 'xiaozhi-sim', version: '1.0.0' },
        ...this.settings.initializeParams,
      };
      const init = await this.request('initialize', params, INITIALIZE_ID);
      const result = init.result as Record<string, unknown> | undefined;
      if (!result) throw new Error(`initialize failed: ${JSON.stringify(init.error)}`);
      this.initializeResult = result;
      this.notify('notifications/initialized');
      await this.listTools();
    })().catch((err: Error) => {
      if (!this.closed) this.host.error(err.message);
    });
  }

  private walk(): Promise<XzSimTool[]> {
    return walkTools({
      page: async (params) => {
        const reply = await this.request('tools/list', params, LIST_ID);
        const bytes = Buffer.byteLength(JSON.stringify(reply));
        if (bytes > PAGE_BYTES)
          this.host.violation(`a tools/list page of ${bytes} bytes (limit ${PAGE_BYTES})`);
        return reply;
      },
      withUserTools: this.settings.withUserTools,
      renameDots: this.settings.renameDots,
      violation: (message) => this.host.violation(message),
      listed: (tools) => {
        this.tools = tools;
        this.host.listed(tools);
      },
    });
  }

  private onMcp(payload: unknown): void {
    if (!payload || typeof payload !== 'object' || Array.isArray(payload)) {
      this.host.violation(`an mcp message without an object payload`);
      return;
    }
    const m = payload as Record<string, unknown>;
    if (m.jsonrpc !== '2.0') this.host.violation('an MCP payload without jsonrpc "2.0"');
    if (typeof m.method === 'string') {
      if (m.method === 'notifications/tools/list_changed') this.host.listChanged();
      else if (m.id !== undefined)
        // The device is the server here; the backend answers nothing it asks.
        this.sendJson({
          type: 'mcp',
          payload: {
            jsonrpc: '2.0',
            id: m.id,
            error: { code: -32601, message: `method '${m.method}' not found` },
          },
        });
      return;
    }
    if (!('result' in m) && !('error' in m)) {
      this.host.violation('an MCP payload with neither method nor result');
      return;
    }
    const id = m.id;
    const pending = id === undefined || id === null ? undefined : this.pending.get(String(id));
    if (!pending) {
      this.host.violation(`a reply for id ${JSON.stringify(id)}, which was never asked`);
      return;
    }
    if (typeof id !== typeof pending.id) {
      // Liberal like the real servers, but noted: the firmware and backends compare numbers.
      this.host.violation(
        `the reply to '${pending.method}' has id ${JSON.stringify(id)} (${typeof id}); it was asked with ${JSON.stringify(pending.id)} (${typeof pending.id})`,
      );
    }
    this.pending.settle(pending, m);
  }

  private onListen(m: Record<string, unknown>): void {
    const state = typeof m.state === 'string' ? m.state : '';
    const mode = typeof m.mode === 'string' ? m.mode : undefined;
    const text = typeof m.text === 'string' ? m.text : undefined;
    this.host.listen({
      conn: this.conn,
      state,
      ...(mode !== undefined ? { mode } : {}),
      ...(text !== undefined ? { text } : {}),
    });
    switch (state) {
      case 'start':
        if (mode === undefined) this.host.violation("'listen start' without a mode");
        this.listening = { mode, pcm: [] };
        return;
      case 'stop': {
        const heard = this.listening;
        this.listening = undefined;
        if (!heard) {
          this.host.violation("'listen stop' without a 'listen start'");
          return;
        }
        this.host.turn({
          conn: this.conn,
          text: '',
          voice: true,
          pcm: Buffer.concat(heard.pcm),
          ...(heard.mode !== undefined ? { mode: heard.mode } : {}),
        });
        return;
      }
      case 'detect':
        if (text === undefined || !text.trim()) return; // a bare wake-word report
        this.host.turn({ conn: this.conn, text, voice: false, pcm: Buffer.alloc(0) });
        return;
      default:
        this.host.violation(`'listen' with unknown state ${JSON.stringify(m.state)}`);
    }
  }

  private onBinary(frame: Buffer): void {
    this.host.record({ kind: 'binary', bytes: frame });
    if (!this.deviceHelloSeen) this.host.violation('sent audio before its hello');
    let payload: Buffer;
    try {
      payload = decodeAudioFrame(this.version, frame).payload;
    } catch (err) {
      if (!(err instanceof BinaryFrameError)) throw err;
      this.host.violation(`an audio frame that does not unwrap: ${err.message}`);
      return;
    }
    let pcm: Buffer;
    try {
      this.decoder ??= new OpusDecoder(16_000);
      pcm = this.decoder.decodePacket(payload);
    } catch (err) {
      this.host.violation(`an Opus packet that does not decode (${(err as Error).message})`);
      return;
    }
    if (this.settings.keepPcm) this.uplinkPcm.push(pcm);
    this.listening?.pcm.push(pcm);
  }
}

/** What the real servers make of a call's reply: `content[0].text`, or the error message. */
function readCallResult(reply: Record<string, unknown>): XzCallResult {
  const error = reply.error as { code?: unknown; message?: unknown } | undefined;
  if (error) {
    return {
      text: typeof error.message === 'string' ? error.message : '',
      isError: true,
      ...(typeof error.code === 'number' ? { code: error.code } : {}),
      raw: reply,
    };
  }
  const result = reply.result as { isError?: unknown } | undefined;
  const text = firstText(reply);
  return {
    text: typeof text === 'string' ? text : '',
    isError: result?.isError === true,
    raw: reply,
  };
}
