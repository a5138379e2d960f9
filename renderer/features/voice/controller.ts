/**
 * Voice turns (protocol §6.2/6.3) as the page runs them: push-to-talk (hold; the audio stays here
 * until the press lasts MIN_PRESS_MS, so a shorter press reaches no server at all), hands-free
 * (stream until the server's LISTEN stop, then the next turn), barge-in (talking while a reply
 * plays flushes it at once, and that reply's late audio is dropped), and reply audio played as it
 * streams. Chunks go up as binary frames when the bridge has them.
 * Electron's global shortcut has no key-up, so it toggles: press to talk, press again to send.
 * With local voice detection on (Settings), a push-to-talk turn also ends when the user stops
 * speaking, exactly as a release would; then a click (a press shorter than a hold) starts a turn
 * that listens until speech ends, or until the next press sends it.
 */
import type { Bridge, DirectAudio, ReplyLink } from '../../bridge/types.js';
import {
  type Capture,
  MicError,
  type VoiceEngine,
  counters,
  type SpeechWatch,
  devicePrefs,
} from '../../audio/shared.js';
import { MAX_HELD_AUDIO_BYTES, MIN_PRESS_MS } from '../../../app/contract/voice.js';
import { useVoice } from '../../store/voice.js';
import { localVadFailed, useLocalVad } from './local-vad-setting.js';

