/**
 * An Advent session: the connection, the turns and MCP, wired to the one gate.
 *
 * - `register` is sent right after AUTH on every (re)connect, and again whenever the enabled set
 *   changes (`reregister()`), always carrying the whole set.
 * - Each MCP `call` goes to the gate; calls run concurrently; exactly one `result` per call_id is
 *   sent on the call's own task id. A repeated call_id is never run twice: while it runs the
 *   repeat is ignored, afterwards the same result is sent again.
 * - A result finished after the link dropped is not sent on the next link (that server-side call
 *   is gone); it is still in the audit log.
 */
import { type Clock, systemClock } from '../../clock.js';
import type { ConnectionState } from '../../contract/connection.js';
import type { DispatchResult } from '../../dispatch.js';
import { type IdSource, cryptoIds } from '../../ids.js';
import { AdventConnection, type AdventConnectionOptions } from './connection.js';
import { type Frame, FrameType, MCP_TASK, taskKey } from './frame.js';
import {
  type RegisterService,
  registerServices,
  badCallResult,
  parseMcp,
  registerMessage,
  resultMessage,
} from './messages.js';
import { Turns, type TurnEvents, preview } from './turns.js';
import { ReplyAudio, type VoiceOptions, VoiceUpload } from './voice.js';
import {
  type ChunkResult,
  type Gate,
  type LiveSession,
  type SendResult,
  type SessionEvents,
  type ToolEntry,
  notReady,
} from '../session.js';
import { SessionBase } from '../kit/session-base.js';
import { endVoiceUpload, sendVoiceChunk } from '../kit/voice-upload.js';

export interface AdventSessionOptions extends Omit<AdventConnectionOptions, 'clock' | 'ids'> {
  /** The profile id: identifies the connection in calls, prompts and the audit log. */
  id: string;
  /** The connection's name, shown to the user and written in the audit log. */
  name: string;
  gate: Gate;
  /** The enabled services, read at each (re)register (user-only ones are left out here). */
  tools: () => readonly ToolEntry[];
  clock?: Clock;
  ids?: IdSource;
  /**
   * Voice settings the AUTH parameters do not carry (Opus byte order, downlink rate). Formats
   * and mode default to `authParams`, which is what the server was told.
   */
  voice?: VoiceOptions;
}

export type { ChunkResult, Gate, SendResult, SessionEvents };

/** How many answered call ids are remembered to answer repeats without running them again. */
const ANSWERED_MEMORY = 256;

export class AdventSession extends SessionBase implements LiveSession {
  readonly kind = 'advent' as const;
  readonly capabilities = { chat: true, voice: true, speak: true };
  readonly connection: AdventConnection;
  private readonly turns: Turns;
  /** Bumped on every ready: results from an older link are not sent on a newer one. */
  private generation = 0;
  private readonly running = new Set<string>();
  private readonly answered = new Map<string, string>();
  private readonly voice: Required<VoiceOptions>;
  /** The current voice upload, kept after it closes so a late chunk gets a clear refusal. */
  private upload: VoiceUpload | undefined;
  /** Opus reply decoders per task, freed when the reply ends or is dropped. */
  private readonly replyDecoders = new Map<string, ReplyAudio>();

