/**
 * A robot session (protocols/robot-rpc.md): one WebSocket to a server speaking the
 * `mcp/registerTools` JSON-RPC dialect, wired to the one gate.
 *
 * - On every (re)connect, and again with the whole list on `reregister()`, the enabled services
 *   are registered with the device's `mac_addr`. The ack (either shape) marks them registered; an
 *   error ack or none within `ackTimeoutMs` marks the registration failed, and the link stays.
 * - Every `mcp/tool/execute` goes through the gate; the one with an `id` gets exactly one
 *   response, the id-less copy the server also sends is recorded as a duplicate and never run
 *   twice (dedupe.ts). Errors are -32000…-32099 with the gate's message (messages.ts).
 * - `mcp/ai/message` becomes reply text and thoughts; PCM goes up between start/end_stream and
 *   comes down after `start_audio` until an empty frame (turns.ts, voice.ts).
 * - A result finished after the link dropped is not sent on the next link (that server-side call
 *   is gone: the channel it came on refuses); it is still in the audit log.
 * - A server that stops waiting for an execute (`notifications/cancelled {requestId}`, or its link
 *   ending) withdraws the call at the gate: a prompt for it leaves the window, nothing more runs,
 *   and no response is sent for it.
 */
import { type Clock, type TimerHandle, systemClock } from '../../clock.js';
import type { ConnectionState } from '../../contract/connection.js';
import { type IdSource, cryptoIds } from '../../ids.js';
import {
  type JsonRpcId,
  type JsonRpcMessage,
  RPC,
  preview,
  rpcError,
  rpcResult,
} from '../kit/jsonrpc.js';
import {
  type ChunkResult,
  type Gate,
  type LiveSession,
  type SendResult,
  type SessionEvents,
  type ToolEntry,
  notReady,
  unsupported,
} from '../session.js';
import { SessionBase } from '../kit/session-base.js';
import { normaliseRobotMac } from '../kit/identity.js';
import { type Channel, ReconnectingLink } from '../kit/link.js';
import { MAX_ID_CHARS, MAX_STATUS_CHARS, cutString } from '../kit/bounds.js';
import { LinkConfigError, WsDialer, type WsMessage, type WsTiming } from '../kit/ws-dialer.js';
import { DEFAULT_DUPLICATE_WINDOW_MS, RecentExecutes } from './dedupe.js';
import {
  METHODS,
  type ToolOutcome,
  executeResponse,
  notification,
  parseServerText,
  readAck,
  readAiMessage,
  readExecute,
  registerRequest,
  toolDefinitions,
  userTextMessage,
} from './messages.js';
import { Turns } from './turns.js';
import { endVoiceUpload, sendVoiceChunk } from '../kit/voice-upload.js';
import { VoiceUpload } from './voice.js';

export interface RobotSessionOptions {
  /** The profile id: identifies the connection in calls, prompts and the audit log. */
  id: string;
  /** The connection's display name, shown to the user and written in the audit log. */
  name: string;
  /** `ws://host:8888/ws` (the dialect has no auth headers). */
  url: string;
  /** The device id the server knows us by: `AA-BB-CC-DD-EE-FF` (`aa:bb:…` is accepted). */
  macAddr: string;
  gate: Gate;
  /** The enabled services, read at each (re)register; user-only ones are left out here. */
  tools: () => readonly ToolEntry[];
  /** An id-less execute identical to one received this recently is a duplicate. Default 5000 ms. */
  duplicateWindowMs?: number;
  /** No ack this long after `mcp/registerTools` → registration failed (the link stays). Default 10 s. */
  ackTimeoutMs?: number;
  clock?: Clock;
  ids?: IdSource;
  timing?: Partial<WsTiming>;
}

export const DEFAULT_ACK_TIMEOUT_MS = 10_000;

interface PendingRegister {
  id: string;
  services: string[];
  timer: TimerHandle;
}

