/**
 * Turns on a robot session. The server's replies carry no turn id (`mcp/ai/message` and the audio
 * frames name nothing), so a reply belongs to the latest turn the user started; when the server
 * speaks first, or starts a new reply after finishing one, it gets a fresh task id of its own.
 *
 * Barge-in (a new turn, `interrupt()`): the reply being received ends as interrupted, its remaining
 * text is dropped until its `final`, and its remaining audio until the empty frame that ends that
 * playback (or the next `start_audio`, which begins a new one). A reply that had not started yet
 * cannot be told apart from the next one, so it is not dropped.
 *
 * The `final` is the reply (protocols/robot-rpc.md: "final is the whole reply"): a reply that comes
 * only as a `final` is delivered as its text, and a `final` that differs from the chunks wins.
 * One reply is open at a time, with at most `MAX_REPLY_CHARS` of text (kit/bounds.ts).
 */
import { Emitter } from '../../events.js';
import type { IdSource } from '../../ids.js';
import { MAX_REPLY_CHARS } from '../kit/bounds.js';
import type { SessionEvents } from '../session.js';
import { PCM_RATE, ReplyAudio } from './voice.js';

export type TurnEvents = Pick<
  SessionEvents,
  'replyDelta' | 'replyDone' | 'replyInterrupted' | 'thought' | 'audio'
> & {
  /** Something worth a log line. */
  odd: { message: string };
};

export class Turns {
  readonly events = new Emitter<TurnEvents>();
  /** The task replies are attributed to. */
  private turn: string | undefined;
  /** This turn's reply is complete: whatever the server says next is a new reply. */
  private done = false;
  /** Text of a reply begun (chunks or thoughts) and not yet finished. */
  private text: string | undefined;
  private dropText = false;
  /** The current reply was cut at MAX_REPLY_CHARS (said once). */
  private cutNoted = false;
  /** Thought text of the current reply so far. */
  private thoughtChars = 0;
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
    const held = this.text ?? '';
    const piece = this.fit(held, text);
    this.text = held + piece;
    if (piece) this.events.emit('replyDelta', { taskId, text: piece });
  }

  /**
   * `final` is the whole reply; the concatenated chunks stand in when it comes empty. What the
   * chunks have not shown yet goes out as a delta first, so a host that prints deltas prints a
   * final-only reply too; `replyDone` carries the final's text, which wins over the chunks.
   */
  final(text: string): void {
    if (this.dropText) {
      this.dropText = false;
      return;
    }
    const taskId = this.replyTask();
    const shown = this.text ?? '';
    const whole = text ? this.fit('', text) : shown;
    if (whole.startsWith(shown) && whole.length > shown.length)
      this.events.emit('replyDelta', { taskId, text: whole.slice(shown.length) });
    this.text = undefined;
    this.cutNoted = false;
    this.done = true;
    this.events.emit('replyDone', { taskId, text: whole });
  }

  /** `text` cut so the reply stays within MAX_REPLY_CHARS after `held` (once logged). */
  private fit(held: string, text: string): string {
    const room = MAX_REPLY_CHARS - held.length;
    if (text.length <= room) return text;
    if (!this.cutNoted) {
      this.cutNoted = true;
      this.events.emit('odd', {
        message: `the reply passed ${MAX_REPLY_CHARS} characters; the rest of it is dropped`,
      });
    }
    return text.slice(0, Math.max(0, room));
  }

  thought(text: string): void {
    if (this.dropText || !text) return;
    const taskId = this.replyTask();
    this.text ??= '';
    // Hosts add thoughts up, so they are bounded like the reply they belong to.
    const piece = text.slice(0, Math.max(0, MAX_REPLY_CHARS - this.thoughtChars));
    this.thoughtChars += piece.length;
    if (piece) this.events.emit('thought', { taskId, text: piece });
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
      this.cutNoted = false;
      this.thoughtChars = 0;
    }
    return this.turn;
  }
}
