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
import type { ConnectionState, RegistrationState } from '../../contract/connection.js';
import type { CallRequest, DispatchResult } from '../../dispatch.js';
import { Emitter } from '../../events.js';
import { type IdSource, cryptoIds } from '../../ids.js';
import { AdventConnection, type AdventConnectionOptions } from './connection.js';
import { type Frame, FrameType, MCP_TASK, nudgePcmMarkers, taskKey } from './frame.js';
import {
  type RegisterService,
  badCallResult,
  parseMcp,
  registerMessage,
  resultMessage,
} from './mcp.js';
import { Turns, type TurnEvents, preview } from './turns.js';

export interface Gate {
  dispatch(call: CallRequest): Promise<DispatchResult>;
}

export interface AdventSessionOptions extends Omit<AdventConnectionOptions, 'clock' | 'ids'> {
  /** The connection's name, shown to the user and written in the audit log. */
  name: string;
  gate: Gate;
  /** The enabled services as the server should see them, read at each (re)register. */
  services: () => Record<string, RegisterService>;
  clock?: Clock;
  ids?: IdSource;
}

export type SessionEvents = TurnEvents & {
  state: ConnectionState;
  registration: RegistrationState;
  status: string;
  /** A line worth logging: odd frames, dropped results, protocol trouble. Never contains secrets. */
  log: { level: 'info' | 'warn'; message: string };
  tokenExpiring: { expiresAt: number };
};

export type SendResult = { ok: true; taskId: string } | { ok: false; message: string };

/** How many answered call ids are remembered to answer repeats without running them again. */
const ANSWERED_MEMORY = 256;

export class AdventSession {
  readonly events = new Emitter<SessionEvents>();
  readonly connection: AdventConnection;
  private readonly turns: Turns;
  /** Bumped on every ready: results from an older link are not sent on a newer one. */
  private generation = 0;
  private readonly running = new Set<string>();
  private readonly answered = new Map<string, string>();
  private registration: RegistrationState = { state: 'registering' };
  private uploadSeq = 0;

  constructor(private readonly options: AdventSessionOptions) {
    const ids = options.ids ?? cryptoIds;
    this.connection = new AdventConnection({
      ...options,
      clock: options.clock ?? systemClock,
      ids,
    });
    this.turns = new Turns(ids);

    const c = this.connection.events;
    c.on('state', (s) => {
      // Frames of a lost link never arrive: close its replies instead of leaving them open.
      if (s.status === 'reconnecting' || s.status === 'offline') this.turns.interruptAll();
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

    const forward = <K extends keyof TurnEvents>(name: K) =>
      this.turns.events.on(name, (payload) => this.events.emit(name, payload as SessionEvents[K]));
    for (const name of [
      'replyDelta',
      'replyDone',
      'replyInterrupted',
      'mood',
      'audio',
      'listen',
    ] as const)
      forward(name);
    this.turns.events.on('odd', ({ message }) =>
      this.events.emit('log', { level: 'warn', message }),
    );
  }

  get name(): string {
    return this.options.name;
  }

  get state(): ConnectionState {
    return this.connection.state;
  }

  get registrationState(): RegistrationState {
    return this.registration;
  }

  start(): void {
    this.connection.start();
  }

  async stop(): Promise<void> {
    this.turns.supersede();
    await this.connection.stop();
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

  /** Start a voice turn: later chunks go under this task id until `voiceEnd`. */
  voiceStart(): SendResult {
    if (!this.connection.isReady) return { ok: false, message: notReady(this.connection.state) };
    this.uploadSeq = 0;
    return { ok: true, taskId: this.turns.begin() };
  }

  /** One chunk of s16le PCM for the current voice turn (markers nudged away). */
  voiceChunk(taskId: string, pcm: Uint8Array): boolean {
    const seq = this.uploadSeq;
    this.uploadSeq = (this.uploadSeq + 1) % 10_000;
    return this.connection.send(FrameType.AUDIO, taskId, seq, nudgePcmMarkers(pcm));
  }

  voiceEnd(taskId: string): boolean {
    return this.connection.send(FrameType.END, taskId, this.uploadSeq);
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
      services = this.options.services();
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

  private setRegistration(state: RegistrationState): void {
    this.registration = state;
    this.events.emit('registration', state);
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
        connection: this.options.name,
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

function notReady(state: ConnectionState): string {
  switch (state.status) {
    case 'ready':
      return 'ready';
    case 'reconnecting':
      return `not connected (reconnecting: ${state.lastError})`;
    case 'offline':
      return `not connected (${state.message})`;
    default:
      return `not connected yet (${state.status})`;
  }
}