export class RobotSession extends SessionBase implements LiveSession {
  readonly kind = 'robot' as const;
  readonly capabilities = { chat: true, voice: true, speak: false };
  readonly link: ReconnectingLink<WsMessage>;
  /** Normalised; undefined when the setting is not a MAC address (the link then stays offline). */
  readonly macAddr: string | undefined;
  /** Why `macAddr` is missing: the connection cannot start (offline, config). */
  private readonly macProblem: string | undefined;
  private readonly clock: Clock;
  private readonly ids: IdSource;
  private readonly recent: RecentExecutes;
  /**
   * Runs the server may still cancel, by the execute's id (and an id-less run by its audit call
   * id, so the twin with an id that arrives later can name it). Bounded by the calls a socket may
   * have in flight (`Channel.track`).
   */
  private readonly running = new Map<string, AbortController>();
  private readonly turns: Turns;
  private pending: PendingRegister | undefined;
  /** The current voice upload, kept after it closes so a late chunk gets a clear answer. */
  private upload: VoiceUpload | undefined;
  /** One note per playback about audio that came without `start_audio`. */
  private unannouncedNoted = false;

  constructor(private readonly options: RobotSessionOptions) {
    super(options);
    this.clock = options.clock ?? systemClock;
    this.ids = options.ids ?? cryptoIds;
    const mac = normaliseRobotMac(options.macAddr);
    this.macAddr = mac.ok ? mac.value : undefined;
    this.macProblem = mac.ok ? undefined : mac.message;
    this.recent = new RecentExecutes(
      options.duplicateWindowMs ?? DEFAULT_DUPLICATE_WINDOW_MS,
      this.clock,
    );
    this.turns = new Turns(this.ids);
    this.link = new ReconnectingLink<WsMessage>({
      dialer: new WsDialer({
        url: () => {
          if (this.macProblem) throw new LinkConfigError(this.macProblem);
          return options.url;
        },
      }),
      clock: this.clock,
      ids: this.ids,
      timing: options.timing,
    });

    const l = this.link.events;
    const on = this.store;
    on.add(l.on('state', (s) => this.onState(s)));
    on.add(
      l.on('ready', () => {
        this.recent.clear();
        this.register();
      }),
    );
    on.add(
      l.on('message', ({ channel, data }) =>
        data.kind === 'text' ? this.onText(channel, data.text) : this.onBinary(data.data),
      ),
    );
    on.add(l.on('issue', ({ message }) => this.log('warn', message)));

    for (const name of [
      'replyDelta',
      'replyDone',
      'replyInterrupted',
      'thought',
      'audio',
    ] as const) {
      on.add(
        this.turns.events.on(name, (payload) =>
          this.events.emit(name, payload as SessionEvents[typeof name]),
        ),
      );
    }
    on.add(this.turns.events.on('odd', ({ message }) => this.log('warn', message)));
  }

  get state(): ConnectionState {
    return this.link.state;
  }

  start(): void {
    this.link.start();
  }

  async stop(): Promise<void> {
    this.closeUpload('cancelled');
    this.turns.supersede();
    this.clearPending();
    await this.link.stop();
    this.store.dispose();
  }

  /** The enabled services changed: the whole list again (nothing to do while not connected). */
  reregister(): void {
    if (this.link.isReady) this.register();
  }

  /** A typed turn, sent as `mcp/user/message` — a GUESS (see messages.ts `userTextMessage`). */
  sendText(text: string): SendResult {
    if (!text.trim()) return { ok: false, message: 'nothing to send' };
    if (!this.link.isReady || !this.macAddr) return { ok: false, message: notReady(this.state) };
    const taskId = this.turns.begin();
    this.link.send(userTextMessage(text, this.macAddr));
    return { ok: true, taskId };
  }

  speak(_text: string): SendResult {
    return { ok: false, message: unsupported('robot', 'Making the character say a given text') };
  }

  /**
   * A voice turn: `start_stream`, then the PCM. The previous turn is superseded, so a reply still
   * playing stops and its late audio is dropped (barge-in).
   */
  voiceStart(): SendResult {
    if (!this.link.isReady) return { ok: false, message: notReady(this.state) };
    this.abandonUpload('superseded');
    const taskId = this.turns.begin();
    this.upload = new VoiceUpload(taskId);
    this.link.send(notification(METHODS.startStream));
    return { ok: true, taskId };
  }

  voiceChunk(taskId: string, pcm: Uint8Array): ChunkResult {
    return sendVoiceChunk(this.upload, taskId, pcm, this.link, (frame) => this.link.send(frame));
  }

  /** The user stopped talking: the rest is flushed, then `end_stream`. */
  voiceEnd(taskId: string): ChunkResult {
    return endVoiceUpload(
      this.upload,
      taskId,
      this.link,
      (frame) => this.link.send(frame),
      () => this.link.send(notification(METHODS.endStream)),
    );
  }

