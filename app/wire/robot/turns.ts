/**
 * Turns on a robot session. The server's replies carry no turn id (`mcp/ai/message` and the audio
 * frames name nothing), so a reply belongs to the latest turn the user started; when the server
 * speaks first, or starts a new reply after finishing one, it gets a fresh task id of its own.
 *
 * Barge-in (a new turn, `interrupt()`): the reply being received ends as interrupted, its remaining
 * text is dropped until its `final`, and its remaining audio until the empty frame that ends that
 * playback (or the next `start_audio`, which begins a new one). A reply that had not started yet
 * cannot be told apart from the next one, so it is not dropped.
 */
import { Emitter } from '../../events.js';
import type { IdSource } from '../../ids.js';
import type { SessionEvents } from '../session.js';
import { PCM_RATE, ReplyAudio } from './voice.js';

export type TurnEvents = Pick<
  SessionEvents,
  'replyDelta' | 'replyDone' | 'replyInterrupted' | 'thought' | 'audio'
>;

export class Turns {
  readonly events = new Emitter<TurnEvents>();
  /** The task replies are attributed to. */
  private turn: string | undefined;
  /** This turn's reply is complete: whatever the server says next is a new reply. */
  private done = false;
  /** Text of a reply begun (chunks or thoughts) and not yet finished. */
  private text: string | undefined;
  private dropText = false;
  private playing = false;
  private dropAudio = false;
  private audioTask: string | undefined;
  private readonly downlink = new ReplyAudio();

  constructor(private readonly ids: IdSource) {}

  get currentTask(): string | undefined {
    return this.turn;
  }

  /** The user starts a turn: a fresh task id; the reply in progress is interrupted. */
  begin(): string {
    this.supersede();
    this.turn = this.ids.hex(8);
    this.done = false;
    return this.turn;
  }

  /** Barge-in: the reply in progress stops and its late text and audio are dropped. */
  supersede(): void {
    const old = this.turn;
    if (old !== undefined && !this.done) {
      // Told even when nothing had arrived yet, so whoever waits for this turn stops waiting.
      this.events.emit('replyInterrupted', { taskId: old, text: this.text ?? '' });
      if (this.text !== undefined) this.dropText = true;
    }
    if (this.playing) this.dropAudio = true;
    this.turn = undefined;
    this.text = undefined;
    this.done = false;
  }

  /** The link dropped: nothing more of this reply will come. */
  lost(): void {
    this.supersede();
    this.dropText = false;
    this.dropAudio = false;
    this.playing = false;
    this.audioTask = undefined;
  }

  chunk(text: string): void {
    if (this.dropText) return;
    const taskId = this.replyTask();
    this.text = (this.text ?? '') + text;
    if (text) this.events.emit('replyDelta', { taskId, text });
  }

  /** `final` is the whole reply; the concatenated chunks stand in when it comes empty. */
  final(text: string): void {
    if (this.dropText) {
      this.dropText = false;
      return;
    }
    const taskId = this.replyTask();
    const whole = text || this.text || '';
    this.text = undefined;
    this.done = true;
    this.events.emit('replyDone', { taskId, text: whole });
  }

  thought(text: string): void {
    if (this.dropText || !text) return;
    const taskId = this.replyTask();
    this.text ??= '';
    this.events.emit('thought', { taskId, text });
  }

  /** `mcp/server/start_audio`: a new playback begins (an interrupted one is over). */
  startAudio(): void {
    this.dropAudio = false;
    this.playing = true;
    this.downlink.reset();
    this.audioTask = this.turn ?? this.replyTask();
  }

  /**
   * One PCM frame. Returns true for audio that came without `start_audio` (played anyway: the
   * bytes can only be the reply's voice; the caller may note it).
   */
  audioFrame(frame: Buffer): boolean {
    if (this.dropAudio) return false;
    let unannounced = false;
    if (!this.playing) {
      this.startAudio();
      unannounced = true;
    }
    const piece = this.downlink.push(frame);
    if (piece && this.audioTask !== undefined)
      this.events.emit('audio', { taskId: this.audioTask, ...piece, sampleRate: PCM_RATE });
    return unannounced;
  }

  /**
   * The empty frame: the playback is over. A reply that was voice only (no text came, as from the
   * reference server's newer code) is complete now; one whose text has begun (a chunk or a
   * thought) waits for its `final`.
   */
  endAudio(): void {
    if (this.dropAudio) {
      this.dropAudio = false;
      this.playing = false;
      return;
    }
    if (!this.playing) return;
    this.playing = false;
    this.downlink.reset();
    if (
      this.audioTask === this.turn &&
      this.turn !== undefined &&
      !this.done &&
      this.text === undefined
    ) {
      this.done = true;
      this.events.emit('replyDone', { taskId: this.turn, text: '' });
    }
  }

  /** The task of the reply being received; a fresh one when none is open. */
  private replyTask(): string {
    if (this.turn === undefined || this.done) {
      this.turn = this.ids.hex(8);
      this.done = false;
      this.text = undefined;
    }
    return this.turn;
  }
}
