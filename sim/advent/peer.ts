import type { Socket } from 'node:net';
import type { IdSource } from '../../app/ids.js';
import {
  DEFAULT_MAX_FRAME_BYTES,
  FrameType,
  type KnownFrameType,
  MCP_TASK,
  SYSTEM_TASK,
  encodeFrame,
  taskKey,
} from '../../app/wire/advent/frame.js';
import type { CallResult } from './checks.js';
import { type CallWait, callWaitMs } from '../kit/deadline.js';
import type { TimerSet } from '../kit/timers.js';
import type { ByteOrder } from '../../app/audio/opus.js';
import { pcmChunks } from '../kit/tone.js';
import { opusPayloads } from './voice.js';

export type WriteMode = 'normal' | 'one-byte';

export interface CallOptions {
  callId?: string;
  /** The seed recommends `mcp00001`; any 8-byte id is allowed. */
  taskId?: string;
  timeoutMs?: number;
}

export interface CallSpec extends CallOptions {
  method: string;
  params?: Record<string, unknown>;
}

/** What a peer needs from the simulator around it. */
export interface PeerContext {
  conn: number;
  socket: Socket;
  /** Protocol timers (call timeouts) on the injected clock; cleared when the connection closes. */
  timers: TimerSet;
  /** Mechanical timers (the grace before destroying a socket we ended) on real time. */
  realTimers: TimerSet;
  ids: IdSource;
  nextCallId(): string;
  /** How long a call waits for its result (read at each call). */
  callTimeoutMs: CallWait;
  splitUtf8: boolean;
  writeMode: WriteMode;
  garbageBetweenFrames: boolean;
  /** Byte order of Opus packet lengths in reply audio (AUTH does not say; a sim option). */
  opusLengthOrder: ByteOrder;
  onCall(call: { conn: number; callId: string; method: string; params: unknown }): void;
}

interface Pending {
  method: string;
  resolve(result: CallResult): void;
  reject(err: Error): void;
  timer: ReturnType<TimerSet['set']>;
}

type Outgoing =
  | { kind: 'bytes'; bytes: Buffer; offset: number; done(): void }
  | { kind: 'end'; done(): void }
  | { kind: 'drop'; done(): void };

/** Settling a result: a fresh answer, a repeat, one for a call we gave up on, or one we never made. */
export type Settled = 'ok' | 'duplicate' | 'late' | 'unknown';

/** How long an ended socket may linger half-closed before the sim destroys it. */
const END_GRACE_MS = 1000;

/**
 * The server's side of one connection, as a test scripts it: replies, MCP calls, and hostile
 * behaviour. Every write goes through one queue, so frames stay in order whatever the write mode,
 * and a `drop()` or hang-up happens after what was queued before it.
 */
export class SimPeer {
  readonly conn: number;
  /** Every outgoing byte in its own write, with a turn of the event loop between writes. */
  writeMode: WriteMode;
  /** A few random bytes (never `#`) before each frame: the client must resynchronise. */
  garbageBetweenFrames: boolean;
  /** Cut TEXT pieces inside a multi-byte character, so the client must decode across frames. */
  splitUtf8: boolean;
  /** The services of the latest `register` on this connection. */
  services: Record<string, unknown> | undefined;
  /** The parameters of this connection's AUTH. */
  authParams: Record<string, string> | undefined;

  private readonly ctx: PeerContext;
  private readonly seqs = new Map<string, number>();
  private readonly pending = new Map<string, Pending>();
  private readonly settled = new Set<string>();
  private readonly gaveUp = new Set<string>();
  private readonly outbox: Outgoing[] = [];
  private pumping = false;
  private immediate: NodeJS.Immediate | undefined;
  private isClosed = false;

  constructor(ctx: PeerContext) {
    this.ctx = ctx;
    this.conn = ctx.conn;
    this.writeMode = ctx.writeMode;
    this.garbageBetweenFrames = ctx.garbageBetweenFrames;
    this.splitUtf8 = ctx.splitUtf8;
  }