/** Time as the controller needs it: injected so tests decide when a press has lasted long enough. */
export interface VoiceClock {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

const pageClock: VoiceClock = {
  now: () => performance.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

interface Turn {
  startedAt: number;
  handsFree: boolean;
  taskId?: string;
  capture?: Capture;
  /** Audio captured before the turn has a task (held while the press is short), oldest first. */
  pending: ArrayBuffer[];
  pendingBytes: number;
  /** Fires when the press has lasted MIN_PRESS_MS: the turn starts then. */
  holdTimer?: unknown;
  /** voiceStart and the backlog, once begun (a hold passed, a long release, or hands-free). */
  starting?: Promise<void>;
  released: boolean;
  heldMs: number;
  finishing: boolean;
  /** Local voice detection ends this turn (a push-to-talk turn with the setting on). */
  localVad: boolean;
  /** A click, not a hold, started it: it listens until speech ends or the next press. */
  latched: boolean;
  /** The detector listening to this turn, once it does. */
  speech?: Promise<SpeechWatch | undefined>;
}

export class VoiceController {
  private bridge: Bridge | undefined;
  /** The bridge's line to the player, when the engine uses it: it plays the approved reply. */
  private link: ReplyLink | undefined;
  private currentTurn: Turn | undefined;
  /** The task whose reply audio plays; others are dropped. */
  private replyTask: string | undefined;
  private replyDone = false;
  /** Tasks interrupted by the user: their late audio is never played. */
  private readonly blocked = new Set<string>();
  private thinkingTimer: ReturnType<typeof setTimeout> | undefined;
  /** The rules the bridge's line was last told. */
  private lineSent: { taskId: string | undefined; listening: boolean } | undefined;
  private offs: (() => void)[] = [];
  /**
   * Asks the system for the microphone before the first capture (Electron on macOS:
   * window.agent.askMicrophone); false means refused. Unset in a browser.
   */
  askMicrophone: (() => Promise<boolean>) | undefined;
  private micGranted = false;

  constructor(
    readonly engine: VoiceEngine,
    private readonly clock: VoiceClock = pageClock,
  ) {}

  private now(): number {
    return this.clock.now();
  }

  attach(bridge: Bridge): () => void {
    this.bridge = bridge;
    this.engine.onPlaybackState = () => this.maybeIdle();
    const link = bridge.replies;
    if (link && this.engine.useReplyLink) {
      this.engine.useReplyLink(link);
      this.link = link;
      this.syncLine();
      this.offs.push(link.onDirect((audio) => this.onDirect(audio)));
    }
    this.offs.push(
      bridge.on('audio', (ev) => this.onAudio(ev.taskId, ev.sampleRate, ev.pcm)),
      bridge.on('listen', (ev) => this.onListen(ev.taskId, ev.message)),
      bridge.on('chat', (item) => {
        if (
          item.kind === 'assistant' &&
          item.taskId === this.replyTask &&
          item.state !== 'streaming'
        ) {
          this.replyDone = true;
          this.maybeIdle();
        }
      }),
    );
    return () => {
      for (const off of this.offs) off();
      this.offs = [];
      this.link?.policy({ taskId: undefined, listening: true });
      this.link = undefined;
      this.bridge = undefined;
    };
  }

  private get turn(): Turn | undefined {
    return this.currentTurn;
  }

  private set turn(turn: Turn | undefined) {
    this.currentTurn = turn;
    this.syncLine();
  }

  /** The reply to play; the bridge's line plays it without the page from now on. */
  private setReplyTask(taskId: string | undefined, block?: string): void {
    this.replyTask = taskId;
    this.syncLine(block);
  }

  /** The bridge's line applies the same rules as onAudio: tell it each change, before a flush. */
  private syncLine(block?: string): void {
    const link = this.link;
    if (!link) return;
    const listening = this.turn !== undefined && !this.turn.handsFree;
    const sent = this.lineSent;
    const same =
      sent !== undefined && sent.taskId === this.replyTask && sent.listening === listening;
    if (same && block === undefined) return;
    this.lineSent = { taskId: this.replyTask, listening };
    link.policy({ taskId: this.replyTask, listening, ...(block === undefined ? {} : { block }) });
  }

  get busy(): boolean {
    return this.turn !== undefined;
  }

  /** Start talking (button or Space down, or the next hands-free turn). */
  async press(handsFree = false): Promise<void> {
    // A press while a clicked turn listens sends it.
    if (this.turn?.latched && !handsFree) return this.end(this.turn);
    if (this.turn || !this.bridge) return;
    // Pressing talk interrupts a reply at once. A hands-free turn that starts while a reply plays
    // (echo cancellation) leaves it playing: the server's LISTEN tells when the user cuts in.
    if (!handsFree) this.bargeIn();
    const turn: Turn = {
      startedAt: this.now(),
      handsFree,
      pending: [],
      pendingBytes: 0,
      released: false,
      heldMs: 0,
      finishing: false,
      localVad: !handsFree && useLocalVad.getState().on,
      latched: false,
    };
    this.turn = turn;
    const voice = useVoice.getState();
    voice.setProblem(undefined);
    if (useLocalVad.getState().notice) useLocalVad.setState({ notice: false });
    voice.setPhase('listening');
    if (!(await this.microphoneAllowed())) {
      this.turn = undefined;
      voice.setPhase('idle');
      voice.setHandsFree(false);
      voice.setProblem('denied');
      return;
    }
    try {
      turn.capture = await this.engine.openCapture(
        (pcm) => this.onChunk(turn, pcm),
        (level) => useVoice.getState().setLevel(Math.min(1, level * 4)),
        { echoCancellation: handsFree && devicePrefs.echoCancellation() },
      );
    } catch (err) {
      this.turn = undefined;
      voice.setPhase('idle');
      voice.setHandsFree(false);
      voice.setProblem(err instanceof MicError ? err.problem : 'failed');
      return;
    }
    if (turn.released) {
      // Let go while the microphone was opening: sent if it was a long press, else nothing.
      if (turn.heldMs < MIN_PRESS_MS) await this.finish(turn);
      else await this.start(turn);
      return;
    }
    if (turn.localVad) this.watchSpeech(turn, turn.capture);
    // Hands-free is not a press: the server hears it at once. A press waits until it is one.
    if (handsFree) await this.start(turn);
    else this.holdUntilPressed(turn);
  }

  /**
   * The turn starts once the press has lasted MIN_PRESS_MS; until then its audio stays here, so
   * a slip sends nothing (the Advent protocol has no way to take back frames already sent).
   */
  private holdUntilPressed(turn: Turn): void {
    const left = MIN_PRESS_MS - (this.now() - turn.startedAt);
    if (left <= 0) {
      void this.start(turn);
      return;
    }
    turn.holdTimer = this.clock.setTimeout(() => {
      turn.holdTimer = undefined;
      if (this.turn !== turn || turn.finishing || turn.starting) return;
      // A timer may fire a hair early by this clock: wait out the rest rather than start short.
      this.holdUntilPressed(turn);
    }, left);
  }

  /** voiceStart, then the held audio in order; one start per turn, whoever asks first. */
  private start(turn: Turn): Promise<void> {
    this.clock.clearTimeout(turn.holdTimer);
    turn.holdTimer = undefined;
    turn.starting ??= this.begin(turn);
    return turn.starting;
  }

  private async begin(turn: Turn): Promise<void> {
    const b = this.bridge;
    if (turn.finishing) return;
    // Detached while the press was held: nothing to start it on, so the microphone closes.
    if (!b) return this.finish(turn);
    try {
      const { taskId } = await b.invoke('voiceStart');
      turn.taskId = taskId;
      if (!turn.handsFree) {
        this.setReplyTask(taskId);
        this.replyDone = false;
      }
      this.sendHeld(turn);
    } catch (err) {
      console.warn('[voice] voiceStart failed', err);
      await turn.capture?.stop();
      if (this.turn === turn) this.turn = undefined;
      useVoice.getState().setPhase('idle');
      useVoice.getState().setHandsFree(false);
      return;
    }
    if (turn.released) await this.finish(turn);
  }

  /** Stop talking (button or Space up). */
  async release(): Promise<void> {
    const turn = this.turn;
    if (!turn || turn.released || turn.handsFree || turn.latched) return;
    // A click with local voice detection on: keep listening until the user stops speaking.
    if (turn.localVad && this.now() - turn.startedAt < MIN_PRESS_MS) {
      turn.latched = true;
      return;
    }
    return this.end(turn);
  }

  /** End a push-to-talk turn: what a release does (a press too short sends nothing). */
  private async end(turn: Turn): Promise<void> {
    if (turn.released || turn.handsFree) return;
    turn.released = true;
    turn.heldMs = this.now() - turn.startedAt;
    // Still opening the mic: press() finishes it when that is done.
    if (!turn.capture) return;
    if (turn.heldMs < MIN_PRESS_MS) return this.finish(turn);
    // Started (or starting, or long enough to start now): begin() finishes a released turn.
    if (turn.taskId) return this.finish(turn);
    return this.start(turn);
  }

  /**
   * Local voice detection on the turn's microphone: the end of speech ends the turn. When the
   * detector cannot run, the setting turns itself off with the reason, and the turn goes on
   * until it is released (or, if clicked, pressed again).
   */
  private watchSpeech(turn: Turn, capture: Capture): void {
    if (!capture.watchSpeech) {
      localVadFailed('not available in this window', true);
      return;
    }
    turn.speech = capture
      .watchSpeech(() => {
        if (this.turn === turn && !turn.finishing) void this.end(turn);
      })
      .then(
        (r) => (r.ok ? r.watch : Promise.reject(new Error(r.error))),
        (err: unknown) => Promise.reject(err instanceof Error ? err : new Error(String(err))),
      )
      .then(
        async (watch) => {
          if (!turn.finishing) return watch;
          await watch.stop();
          return undefined;
        },
        (err: Error) => {
          console.warn('[voice] local voice detection failed', err);
          localVadFailed(err.message, true);
          return undefined;
        },
      );
  }

  /**
   * The global shortcut (key-down only): the first press starts a push-to-talk turn, the next
   * ends it. Hands-free turns are the server's to end, so a press then does nothing.
   */
  async toggle(): Promise<void> {
    const turn = this.turn;
    if (!turn) return this.press();
    return this.end(turn);
  }

  /** The system's answer, asked once it says yes; an IPC failure leaves it to getUserMedia. */
  private async microphoneAllowed(): Promise<boolean> {
    if (!this.askMicrophone || this.micGranted) return true;
    try {
      this.micGranted = await this.askMicrophone();
    } catch (err) {
      console.warn('[voice] could not ask for the microphone', err);
      return true;
    }
    return this.micGranted;
  }

  async setHandsFree(on: boolean): Promise<void> {
    useVoice.getState().setHandsFree(on);
    const turn = this.turn;
    if (on) {
      if (!turn) await this.press(true);
      return;
    }
    if (turn?.handsFree) {
      turn.released = true;
      turn.heldMs = this.now() - turn.startedAt;
      if (turn.capture && turn.taskId) await this.finish(turn);
    }
  }

  /** Speak or play anything: reply audio of a new task (a text or SPEAK turn) takes over. */
  expectReply(taskId: string): void {
    if (this.replyTask && this.replyTask !== taskId) this.bargeIn();
    this.setReplyTask(taskId);
    this.replyDone = false;
  }

  private async finish(turn: Turn): Promise<void> {
    if (turn.finishing) return;
    turn.finishing = true;
    this.clock.clearTimeout(turn.holdTimer);
    turn.holdTimer = undefined;
    void turn.speech?.then((watch) => watch?.stop());
    await turn.capture?.stop();
    if (this.turn === turn) this.turn = undefined;
    const b = this.bridge;
    const voice = useVoice.getState();
    if (!turn.taskId || !b) {
      // Never started (a press too short, or no bridge): its audio goes nowhere.
      turn.pending = [];
      turn.pendingBytes = 0;
      voice.setPhase('idle');
      return;
    }
    // What the capture delivered while it stopped.
    this.sendHeld(turn);
    // This turn's reply is the one to play now; an older one still going is superseded.
    if (this.replyTask !== turn.taskId) {
      if (this.replyTask) this.bargeIn();
      this.setReplyTask(turn.taskId);
      this.replyDone = false;
    }
    voice.setPhase('thinking');
    clearTimeout(this.thinkingTimer);
    this.thinkingTimer = setTimeout(() => {
      if (useVoice.getState().phase === 'thinking') {
        this.replyDone = true;
        this.maybeIdle();
      }
    }, 30_000);
    await b.invoke('voiceEnd').catch((err: unknown) => {
      console.warn('[voice] voiceEnd failed', err);
      voice.setPhase('idle');
    });
    // Echo cancellation lets the next hands-free turn listen while this reply plays.
    if (turn.handsFree && useVoice.getState().handsFree && devicePrefs.echoCancellation())
      void this.press(true);
  }

  private onChunk(turn: Turn, pcm: ArrayBuffer): void {
    if (turn.finishing && !turn.taskId) return;
    if (turn.taskId) {
      this.send(pcm);
      return;
    }
    turn.pending.push(pcm);
    turn.pendingBytes += pcm.byteLength;
    // Bounded: a start that never answers keeps the latest audio, not all of it.
    while (turn.pendingBytes > MAX_HELD_AUDIO_BYTES && turn.pending.length > 1)
      turn.pendingBytes -= turn.pending.shift()!.byteLength;
  }

  private sendHeld(turn: Turn): void {
    for (const pcm of turn.pending.splice(0)) this.send(pcm);
    turn.pendingBytes = 0;
  }

  private send(pcm: ArrayBuffer): void {
    const b = this.bridge;
    if (!b) return;
    if (b.sendAudio) b.sendAudio(pcm);
    else void b.invoke('voiceChunk', pcm).catch(() => undefined);
  }

  private bargeIn(): void {
    const interrupted = this.replyTask;
    if (interrupted) this.blocked.add(interrupted);
    // Unapproved before the flush: the line plays none of it after the flush it carries.
    this.setReplyTask(undefined, interrupted);
    this.replyDone = false;
    this.engine.flush();
    if (this.blocked.size > 200) this.blocked.delete(this.blocked.values().next().value!);
  }

  private onAudio(taskId: string, sampleRate: number, pcm: ArrayBuffer): void {
    const listening = this.turn && !this.turn.handsFree;
    if (taskId !== this.replyTask) {
      if (this.blocked.has(taskId) || listening) {
        counters.droppedSamples += pcm.byteLength >> 1;
        return;
      }
      // A reply nobody announced (a typed message's): it supersedes the one playing.
      this.expectReply(taskId);
    }
    // The audio first: the phase change re-renders the page, which must not hold it back.
    void this.engine
      .play(taskId, sampleRate, pcm)
      .catch((err: unknown) => console.warn('[voice] playback failed', err));
    if (!this.turn) useVoice.getState().setPhase('speaking');
  }

  /** The line played a chunk by itself: the page catches up. */
  private onDirect(audio: DirectAudio): void {
    if (audio.superseded && audio.taskId !== this.replyTask) {
      const listening = this.turn && !this.turn.handsFree;
      // The page's own later word (a press, a barge-in) is on its way to the line and wins.
      if (listening || this.blocked.has(audio.taskId)) return;
      // A reply nobody announced took over on the line, as onAudio would have done here.
      const previous = this.replyTask;
      if (previous) this.blocked.add(previous);
      if (this.blocked.size > 200) this.blocked.delete(this.blocked.values().next().value!);
      this.setReplyTask(audio.taskId);
      this.replyDone = false;
    }
    this.engine.directPlayed?.(audio);
    if (!this.turn && audio.taskId === this.replyTask) useVoice.getState().setPhase('speaking');
  }

  private onListen(taskId: string, message: unknown): void {
    const state = (message as { state?: unknown } | null)?.state;
    const turn = this.turn;
    if (!turn || turn.taskId !== taskId) return;
    if (state === 'detecting' || state === 'start') {
      // The user started talking over a reply (hands-free with echo cancellation): barge in.
      if (!this.engine.idle) this.engine.flush();
    } else if (state === 'stop' && turn.handsFree) {
      turn.released = true;
      turn.heldMs = this.now() - turn.startedAt;
      void this.finish(turn);
    }
  }

  private maybeIdle(): void {
    const voice = useVoice.getState();
    if (this.turn) return;
    if (voice.phase !== 'thinking' && voice.phase !== 'speaking') return;
    if (!this.replyDone || !this.engine.idle) return;
    clearTimeout(this.thinkingTimer);
    voice.setPhase('idle');
    // Without echo cancellation the next hands-free turn waits for the reply to finish.
    if (voice.handsFree && !devicePrefs.echoCancellation()) void this.press(true);
  }
}
