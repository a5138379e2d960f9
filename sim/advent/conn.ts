import type { Socket } from 'node:net';
import type { ByteOrder } from '../../app/audio/opus.js';
import type { Clock } from '../../app/clock.js';
import {
  type DecodeIssue,
  FRAME_TYPE_NAMES,
  type Frame,
  FrameDecoder,
  FrameType,
  SYSTEM_TASK,
  taskKey,
} from '../../app/wire/advent/frame.js';
import {
  type AuthPayload,
  BadSeqScanner,
  checkListen,
  checkRegister,
  checkResult,
  parseAuth,
  parseMcp,
} from './checks.js';
import type { SimPeer } from './peer.js';
import type { AuthDecision, ReceivedFrame, SimEvents, Turn } from './records.js';
import type { TimerSet } from '../kit/timers.js';
import { VoiceInput } from './voice.js';

export interface SessionTimings {
  authTimeoutMs: number;
  idleTimeoutMs: number;
  disconnectCloseMs: number;
  /** Idle moment after which a held binary frame is delivered (FrameDecoder.flush). */
  flushMs: number;
}

/** What a session reports to the simulator around it. */
export interface SessionHost {
  clock: Clock;
  timings: SessionTimings;
  maxFrameBytes: number | undefined;
  voice: { opusLengthOrder: ByteOrder; vadStopAfterMs: number; vadQuietMs: number };
  welcome: string | undefined;
  decideAuth(token: string, params: Record<string, string>): AuthDecision;
  record(frame: ReceivedFrame): void;
  violation(conn: number, message: string): void;
  registered(conn: number, services: Record<string, unknown>): void;
  /** A finished turn; `answer` is false when this connection gets no replies (auth 'ignore'). */
  turn(turn: Turn, peer: SimPeer, answer: boolean): void;
  emit<K extends keyof SimEvents>(event: K, payload: SimEvents[K]): void;
}

type Phase = 'auth' | 'open' | 'mute' | 'refused';

interface InputTurn {
  text: Buffer[];
  voice: VoiceInput;
  /** Any AUDIO_FRAME at all (a VoiceInput is emptied per hands-free segment). */
  hadAudio: boolean;
  nextSeq: number;
  /** Hands-free: the simulated VAD, not END_FRAME, ends the input. */
  vad?: 'vad' | 'auto';
  /** Hands-free: fires when the client stops sending audio for a while (the user went quiet). */
  quiet?: ReturnType<TimerSet['set']>;
}

/** STATUS the server sends when LISTEN start arrives (protocol §6.3: "listening started"). */
export const LISTENING_STATUS = '开始监听';

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });
const name = (type: number): string => FRAME_TYPE_NAMES[type] ?? `type ${type}`;
const show = (taskId: string): string => `'${taskId}'`;

/**
 * The server's side of one TCP connection: decodes what the client sends, records it, holds the
 * client to the protocol and reacts as the real server would — auth, PONG, the DISCONNECT
 * handshake, idle drop, turns, MCP results.
 *
 * Violations (the client is "strict out", so each is a client bug): bytes outside frames, unknown
 * types, oversized or truncated frames, a seq that is not 4 digits; AUTH not first, late, twice,
 * off task 00000000/0000 or malformed; anything after DISCONNECT; STATUS off the system task or
 * without `##`; MCP that is not JSON `{type, data}`, a bad register, a bad/duplicate/unknown
 * result, a message type the client never sends; LISTEN without its fields; EMOJI upstream; turn
 * input on the system task or a finished task, seq gaps within a turn, an empty turn, TEXT that
 * is not UTF-8.
 */
export class Session {
  auth: AuthPayload | undefined;
  private phase: Phase = 'auth';
  private readonly connectedAt: number;
  private readonly decoder: FrameDecoder;
  private readonly badSeq = new BadSeqScanner();
  private readonly inputs = new Map<string, InputTurn>();
  private readonly ended = new Set<string>();
  /** Hands-free tasks the VAD stopped: late audio on them is expected and ignored. */
  private readonly vadStopped = new Set<string>();
  private authLate = false;
  /** Bytes outside any frame since the last frame, reported as one violation. */
  private garbage = 0;
  private disconnecting = false;
  private idleTimer: ReturnType<TimerSet['set']> | undefined;
  private flushTimer: ReturnType<TimerSet['set']> | undefined;