  get closed(): boolean {
    return this.isClosed;
  }

  // ------------------------------------------------------------------------------------------
  // Replies

  /** TEXT frames, one per piece (more with `splitUtf8`), seq continuing on the task from 0. */
  text(taskId: string, pieces: readonly string[]): Promise<void> {
    const sends: Promise<void>[] = [];
    for (const piece of pieces) {
      for (const bytes of this.cutText(piece)) {
        sends.push(this.frame(FrameType.TEXT, taskId, bytes));
      }
    }
    return settleAll(sends);
  }

  /** PCM as AUDIO_FRAMEs, each chunk nudged so no frame marker hides inside the samples. */
  audio(taskId: string, pcm: Buffer, chunkBytes = 640): Promise<void> {
    return settleAll(pcmChunks(pcm, chunkBytes).map((c) => this.frame(FrameType.AUDIO, taskId, c)));
  }

  /**
   * Reply speech in the format this connection's AUTH asked for: PCM s16le 16 kHz, or with
   * `format:opus` 60 ms Opus packets behind 2-byte lengths, three packets per AUDIO_FRAME.
   */
  speech(taskId: string, pcm: Buffer): Promise<void> {
    if (this.authParams?.format !== 'opus') return this.audio(taskId, pcm);
    const payloads = opusPayloads(pcm, this.ctx.opusLengthOrder);
    return settleAll(payloads.map((p) => this.frame(FrameType.AUDIO, taskId, p)));
  }

  /** Emoji mode: type 9 `{"emoji": key}` on the turn's task, seq 0000 (protocol §6.5). */
  emoji(taskId: string, key: string): Promise<void> {
    return this.frame(FrameType.EMOJI, taskId, JSON.stringify({ emoji: key }), 0);
  }

  /** END_FRAME: this task's reply is complete. */
  end(taskId: string): Promise<void> {
    return this.frame(FrameType.END, taskId, '');
  }

  /** A STATUS control string on the system task. */
  status(text: string): Promise<void> {
    return this.frame(FrameType.STATUS, SYSTEM_TASK, text, 0);
  }

  /** LISTEN `{taskid, type: "listen", state, [mode]}` (VAD, protocol §6.3). */
  listen(taskId: string, state: string, mode?: string): Promise<void> {
    const body = { taskid: taskId.trim(), type: 'listen', state, ...(mode ? { mode } : {}) };
    return this.frame(FrameType.LISTEN, taskId, JSON.stringify(body), 0);
  }

  /** Any well-formed frame; seq defaults to the task's next one. */
  frame(
    type: KnownFrameType,
    taskId: string,
    payload: string | Uint8Array,
    seq = this.nextSeq(taskId),
  ): Promise<void> {
    return this.send(encodeFrame(type, taskId, seq, payload));
  }

  // ------------------------------------------------------------------------------------------
  // MCP calls

  /** Send an MCP `call` and resolve with the client's matching `result`. */
  call(
    method: string,
    params: Record<string, unknown> = {},
    options: CallOptions = {},
  ): Promise<CallResult> {
    const callId = options.callId ?? this.ctx.nextCallId();
    const timeoutMs = options.timeoutMs ?? callWaitMs(this.ctx.callTimeoutMs);
    if (this.isClosed) {
      return Promise.reject(
        new Error(`connection ${this.conn} is closed: cannot call ${method} (${callId})`),
      );
    }
    if (this.pending.has(callId)) {
      return Promise.reject(new Error(`MCP call id ${callId} is already waiting for a result`));
    }
    const result = new Promise<CallResult>((resolve, reject) => {
      const timer = this.ctx.timers.set(() => {
        this.pending.delete(callId);
        this.gaveUp.add(callId);
        reject(
          new Error(
            `no result for MCP call ${callId} (${method}) within ${timeoutMs} ms on connection ${this.conn}`,
          ),
        );
      }, timeoutMs);
      this.pending.set(callId, { method, resolve, reject, timer });
    });
    this.ctx.onCall({ conn: this.conn, callId, method, params });
    const body = JSON.stringify({ type: 'call', data: { call_id: callId, method, params } });
    void this.frame(FrameType.MCP, options.taskId ?? MCP_TASK, body, 0);
    return result;
  }

