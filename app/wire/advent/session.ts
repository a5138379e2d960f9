/**
 * An Advent session: the link, the turns and MCP, wired to the one gate.
 *
 * - `register` is sent right after AUTH on every (re)connect, and again whenever the enabled set
 *   changes (`reregister()`), always carrying the whole set.
 * - Each MCP `call` goes to the gate; calls run concurrently; exactly one `result` per call_id is
 *   sent on the call's own task id, through the channel the call came on. A repeated call_id is
 *   never run twice on a connection (calls.ts): while it runs the repeat is ignored, afterwards
 *   it is answered again without running.
 * - A result finished after its socket closed is not sent on the next one (that server-side call
 *   is gone: its channel refuses); it is still in the audit log. The protocol has no cancel, so
 *   the socket ending is the server's "stopped waiting": a prompt still up for one of its calls is
 *   withdrawn and the call recorded as cancelled.
 */
import { type Clock, systemClock } from '../../clock.js';
import type { ConnectionState } from '../../contract/connection.js';
import type { DispatchResult } from '../../dispatch.js';
import { type IdSource, cryptoIds } from '../../ids.js';
import type { Channel } from '../kit/link.js';
import { CallLedger } from './calls.js';
import { AdventLink, type AdventLinkOptions } from './link.js';
import { type Frame, FrameType, MCP_TASK, taskKey } from './frame.js';
import {
  type RegisterService,
  registerServices,
  badCallResult,
  frameJson,
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
import { AudioBudget, overBudgetMessage } from '../kit/audio-budget.js';
import { SessionBase } from '../kit/session-base.js';
import {
  MAX_REPLY_AUDIO_MS_PER_FRAME,
  MAX_STATUS_CHARS,
  MIN_OPUS_PACKET_BYTES,
} from '../kit/bounds.js';
import { endVoiceUpload, sendVoiceChunk } from '../kit/voice-upload.js';

export interface AdventSessionOptions extends Omit<AdventLinkOptions, 'clock' | 'ids'> {
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

export class AdventSession extends SessionBase implements LiveSession {
  readonly kind = 'advent' as const;
  readonly capabilities = { chat: true, voice: true, speak: true };
  readonly connection: AdventLink;
  private readonly turns: Turns;
  /** The calls of the current connection; each call keeps the ledger it arrived under. */
  private ledger = new CallLedger();
  private readonly voice: Required<VoiceOptions>;
  /** The current voice upload, kept after it closes so a late chunk gets a clear refusal. */
  private upload: VoiceUpload | undefined;
  /** Opus reply decoders per task, freed when the reply ends or is dropped. */
  private readonly replyDecoders = new Map<string, ReplyAudio>();
  private readonly audioBudget: AudioBudget;

  constructor(private readonly options: AdventSessionOptions) {
    super(options);
    this.audioBudget = new AudioBudget(options.clock ?? systemClock);
    const ids = options.ids ?? cryptoIds;
    this.connection = new AdventLink({
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
    const on = this.store;
    on.add(
      c.on('state', (s) => {
        // Frames of a lost link never arrive: close its replies instead of leaving them open.
        if (s.status === 'reconnecting' || s.status === 'offline') {
          this.turns.interruptAll();
          // The server forgot the half-sent turn with the link; a new link needs a new turn.
          this.closeUpload('lost');
        }
        this.events.emit('state', s);
        if (s.status === 'authenticating') this.register();
      }),
    );
    // A new socket is a new server session: its call ids start over.
    on.add(c.on('open', () => (this.ledger = new CallLedger())));
    on.add(c.on('frame', ({ channel, frame }) => this.onFrame(channel, frame)));
    on.add(c.on('status', (s) => this.status(s)));
    on.add(c.on('issue', ({ message }) => this.log('warn', message)));
    on.add(c.on('tokenExpiring', (e) => this.events.emit('tokenExpiring', e)));

    const t = this.turns.events;
    const forward = <K extends keyof TurnEvents & keyof SessionEvents>(name: K) =>
      on.add(t.on(name, (payload) => this.events.emit(name, payload as SessionEvents[K])));
    for (const name of ['replyDelta', 'replyDone', 'replyInterrupted', 'mood'] as const)
      forward(name);
    on.add(t.on('audio', (a) => this.onReplyAudio(a)));
    on.add(t.on('listen', ({ taskId, message }) => this.onListen(taskId, message)));
    const freeDecoder = ({ taskId }: { taskId: string }) => {
      this.replyDecoders.get(taskId)?.close();
      this.replyDecoders.delete(taskId);
    };
    on.add(t.on('replyDone', freeDecoder));
    on.add(t.on('replyInterrupted', freeDecoder));
    on.add(t.on('odd', ({ message }) => this.log('warn', message)));
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
    this.store.dispose();
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
        frameJson({ taskid: taskId, type: 'listen', state: 'start' }),
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
      decoder = new ReplyAudio(
        this.voice.opusLengthOrder,
        this.voice.opusDownlinkRate,
        this.audioBudget,
      );
      this.replyDecoders.set(a.taskId, decoder);
    }
    const { pcm, bad, dropped, over } = decoder.push(a.data);
    if (over) this.events.emit('log', { level: 'warn', message: overBudgetMessage(a.taskId) });
    if (dropped)
      this.events.emit('log', {
        level: 'warn',
        message: `${dropped} Opus packet(s) of task '${a.taskId}' were dropped: shorter than ${MIN_OPUS_PACKET_BYTES} bytes (no audio fits), or past the ${MAX_REPLY_AUDIO_MS_PER_FRAME / 1000} s one frame may hold; later ones are dropped without a word`,
      });
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

  private onFrame(channel: Channel, frame: Frame): void {
    if (frame.type === FrameType.MCP) {
      this.onMcp(channel, frame);
      return;
    }
    if (frame.type === FrameType.STATUS) {
      // STATUS on a turn's task (e.g. "开始监听" for VAD): information for the user.
      this.status(preview(frame.payload, MAX_STATUS_CHARS));
      return;
    }
    if (frame.type === FrameType.AUTH || frame.type === FrameType.SPEAK) {
      this.log('warn', `unexpected frame type ${frame.type} from the server`);
      return;
    }
    this.turns.handle(frame);
  }

  private onMcp(channel: Channel, frame: Frame): void {
    const parsed = parseMcp(frame.payload.toString('utf8'));
    switch (parsed.kind) {
      case 'unreadable':
        this.log('warn', `${parsed.message}: ${preview(frame.payload)}`);
        return;
      case 'other':
        this.log('info', `MCP '${parsed.type}' from the server: ${preview(frame.payload)}`);
        return;
      case 'bad_call':
        this.log('warn', `malformed MCP call: ${parsed.message}`);
        if (parsed.rawCallId !== undefined) {
          this.connection.write(
            channel,
            FrameType.MCP,
            frame.taskId,
            0,
            badCallResult(parsed.rawCallId, parsed.message),
          );
        }
        return;
      case 'call':
        // Whatever goes wrong answering one call is that call's trouble, never the process's.
        this.answer(channel, this.ledger, frame.taskId, parsed.call).catch((err: unknown) =>
          this.log(
            'warn',
            `call '${parsed.call.callId}' could not be answered: ${err instanceof Error ? err.message : String(err)}`,
          ),
        );
    }
  }

  private async answer(
    channel: Channel,
    ledger: CallLedger,
    taskId: string,
    call: { callId: string; rawCallId: string | number; method: string; params: unknown },
  ): Promise<void> {
    const { callId } = call;
    const seen = ledger.seen(callId);
    switch (seen.kind) {
      case 'running':
        this.log('warn', `call '${callId}' repeated while it runs; it will be answered once`);
        return;
      case 'answered':
        this.log(
          'warn',
          `call '${callId}' repeated; answering it again without running it a second time`,
        );
        this.connection.write(
          channel,
          FrameType.MCP,
          taskKey(taskId),
          0,
          seen.result ??
            badCallResult(
              call.rawCallId,
              `call '${callId}' was already answered on this connection; it is not run again`,
            ),
        );
        return;
      case 'full': {
        const why = `this connection has carried more calls than the agent keeps track of; reconnecting so the server starts afresh`;
        this.log('warn', why);
        this.connection.write(
          channel,
          FrameType.MCP,
          taskKey(taskId),
          0,
          badCallResult(call.rawCallId, `${why}; call again once connected`),
        );
        this.connection.reconnect(why);
        return;
      }
    }

    ledger.begin(callId);
    let result: DispatchResult;
    try {
      // Counted against its socket: a server cannot queue more calls than run at once.
      result = await channel.track(() =>
        this.options.gate.dispatch({
          connection: this.ref,
          dialect: 'advent',
          callId,
          service: call.method,
          params: call.params,
          // The protocol has no cancel: the socket ending is how the server stops waiting.
          signal: channel.gone,
        }),
      );
    } catch (err) {
      // The gate never throws; if it ever does, the call still gets its one answer.
      result = {
        ok: false,
        code: 'service_error',
        message: `the agent failed while handling '${call.method}': ${(err as Error).message}`,
      };
    }
    const message = safeResult(call.rawCallId, result);
    ledger.finish(callId, message);
    if (!this.connection.write(channel, FrameType.MCP, taskKey(taskId), 0, message))
      this.log(
        'warn',
        `the result of call '${callId}' was not sent: the connection it came on is gone`,
      );
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