  constructor(
    readonly conn: number,
    readonly socket: Socket,
    readonly peer: SimPeer,
    /** Protocol timers on the injected clock. */
    private readonly timers: TimerSet,
    /** Mechanical timers (decoder flush) on real time. */
    private readonly realTimers: TimerSet,
    private readonly host: SessionHost,
  ) {
    this.connectedAt = host.clock.now();
    this.decoder = new FrameDecoder({
      maxFrameBytes: host.maxFrameBytes,
      onIssue: (issue) => {
        // Garbage comes in as many reports as the stream has chunks: one violation per run of it.
        if (issue.kind === 'garbage') this.garbage += issue.bytes;
        else this.violation(describeIssue(issue));
      },
    });
    timers.set(() => {
      if (this.auth) return;
      this.authLate = true;
      this.violation(`no AUTH within ${host.timings.authTimeoutMs} ms of connecting`);
    }, host.timings.authTimeoutMs);
    this.armIdle();
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.on('end', () => {
      this.handleAll(this.decoder.finish());
      this.reportGarbage();
    });
  }

  /** The socket closed, whoever closed it. */
  closed(): void {
    this.reportGarbage();
    this.timers.clearAll();
    this.realTimers.clearAll();
    this.decoder.reset(); // closed sessions stay listed: do not keep their buffers
    for (const input of this.inputs.values()) input.voice.close();
    this.inputs.clear();
    this.peer.onSocketClosed();
  }

  private onData(chunk: Buffer): void {
    this.armIdle();
    for (const problem of this.badSeq.push(chunk)) this.violation(problem);
    this.handleAll(this.decoder.push(chunk));
    this.realTimers.clear(this.flushTimer);
    this.flushTimer = undefined;
    if (this.decoder.hasTentative) {
      this.flushTimer = this.realTimers.set(() => {
        this.flushTimer = undefined;
        this.handleAll(this.decoder.flush());
      }, this.host.timings.flushMs);
    }
  }

  private armIdle(): void {
    this.timers.clear(this.idleTimer);
    const ms = this.host.timings.idleTimeoutMs;
    this.idleTimer = this.timers.set(() => {
      this.host.emit('idle', { conn: this.conn, ms });
      void this.peer.hangUp();
    }, ms);
  }

  private violation(message: string): void {
    this.host.violation(this.conn, message);
  }

  private handleAll(frames: Frame[]): void {
    for (const frame of frames) {
      this.reportGarbage();
      this.handle(frame);
    }
  }

  private reportGarbage(): void {
    if (this.garbage === 0) return;
    this.violation(`${this.garbage} bytes outside any frame`);
    this.garbage = 0;
  }

  private handle(frame: Frame): void {
    const isAudio = frame.type === FrameType.AUDIO;
    const text = isAudio ? undefined : frame.payload.toString('utf8');
    let json: unknown;
    if (
      text !== undefined &&
      (frame.type === FrameType.MCP ||
        frame.type === FrameType.LISTEN ||
        frame.type === FrameType.EMOJI)
    ) {
      try {
        json = JSON.parse(text);
      } catch {
        // Reported by the type's own check below.
      }
    }
    // Copied: the decoder may hand out views into a socket chunk, and tests keep these for long.
    const payload = Buffer.from(frame.payload);
    this.host.record({
      conn: this.conn,
      type: frame.type,
      taskId: frame.taskId,
      seq: frame.seq,
      payload,
      ...(text !== undefined ? { text } : {}),
      ...(json !== undefined ? { json } : {}),
      at: this.host.clock.now(),
    });

    if (this.disconnecting) {
      this.violation(`${name(frame.type)} on task ${show(frame.taskId)} after DISCONNECT`);
      return;
    }
    if (frame.type === FrameType.AUTH) return this.onAuth(frame, text ?? '');
    if (!this.auth) {
      this.violation(`${name(frame.type)} before AUTH (AUTH must be the first frame)`);
      return;
    }
    switch (frame.type) {
      case FrameType.STATUS:
        return this.onStatus(frame, text ?? '');
      case FrameType.MCP:
        return this.onMcp(text ?? '');
      case FrameType.TEXT:
      case FrameType.AUDIO:
      case FrameType.END:
        return this.onInput(frame, payload);
      case FrameType.LISTEN: {
        const problems = checkListen(json);
        for (const problem of problems) this.violation(problem);
        if (problems.length === 0 && (json as { state: string }).state === 'start')
          this.onListenStart(frame);
        return;
      }
      case FrameType.EMOJI:
        this.violation('EMOJI is sent by the server, never by the client');
        return;
      default:
        // SPEAK and the rest are recorded only.
        return;
    }
  }