  /** Send every call back to back, then wait for all results (the client must handle overlap). */
  callMany(calls: readonly CallSpec[]): Promise<CallResult[]> {
    return Promise.all(calls.map((c) => this.call(c.method, c.params ?? {}, c)));
  }

  /** Called by the session for each result received. */
  settle(callId: string, result: CallResult): Settled {
    const waiting = this.pending.get(callId);
    if (waiting) {
      this.pending.delete(callId);
      this.settled.add(callId);
      this.ctx.timers.clear(waiting.timer);
      waiting.resolve(result);
      return 'ok';
    }
    if (this.settled.has(callId)) return 'duplicate';
    if (this.gaveUp.delete(callId)) {
      this.settled.add(callId);
      return 'late';
    }
    return 'unknown';
  }

  // ------------------------------------------------------------------------------------------
  // Hostile behaviour

  /** Bytes exactly as given (after anything queued before). */
  sendRaw(bytes: Uint8Array | string): Promise<void> {
    return this.send(typeof bytes === 'string' ? Buffer.from(bytes, 'utf8') : Buffer.from(bytes));
  }

  /** Destroy the socket abruptly (no FIN handshake), after what was queued before. */
  drop(): Promise<void> {
    return this.enqueue('drop');
  }

  /** End the connection politely (FIN), as the server does after a reject, DISCONNECT or idle. */
  hangUp(): Promise<void> {
    return this.enqueue('end');
  }

  /** A well-formed frame of a type the client does not know: it must skip it and carry on. */
  unknownTypeFrame(type = 12, taskId: string = SYSTEM_TASK): Promise<void> {
    const frame = encodeFrame(FrameType.TEXT, taskId, 0, `a frame of type ${type}`);
    frame[7] = type;
    return this.send(frame);
  }

  /** A TEXT frame with a payload of `bytes` bytes: above the client's maximum it must be refused. */
  oversizedFrame(bytes = DEFAULT_MAX_FRAME_BYTES + 1, taskId = 'big00001'): Promise<void> {
    return this.send(encodeFrame(FrameType.TEXT, taskId, 0, Buffer.alloc(bytes, 0x78)));
  }

  /**
   * AUDIO_FRAMEs whose payloads contain `##END` and `##START`, sent raw (not nudged) as a server
   * that does not care would. None holds `##END##START` plus a valid header, which no decoder can
   * tell from a frame boundary. Returns the payloads in order so a test can compare.
   */
  async audioWithMarkers(taskId: string): Promise<Buffer[]> {
    const pcm = (n: number, seed: number) =>
      Buffer.from(Array.from({ length: n }, (_, i) => (i * 37 + seed) & 0x7f));
    const payloads = [
      Buffer.concat([pcm(40, 1), Buffer.from('##END'), pcm(40, 2)]),
      Buffer.concat([pcm(30, 3), Buffer.from('##START'), Buffer.from([0, 1, 2]), pcm(30, 4)]),
      Buffer.concat([pcm(20, 5), Buffer.from('##END##START\x00\x01'), pcm(20, 6)]),
      Buffer.concat([Buffer.from('##START##END'), pcm(24, 7)]),
      Buffer.concat([pcm(32, 8), Buffer.from('##END')]),
    ];
    await settleAll(payloads.map((p) => this.frame(FrameType.AUDIO, taskId, p)));
    return payloads;
  }

  /** Some reply text, then the connection vanishes before END_FRAME. */
  dropMidTurn(
    taskId: string,
    pieces: readonly string[] = ['This reply ', 'stops here'],
  ): Promise<void> {
    void this.text(taskId, pieces);
    return this.drop();
  }