  /** Stop uploading and drop the turn's reply (the user changed their mind). */
  voiceCancel(taskId?: string): void {
    if (taskId === undefined || this.upload?.taskId === taskId) this.abandonUpload('cancelled');
    this.turns.supersede();
  }

  interrupt(): void {
    this.turns.supersede();
  }

  // --- registration --------------------------------------------------------------------------

  private register(): void {
    this.clearPending();
    this.setRegistration({ state: 'registering' });
    let tools;
    try {
      tools = toolDefinitions(this.options.tools());
    } catch (err) {
      this.setRegistration({
        state: 'failed',
        message: `could not list services: ${(err as Error).message}`,
      });
      return;
    }
    const id = `reg-${this.ids.hex(12)}`;
    const sent =
      this.macAddr !== undefined &&
      this.link.send(JSON.stringify(registerRequest(id, this.macAddr, tools)));
    if (!sent) {
      this.setRegistration({ state: 'failed', message: notReady(this.state) });
      return;
    }
    const ackMs = this.options.ackTimeoutMs ?? DEFAULT_ACK_TIMEOUT_MS;
    this.pending = {
      id,
      services: tools.map((t) => t.name),
      timer: this.clock.setTimeout(() => {
        this.pending = undefined;
        this.setRegistration({
          state: 'failed',
          message: `the server did not acknowledge the service registration within ${Math.round(ackMs / 1000)} s; calls it makes are still answered`,
        });
      }, ackMs),
    };
  }

  private onAck(msg: Extract<JsonRpcMessage, { kind: 'response' }>, pending: PendingRegister) {
    this.clearPending();
    const verdict = readAck(msg);
    this.setRegistration(
      verdict.ok
        ? { state: 'registered', at: this.clock.now(), services: pending.services }
        : {
            state: 'failed',
            message: `the server refused the registration: ${cutString(verdict.message, MAX_STATUS_CHARS)}`,
          },
    );
  }

  private clearPending(): void {
    if (this.pending) this.clock.clearTimeout(this.pending.timer);
    this.pending = undefined;
  }

  // --- incoming ------------------------------------------------------------------------------

  private onState(s: ConnectionState): void {
    if (s.status === 'reconnecting' || s.status === 'offline') {
      // Frames of a lost link never arrive: close its reply and upload instead of leaving them open.
      this.turns.lost();
      this.closeUpload('lost');
      if (this.pending) {
        this.clearPending();
        this.setRegistration({
          state: 'failed',
          message: 'the connection was lost before the server acknowledged the registration',
        });
      }
    }
    this.events.emit('state', s);
  }

  private onText(channel: Channel, text: string): void {
    const msg = parseServerText(text);
    switch (msg.kind) {
      case 'invalid':
        this.log('warn', `unreadable message from the server (${msg.message}): ${preview(text)}`);
        if (msg.id !== undefined)
          channel.send(JSON.stringify(rpcError(msg.id, RPC.INVALID_REQUEST, msg.message)));
        return;
      case 'response': {
        const pending = this.pending;
        if (pending && msg.id !== null && String(msg.id) === pending.id) this.onAck(msg, pending);
        else this.log('info', `unexpected response from the server: ${preview(text)}`);
        return;
      }
      case 'notification':
        this.onMethod(channel, msg.method, msg.params, undefined, text);
        return;
      case 'request':
        this.onMethod(channel, msg.method, msg.params, msg.id, text);
    }
  }

  private onMethod(
    channel: Channel,
    method: string,
    params: unknown,
    id: JsonRpcId | undefined,
    raw: string,
  ): void {
    if (method === METHODS.execute) {
      // Counted against its socket: a server cannot queue more calls than run at once.
      void channel.track(() => this.onExecute(channel, params, id));
      return;
    }
    switch (method) {
      case METHODS.cancelled:
        this.onCancelled(params);
        break;
      case METHODS.aiMessage:
        this.onAiMessage(params, raw);
        break;
      case METHODS.stopStream:
        this.onStopStream();
        break;
      case METHODS.startAudio:
        this.unannouncedNoted = false;
        this.turns.startAudio();
        break;
      case METHODS.endAudio:
        this.turns.endAudio();
        break;
      default:
        this.log('warn', `unknown method '${method}' from the server ignored: ${preview(raw)}`);
        if (id !== undefined)
          channel.send(
            JSON.stringify(
              rpcError(id, RPC.METHOD_NOT_FOUND, `method '${method}' is not supported`),
            ),
          );
        return;
    }
    // These are notifications in the dialect; one sent as a request still deserves its answer.
    if (id !== undefined) channel.send(JSON.stringify(rpcResult(id, {})));
  }