  constructor(private readonly options: AdventSessionOptions) {
    super(options);
    const ids = options.ids ?? cryptoIds;
    this.connection = new AdventConnection({
      ...options,
      clock: options.clock ?? systemClock,
      ids,
    });
    const auth = options.authParams ?? {};
    this.voice = {
      inputFormat: options.voice?.inputFormat ?? auth.input_audio_format ?? 'pcm',
      outputFormat: options.voice?.outputFormat ?? auth.format ?? 'pcm',
      mode: options.voice?.mode ?? auth.mode ?? 'manual',
      opusLengthOrder: options.voice?.opusLengthOrder ?? 'be',
      opusDownlinkRate: options.voice?.opusDownlinkRate ?? 16_000,
    };
    this.turns = new Turns(ids, this.voice.outputFormat === 'opus');

    const c = this.connection.events;
    c.on('state', (s) => {
      // Frames of a lost link never arrive: close its replies instead of leaving them open.
      if (s.status === 'reconnecting' || s.status === 'offline') {
        this.turns.interruptAll();
        // The server forgot the half-sent turn with the link; a new link needs a new turn.
        this.closeUpload('lost');
      }
      this.events.emit('state', s);
      if (s.status === 'authenticating') this.register();
    });
    c.on('ready', () => {
      this.generation += 1;
      this.running.clear();
      this.answered.clear();
    });
    c.on('frame', (f) => this.onFrame(f));
    c.on('status', (s) => this.events.emit('status', s));
    c.on('issue', ({ message }) => this.events.emit('log', { level: 'warn', message }));
    c.on('tokenExpiring', (e) => this.events.emit('tokenExpiring', e));

    const forward = <K extends keyof TurnEvents & keyof SessionEvents>(name: K) =>
      this.turns.events.on(name, (payload) => this.events.emit(name, payload as SessionEvents[K]));
    for (const name of ['replyDelta', 'replyDone', 'replyInterrupted', 'mood'] as const)
      forward(name);
    this.turns.events.on('audio', (a) => this.onReplyAudio(a));
    this.turns.events.on('listen', ({ taskId, message }) => this.onListen(taskId, message));
    const freeDecoder = ({ taskId }: { taskId: string }) => {
      this.replyDecoders.get(taskId)?.close();
      this.replyDecoders.delete(taskId);
    };
    this.turns.events.on('replyDone', freeDecoder);
    this.turns.events.on('replyInterrupted', freeDecoder);
    this.turns.events.on('odd', ({ message }) =>
      this.events.emit('log', { level: 'warn', message }),
    );
  }

  get state(): ConnectionState {
    return this.connection.state;
  }

  start(): void {
    this.connection.start();
  }

  async stop(): Promise<void> {
    this.closeUpload('cancelled');
    this.turns.supersede();
    await this.connection.stop();
    for (const d of this.replyDecoders.values()) d.close();
    this.replyDecoders.clear();
  }

  /** A text turn: TEXT (seq 0000) then END_FRAME (seq 0001) under a fresh task id. */
  sendText(text: string): SendResult {
    const body = sanitizeText(text);
    if (!body.trim()) return { ok: false, message: 'nothing to send' };
    if (!this.connection.isReady) return { ok: false, message: notReady(this.connection.state) };
    const taskId = this.turns.begin();
    this.connection.send(FrameType.TEXT, taskId, 0, body);
    this.connection.send(FrameType.END, taskId, 1);
    return { ok: true, taskId };
  }

  /** SPEAK (type 7): the character says this text verbatim. */
  speak(text: string): SendResult {
    const body = sanitizeText(text);
    if (!body.trim()) return { ok: false, message: 'nothing to say' };
    if (!this.connection.isReady) return { ok: false, message: notReady(this.connection.state) };
    const taskId = this.turns.begin();
    this.connection.send(FrameType.SPEAK, taskId, 0, body);
    return { ok: true, taskId };
  }

  /**
   * Start a voice turn under a fresh task id; the previous turn is superseded, so a reply still
   * playing stops and its late frames are dropped (barge-in).
   *
   * - `manual` (push-to-talk, §6.2): chunks, then END_FRAME on `voiceEnd`.
   * - `vad` (§6.3): LISTEN `start` (seq 0000) first; the server decides when the user is done and
   *   says so with LISTEN `detecting` then `stop`; after `stop` late chunks are dropped here, and
   *   the reply comes under the same task. No END_FRAME: the doc has none in this flow.
   * - `auto` (§6.3, v2.5 guide): audio is streamed under the task with no END_FRAME at all; the
   *   server segments the speech itself and sends LISTEN messages. The UI keeps sending until the
   *   user switches hands-free off (`voiceEnd` then only flushes the encoder).
   */
  voiceStart(): SendResult {
    if (!this.connection.isReady) return { ok: false, message: notReady(this.connection.state) };
    this.closeUpload('superseded');
    const taskId = this.turns.begin();
    this.upload = new VoiceUpload(taskId, this.voice.inputFormat, this.voice.opusLengthOrder);
    if (this.voice.mode === 'vad') {
      this.connection.send(
        FrameType.LISTEN,
        taskId,
        0,
        JSON.stringify({ taskid: taskId, type: 'listen', state: 'start' }),
      );
    }
    return { ok: true, taskId };
  }