  private onAuth(frame: Frame, text: string): void {
    if (this.auth) {
      this.violation('a second AUTH on the same connection');
      return;
    }
    if (taskKey(frame.taskId) !== SYSTEM_TASK || frame.seq !== 0) {
      this.violation(
        `AUTH on task ${show(frame.taskId)} seq ${frame.seq}; it must be task 00000000 seq 0000`,
      );
    }
    const after = this.host.clock.now() - this.connectedAt;
    if (after > this.host.timings.authTimeoutMs && !this.authLate) {
      this.violation(
        `AUTH came ${after} ms after connecting (limit ${this.host.timings.authTimeoutMs} ms)`,
      );
    }
    const { auth, problems } = parseAuth(text);
    for (const problem of problems) this.violation(problem);
    this.auth = auth;
    this.peer.authParams = auth.params;

    let decision: AuthDecision;
    try {
      decision = this.host.decideAuth(auth.token, auth.params);
    } catch (err) {
      this.host.emit('error', { conn: this.conn, error: asError(err) });
      decision = { reject: '##ERROR:auth check failed' };
    }
    this.host.emit('auth', { conn: this.conn, token: auth.token, params: auth.params, decision });
    if (decision === 'accept') {
      this.phase = 'open';
      if (this.host.welcome !== undefined) void this.peer.status(this.host.welcome);
    } else if (decision === 'ignore') {
      this.phase = 'mute';
    } else if (decision === 'silent-close') {
      this.phase = 'refused';
      void this.peer.hangUp();
    } else {
      this.phase = 'refused';
      void this.peer.status(decision.reject);
      void this.peer.hangUp();
    }
  }

  private onStatus(frame: Frame, text: string): void {
    if (taskKey(frame.taskId) !== SYSTEM_TASK || frame.seq !== 0) {
      this.violation(
        `STATUS on task ${show(frame.taskId)} seq ${frame.seq}; it must be task 00000000 seq 0000`,
      );
    }
    if (!text.startsWith('##'))
      this.violation(`STATUS ${JSON.stringify(text)} does not start with ##`);
    this.host.emit('status', { conn: this.conn, text });
    if (text === '##DISCONNECT') this.disconnecting = true;
    if (this.phase !== 'open') return;
    if (text === '##PING') {
      void this.peer.status('##INFO:PONG');
    } else if (text === '##DISCONNECT') {
      void this.peer.status('##INFO:DISCONNECT 3 seconds');
      this.timers.set(() => void this.peer.hangUp(), this.host.timings.disconnectCloseMs);
    }
  }

  private onMcp(text: string): void {
    const { message, problems } = parseMcp(text);
    for (const problem of problems) this.violation(problem);
    if (!message || this.phase === 'refused') return;
    if (message.type === 'register') {
      for (const problem of checkRegister(message.data)) this.violation(problem);
      const services = (message.data as { services?: unknown } | null)?.services;
      if (typeof services === 'object' && services !== null && !Array.isArray(services)) {
        const map = services as Record<string, unknown>;
        this.peer.services = map;
        this.host.registered(this.conn, map);
        this.host.emit('register', { conn: this.conn, services: Object.keys(map) });
      }
    } else if (message.type === 'result') {
      const checked = checkResult(message.data);
      for (const problem of checked.problems) this.violation(problem);
      if (checked.callId === undefined || !checked.result) return;
      const settled = this.peer.settle(checked.callId, checked.result);
      if (settled === 'duplicate') this.violation(`a second result for call_id ${checked.callId}`);
      if (settled === 'unknown') this.violation(`a result for unknown call_id ${checked.callId}`);
      this.host.emit('result', { conn: this.conn, callId: checked.callId, result: checked.result });
    } else {
      this.violation(
        `unexpected MCP message '${message.type}' from the client (it sends register and result)`,
      );
    }
  }

  /** `mode:vad` (§6.3): LISTEN start opens a hands-free turn on its task. */
  private onListenStart(frame: Frame): void {
    const key = taskKey(frame.taskId);
    if (key === SYSTEM_TASK || this.ended.has(key) || this.inputs.has(key)) {
      this.violation(
        `LISTEN start on task ${show(frame.taskId)}: a hands-free turn needs a fresh task id`,
      );
      return;
    }
    if (this.auth?.params.mode !== 'vad')
      this.violation(`LISTEN start on task ${show(frame.taskId)} without mode:vad in AUTH`);
    this.inputs.set(key, this.newInput('vad'));
    if (this.phase === 'open')
      void this.peer.frame(FrameType.STATUS, frame.taskId, LISTENING_STATUS);
  }

  private newInput(vad?: 'vad' | 'auto'): InputTurn {
    const voice = new VoiceInput(
      this.auth?.params.input_audio_format,
      this.host.voice.opusLengthOrder,
    );
    return { text: [], voice, hadAudio: false, nextSeq: 0, ...(vad ? { vad } : {}) };
  }