  private onAiMessage(params: unknown, raw: string): void {
    const m = readAiMessage(params);
    if (!m) {
      this.log('warn', `unreadable mcp/ai/message: ${preview(raw)}`);
      return;
    }
    if ('unknownType' in m) {
      this.log('info', `mcp/ai/message of type ${m.unknownType} ignored`);
      return;
    }
    if (m.type === 'chunk') this.turns.chunk(m.content);
    else if (m.type === 'final') this.turns.final(m.content);
    else this.turns.thought(m.content);
  }

  /** The server's VAD heard the end of the user's speech: the upload is over. */
  private onStopStream(): void {
    const upload = this.upload;
    if (!upload?.open) {
      this.log('info', 'the server ended a voice upload that was not open (mcp/audio/stop_stream)');
      return;
    }
    upload.close('stopped');
    this.events.emit('listen', { taskId: upload.taskId, message: { state: 'stop' } });
  }

  private onBinary(data: Buffer): void {
    if (data.length === 0) {
      this.turns.endAudio();
      return;
    }
    if (this.turns.audioFrame(data) && !this.unannouncedNoted) {
      this.unannouncedNoted = true;
      this.log('info', 'reply audio arrived without mcp/server/start_audio; playing it anyway');
    }
  }

  // --- tool calls ----------------------------------------------------------------------------

  private async onExecute(
    channel: Channel,
    params: unknown,
    id: JsonRpcId | undefined,
  ): Promise<void> {
    const call = readExecute(params);
    if (!call.ok) {
      this.log('warn', `malformed mcp/tool/execute: ${call.message}`);
      if (id !== undefined)
        this.reply(channel, id, { ok: false, code: 'invalid_params', message: call.message });
      return;
    }
    const { tool, input } = call;
    const verdict = this.recent.arrive(tool, input, id, () => this.idlessCallId());
    switch (verdict.action) {
      case 'run': {
        // An id-less run by its audit call id: a twin with an id arriving later names that.
        const keys = [id !== undefined ? wireKey(id) : verdict.call.callId];
        const { withdrawn, untrack } = this.track(keys, channel);
        let outcome: ToolOutcome;
        try {
          outcome = await this.dispatch(verdict.call.callId, tool, input, undefined, withdrawn);
        } finally {
          untrack();
        }
        verdict.call.settle(outcome);
        if (id !== undefined) this.replyUnlessWithdrawn(channel, id, outcome, withdrawn);
        else
          this.log(
            'info',
            `an mcp/tool/execute without id ran '${tool}' (${outcome.ok ? 'ok' : outcome.code}); the server waits for no answer`,
          );
        return;
      }
      case 'twin': {
        if (id === undefined) return; // only a copy with an id is a twin
        // Its id-less copy came first and is running (or ran): answer with that run's result.
        // A cancel naming this id withdraws that run: the two are one call.
        const key = wireKey(id);
        const run = this.running.get(verdict.of);
        if (run) this.running.set(key, run);
        void this.dispatch(String(id), tool, input, { of: verdict.of, paired: true });
        try {
          const outcome = await verdict.outcome;
          if (run) this.replyUnlessWithdrawn(channel, id, outcome, run);
          else this.reply(channel, id, outcome);
        } finally {
          if (run && this.running.get(key) === run) this.running.delete(key);
        }
        return;
      }
      // Awaited, so a copy counts against the socket's calls in flight (Channel.track) as long as
      // its record takes: a flood of copies pauses reading like a flood of calls does.
      case 'duplicate':
        await this.dispatch(this.idlessCallId(), tool, input, {
          of: verdict.of,
          paired: verdict.paired,
        });
        return;
      case 'repeat':
        this.log('warn', `call '${verdict.of}' arrived again; it runs and is answered once`);
        await this.dispatch(verdict.of, tool, input, { of: verdict.of, paired: false });
    }
  }