  // ------------------------------------------------------------------------------------------
  // Lifecycle (called by the session)

  /** The socket closed (called by the session): fail pending calls, forget queued writes. */
  onSocketClosed(): void {
    if (this.isClosed) return;
    this.isClosed = true;
    if (this.immediate) clearImmediate(this.immediate);
    this.immediate = undefined;
    for (const item of this.outbox.splice(0)) item.done();
    this.pumping = false;
    for (const [callId, call] of this.pending) {
      this.ctx.timers.clear(call.timer);
      call.reject(
        new Error(
          `connection ${this.conn} closed before the result of MCP call ${callId} (${call.method})`,
        ),
      );
    }
    this.pending.clear();
  }

  // ------------------------------------------------------------------------------------------

  private nextSeq(taskId: string): number {
    const key = taskKey(taskId);
    const seq = this.seqs.get(key) ?? 0;
    this.seqs.set(key, (seq + 1) % 10_000);
    return seq;
  }

  /** A piece as UTF-8 bytes, cut after the first byte of one of its multi-byte characters. */
  private cutText(piece: string): Buffer[] {
    const bytes = Buffer.from(piece, 'utf8');
    if (!this.splitUtf8) return [bytes];
    const starts: number[] = [];
    for (let i = 0; i < bytes.length; i++) if (bytes[i]! >= 0xc0) starts.push(i);
    if (starts.length === 0) return [bytes];
    const cut = starts[Math.floor(this.ctx.ids.random() * starts.length)]! + 1;
    return [bytes.subarray(0, cut), bytes.subarray(cut)];
  }

  private garbage(): Buffer {
    const n = 1 + Math.floor(this.ctx.ids.random() * 16);
    const out = Buffer.alloc(n);
    for (let i = 0; i < n; i++) {
      const b = Math.floor(this.ctx.ids.random() * 256);
      out[i] = b === 0x23 ? 0x24 : b;
    }
    return out;
  }

  private send(frame: Buffer): Promise<void> {
    const bytes = this.garbageBetweenFrames ? Buffer.concat([this.garbage(), frame]) : frame;
    return new Promise((done) => {
      this.outbox.push({ kind: 'bytes', bytes, offset: 0, done });
      this.pump();
    });
  }

  private enqueue(kind: 'end' | 'drop'): Promise<void> {
    return new Promise((done) => {
      this.outbox.push({ kind, done });
      this.pump();
    });
  }

  /** Drain the outbox: whole buffers at once, or one byte per event-loop turn in one-byte mode. */
  private pump(): void {
    if (this.pumping) return;
    this.pumping = true;
    const socket = this.ctx.socket;
    const step = (): void => {
      this.immediate = undefined;
      for (;;) {
        const item = this.outbox[0];
        if (!item) {
          this.pumping = false;
          return;
        }
        if (this.isClosed || socket.destroyed) {
          this.outbox.shift();
          item.done();
          continue;
        }
        if (item.kind === 'drop') {
          this.outbox.shift();
          socket.destroy();
          item.done();
          continue;
        }
        if (item.kind === 'end') {
          this.outbox.shift();
          socket.end();
          this.ctx.realTimers.set(() => socket.destroy(), END_GRACE_MS);
          item.done();
          continue;
        }
        if (this.writeMode === 'normal' || item.bytes.length === 0) {
          this.outbox.shift();
          if (socket.writable)
            socket.write(item.offset ? item.bytes.subarray(item.offset) : item.bytes);
          item.done();
          continue;
        }
        if (socket.writable) socket.write(item.bytes.subarray(item.offset, item.offset + 1));
        item.offset += 1;
        if (item.offset >= item.bytes.length) {
          this.outbox.shift();
          item.done();
        }
        this.immediate = setImmediate(step);
        return;
      }
    };
    step();
  }
}

function settleAll(sends: Promise<void>[]): Promise<void> {
  return Promise.all(sends).then(() => undefined);
}