  /**
   * One chunk of s16le 16 kHz mono PCM from the UI, sent as the profile's input format (PCM in
   * 20–60 ms frames with markers nudged away, or 60 ms Opus packets).
   */
  voiceChunk(taskId: string, pcm: Uint8Array): ChunkResult {
    return sendVoiceChunk(this.upload, taskId, pcm, this.connection, (payload, upload) =>
      this.sendAudio(upload, payload),
    );
  }

  /** The user stopped talking: the rest is flushed, then END_FRAME (manual mode only). */
  voiceEnd(taskId: string): ChunkResult {
    return endVoiceUpload(
      this.upload,
      taskId,
      this.connection,
      (payload, upload) => this.sendAudio(upload, payload),
      (upload) => {
        if (this.voice.mode === 'manual') this.connection.send(FrameType.END, taskId, upload.seq());
      },
    );
  }

  /** Stop uploading without END_FRAME and drop the turn's reply (the user changed their mind). */
  voiceCancel(taskId?: string): void {
    if (taskId === undefined || this.upload?.taskId === taskId) this.closeUpload('cancelled');
    this.turns.supersede();
  }

  /** Barge-in: the reply being played stops and its late frames are dropped. */
  interrupt(): void {
    this.turns.supersede();
  }

  /** Send the whole enabled set again (call on every registry change). */
  reregister(): void {
    if (this.connection.isReady || this.connection.state.status === 'authenticating')
      this.register();
  }

  // -------------------------------------------------------------------------------------------

  private register(): void {
    this.setRegistration({ state: 'registering' });
    let services: Record<string, RegisterService>;
    try {
      services = registerServices(this.options.tools());
    } catch (err) {
      this.setRegistration({
        state: 'failed',
        message: `could not list services: ${(err as Error).message}`,
      });
      return;
    }
    const sent = this.connection.send(FrameType.MCP, MCP_TASK, 0, registerMessage(services));
    // The server does not acknowledge `register` (unknown), so a written frame is the best we know.
    this.setRegistration(
      sent
        ? {
            state: 'registered',
            at: (this.options.clock ?? systemClock).now(),
            services: Object.keys(services),
          }
        : { state: 'failed', message: notReady(this.connection.state) },
    );
  }

  private sendAudio(upload: VoiceUpload, payload: Buffer): void {
    this.connection.send(FrameType.AUDIO, upload.taskId, upload.seq(), payload);
  }

  private closeUpload(because: NonNullable<VoiceUpload['closedBecause']>): void {
    this.upload?.close(because);
  }

  /**
   * LISTEN `stop` for the task being uploaded (`mode:vad`): the server has what it needs (§6.3).
   * In `mode:auto` a stop only ends one utterance: the stream goes on under the same task.
   */
  private onListen(taskId: string, message: unknown): void {
    this.events.emit('listen', { taskId, message });
    const state = (message as { state?: unknown } | null)?.state;
    if (state === 'stop' && this.voice.mode === 'vad' && this.upload?.taskId === taskId)
      this.closeUpload('stopped');
  }

  /** Reply audio to the UI as PCM, whatever the server sent. */
  private onReplyAudio(a: { taskId: string; seq: number; data: Buffer }): void {
    if (this.voice.outputFormat !== 'opus') {
      this.events.emit('audio', { ...a, sampleRate: 16_000 });
      return;
    }
    let decoder = this.replyDecoders.get(a.taskId);
    if (!decoder) {
      decoder = new ReplyAudio(this.voice.opusLengthOrder, this.voice.opusDownlinkRate);
      this.replyDecoders.set(a.taskId, decoder);
    }
    const { pcm, bad } = decoder.push(a.data);
    if (bad)
      this.events.emit('log', {
        level: 'warn',
        message: `${bad} Opus packet(s) of task '${a.taskId}' could not be decoded`,
      });
    if (pcm.length)
      this.events.emit('audio', {
        taskId: a.taskId,
        seq: a.seq,
        data: pcm,
        sampleRate: decoder.rate,
      });
  }