  /**
   * A run the server may withdraw: by a cancel naming one of `keys`, or its socket ending.
   * `untrack` when it has ended: it lets go of the keys and of its listener on the socket's `gone`
   * signal, which a long-lived socket would otherwise collect, one per execute it ever carried.
   */
  private track(
    keys: readonly string[],
    channel: Channel,
  ): { withdrawn: AbortController; untrack: () => void } {
    const withdrawn = new AbortController();
    const gone = channel.gone;
    const onGone = (): void => withdrawn.abort(gone.reason);
    if (gone.aborted) onGone();
    else gone.addEventListener('abort', onGone, { once: true });
    for (const key of keys) this.running.set(key, withdrawn);
    const untrack = (): void => {
      gone.removeEventListener('abort', onGone);
      for (const key of keys) if (this.running.get(key) === withdrawn) this.running.delete(key);
    };
    return { withdrawn, untrack };
  }

  /** `notifications/cancelled`: the server stopped waiting for the execute with `requestId`. */
  private onCancelled(params: unknown): void {
    const p = (params && typeof params === 'object' ? params : {}) as Record<string, unknown>;
    const requestId = p.requestId;
    if (typeof requestId !== 'string' && typeof requestId !== 'number') {
      this.log('info', 'a cancellation without a requestId was ignored');
      return;
    }
    // Already answered, or never asked: nothing to withdraw.
    const run = this.running.get(wireKey(requestId));
    if (!run) return;
    const reason = typeof p.reason === 'string' ? cutString(p.reason, MAX_STATUS_CHARS) : '';
    run.abort(new Error(`the server cancelled it${reason ? `: ${reason}` : ''}`));
  }

  /** A withdrawn execute gets no response: the server is no longer waiting for one. */
  private replyUnlessWithdrawn(
    channel: Channel,
    id: JsonRpcId,
    outcome: ToolOutcome,
    withdrawn: AbortController,
  ): void {
    // The card and the audit record say why; the server is told nothing.
    if (!withdrawn.signal.aborted) this.reply(channel, id, outcome);
  }

  private async dispatch(
    callId: string,
    service: string,
    params: unknown,
    /** A copy of call `of`, recorded and not run; `paired`: its one twin, which takes no turn. */
    copy?: { of: string; paired: boolean },
    withdrawn?: AbortController,
  ): Promise<ToolOutcome> {
    try {
      const result = await this.options.gate.dispatch({
        connection: this.ref,
        dialect: 'robot',
        callId,
        service,
        params,
        ...(copy ? { duplicateOf: copy.of, twinOfPaced: copy.paired } : {}),
        ...(withdrawn ? { signal: withdrawn.signal } : {}),
      });
      return result.ok
        ? { ok: true, data: result.data }
        : { ok: false, code: result.code, message: result.message };
    } catch (err) {
      // The gate never throws; if it ever does, the call still gets its one answer.
      return {
        ok: false,
        code: 'service_error',
        message: `the agent failed while handling '${service}': ${(err as Error).message}`,
      };
    }
  }

  /** The one answer to an execute, on the socket it came on (never on a later one). */
  private reply(channel: Channel, id: JsonRpcId, outcome: ToolOutcome): void {
    if (!channel.send(executeResponse(id, outcome)))
      this.log(
        'warn',
        `the result of call '${String(id)}' was not sent: the connection it came on is gone`,
      );
  }

  /** The audit log's id for a call the server sent without one. */
  private idlessCallId(): string {
    return `idless-${this.ids.hex(8)}`;
  }

  // --- helpers -------------------------------------------------------------------------------

  private closeUpload(because: NonNullable<VoiceUpload['closedBecause']>): void {
    this.upload?.close(because);
  }

  /**
   * Give up an open upload. The reference server keeps what it was sent until `end_stream`, so it
   * is told; `reason: "timeout"` is the one reason its older code knows, and makes it drop the
   * recording instead of answering it (its newer code answers whatever it got: nothing we can do).
   */
  private abandonUpload(because: 'cancelled' | 'superseded'): void {
    const upload = this.upload;
    if (!upload?.open) return;
    if (this.link.isReady) this.link.send(notification(METHODS.endStream, { reason: 'timeout' }));
    upload.close(because);
  }
}

/** An execute id as the map keys it (a server may name a numeric id as a string in its cancel). */
function wireKey(id: JsonRpcId | string | number): string {
  return `id:${cutString(String(id), MAX_ID_CHARS)}`;
}