  /**
   * The simulated VAD: once enough audio has come, LISTEN detecting then stop, and the turn is
   * answered. `auto` keeps the task open for the next utterance; `vad` closes it.
   */
  private vadCheck(key: string, taskId: string, input: InputTurn, quiet = false): void {
    if (!input.vad) return;
    this.timers.clear(input.quiet);
    input.quiet = undefined;
    if (!quiet && input.voice.ms < this.host.voice.vadStopAfterMs) {
      input.quiet = this.timers.set(
        () => this.vadCheck(key, taskId, input, true),
        this.host.voice.vadQuietMs,
      );
      return;
    }
    if (input.voice.ms === 0) return;
    const answer = this.phase === 'open';
    if (answer) {
      void this.peer.listen(taskId, 'detecting', input.vad);
      void this.peer.listen(taskId, 'stop', input.vad);
    }
    const { pcm, raw } = input.voice.take();
    if (input.vad === 'vad') {
      input.voice.close();
      this.inputs.delete(key);
      this.vadStopped.add(key);
    }
    const turn: Turn = {
      conn: this.conn,
      taskId,
      text: '',
      audio: pcm,
      ...(input.voice.isOpus ? { opus: raw } : {}),
      vad: input.vad,
    };
    this.host.turn(turn, this.peer, answer);
  }

  /** TEXT and AUDIO_FRAMEs gather on their task until END_FRAME completes the turn. */
  private onInput(frame: Frame, payload: Buffer): void {
    const key = taskKey(frame.taskId);
    const what = `${name(frame.type)} on task ${show(frame.taskId)}`;
    if (key === SYSTEM_TASK) {
      this.violation(`${what}: turns need their own task id`);
      return;
    }
    if (this.ended.has(key)) {
      this.violation(`${what} after its END_FRAME (a turn needs a fresh task id)`);
      return;
    }
    if (this.vadStopped.has(key)) {
      // The client learns of LISTEN stop a round trip late: audio in flight is fine, the rest not.
      if (frame.type !== FrameType.AUDIO) this.violation(`${what} after LISTEN stop`);
      return;
    }
    let input = this.inputs.get(key);
    if (!input) {
      // `mode:auto` has no LISTEN start: the first audio opens the hands-free stream.
      const auto = this.auth?.params.mode === 'auto' && frame.type === FrameType.AUDIO;
      input = this.newInput(auto ? 'auto' : undefined);
      this.inputs.set(key, input);
    }
    if (frame.seq !== input.nextSeq) {
      this.violation(`${what} has seq ${frame.seq}, expected ${input.nextSeq}`);
    }
    input.nextSeq = (frame.seq + 1) % 10_000;
    if (frame.type === FrameType.TEXT) input.text.push(payload);
    if (frame.type === FrameType.AUDIO) {
      input.voice.push(payload);
      input.hadAudio = true;
      this.vadCheck(key, frame.taskId, input);
    }
    if (frame.type !== FrameType.END) return;

    this.inputs.delete(key);
    this.ended.add(key);
    this.timers.clear(input.quiet);
    input.voice.close();
    if (input.text.length === 0 && !input.hadAudio) {
      this.violation(
        `END_FRAME on task ${show(frame.taskId)} with no TEXT or AUDIO_FRAME before it`,
      );
      return;
    }
    const textBytes = Buffer.concat(input.text);
    let text: string;
    try {
      text = strictUtf8.decode(textBytes);
    } catch {
      this.violation(`TEXT on task ${show(frame.taskId)} is not valid UTF-8`);
      text = textBytes.toString('utf8');
    }
    const { pcm, raw } = input.voice.take();
    const turn: Turn = {
      conn: this.conn,
      taskId: frame.taskId,
      text,
      audio: pcm,
      ...(input.voice.isOpus ? { opus: raw } : {}),
    };
    this.host.turn(turn, this.peer, this.phase === 'open');
  }
}

function describeIssue(issue: Exclude<DecodeIssue, { kind: 'garbage' }>): string {
  switch (issue.kind) {
    case 'unknown_type':
      return `a frame of unknown type ${issue.type} on task ${show(issue.taskId)}`;
    case 'frame_too_large':
      return `a ${name(issue.type)} frame on task ${show(issue.taskId)} above ${issue.limit} bytes`;
    case 'truncated':
      return `the connection ended inside a frame (${issue.bytes} bytes)`;
  }
}

export function asError(err: unknown): Error {
  return err instanceof Error ? err : new Error(String(err));
}