  private onFrame(frame: Frame): void {
    if (frame.type === FrameType.MCP) {
      this.onMcp(frame);
      return;
    }
    if (frame.type === FrameType.STATUS) {
      // STATUS on a turn's task (e.g. "开始监听" for VAD): information for the user.
      this.events.emit('status', frame.payload.toString('utf8'));
      return;
    }
    if (frame.type === FrameType.AUTH || frame.type === FrameType.SPEAK) {
      this.events.emit('log', {
        level: 'warn',
        message: `unexpected frame type ${frame.type} from the server`,
      });
      return;
    }
    this.turns.handle(frame);
  }

  private onMcp(frame: Frame): void {
    const parsed = parseMcp(frame.payload.toString('utf8'));
    switch (parsed.kind) {
      case 'unreadable':
        this.events.emit('log', {
          level: 'warn',
          message: `${parsed.message}: ${preview(frame.payload)}`,
        });
        return;
      case 'other':
        this.events.emit('log', {
          level: 'info',
          message: `MCP '${parsed.type}' from the server: ${preview(frame.payload)}`,
        });
        return;
      case 'bad_call':
        this.events.emit('log', {
          level: 'warn',
          message: `malformed MCP call: ${parsed.message}`,
        });
        if (parsed.rawCallId !== undefined) {
          this.connection.send(
            FrameType.MCP,
            frame.taskId,
            0,
            badCallResult(parsed.rawCallId, parsed.message),
          );
        }
        return;
      case 'call':
        void this.answer(frame.taskId, parsed.call);
    }
  }

  private async answer(
    taskId: string,
    call: { callId: string; rawCallId: string | number; method: string; params: unknown },
  ): Promise<void> {
    const { callId } = call;
    if (this.running.has(callId)) {
      this.events.emit('log', {
        level: 'warn',
        message: `call '${callId}' repeated while it runs; it will be answered once`,
      });
      return;
    }
    const cached = this.answered.get(callId);
    if (cached !== undefined) {
      this.events.emit('log', {
        level: 'warn',
        message: `call '${callId}' repeated; sending the same result again without running it`,
      });
      this.connection.send(FrameType.MCP, taskId, 0, cached);
      return;
    }

    const generation = this.generation;
    this.running.add(callId);
    let message: string;
    try {
      const result = await this.options.gate.dispatch({
        connection: this.ref,
        dialect: 'advent',
        callId,
        service: call.method,
        params: call.params,
      });
      message = safeResult(call.rawCallId, result);
    } finally {
      this.running.delete(callId);
    }
    if (generation !== this.generation || !this.connection.isReady) {
      this.events.emit('log', {
        level: 'warn',
        message: `the result of call '${callId}' was not sent: the connection was lost`,
      });
      return;
    }
    this.answered.set(callId, message);
    if (this.answered.size > ANSWERED_MEMORY) {
      const oldest = this.answered.keys().next().value;
      if (oldest !== undefined) this.answered.delete(oldest);
    }
    this.connection.send(FrameType.MCP, taskKey(taskId), 0, message);
  }
}

/** A result whose data cannot be serialised still answers the call. */
function safeResult(rawCallId: string | number, result: DispatchResult): string {
  try {
    return resultMessage(rawCallId, result);
  } catch (err) {
    return resultMessage(rawCallId, {
      ok: false,
      code: 'service_error',
      message: `the result could not be encoded: ${(err as Error).message}`,
    });
  }
}

/** Text frames cannot carry `##END`; a zero-width space keeps the user's words intact. */
function sanitizeText(text: string): string {
  return text.replace(/##END/g, '##\u200BEND');
}
