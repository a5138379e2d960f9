/**
 * Turns on a XiaoZhi session. The protocol has no task ids: the server talks about "the current
 * exchange". So the agent gives each turn its own id (typed text, a voice turn, or one the server
 * starts by itself) and maps every server message to the turn it must belong to:
 *
 * - `stt` / `llm` → the current turn (a server-initiated one is created when there is none);
 * - `tts start` … `sentence_start` … `stop` → one reply, owned by the current turn;
 * - after a barge-in the reply still streaming belongs to a superseded turn: everything of it
 *   (subtitles, audio, its `stop`) is dropped until the server starts a new reply.
 *
 * One reply is open at a time, and it keeps at most `MAX_REPLY_CHARS` of text (kit/bounds.ts):
 * subtitles past that are dropped, once logged.
 */
import { Emitter } from '../../events.js';
import type { IdSource } from '../../ids.js';
import { MAX_REPLY_CHARS } from '../kit/bounds.js';

export type TurnEvents = {
  replyDelta: { taskId: string; text: string };
  replyDone: { taskId: string; text: string };
  replyInterrupted: { taskId: string; text: string };
  transcript: { taskId: string; text: string };
  mood: { taskId: string; emoji: string };
  /** Something worth a log line. */
  odd: { message: string };
};

interface Reply {
  taskId: string;
  text: string;
  /** The text reached MAX_REPLY_CHARS: later subtitles are dropped. */
  full?: boolean;
}

/** How many superseded ids are remembered so a fresh id never repeats one. */
const SUPERSEDED_MEMORY = 64;

export class Turns {
  readonly events = new Emitter<TurnEvents>();
  private current: string | undefined;
  private reply: Reply | undefined;
  /** The server's reply now streaming was superseded: drop it until its stop or a new start. */
  private muted = false;
  private readonly superseded = new Set<string>();

  constructor(private readonly ids: IdSource) {}

  get currentTask(): string | undefined {
    return this.current;
  }

  /** A reply is streaming for a turn still current (barge-in has something to stop). */
  get playing(): boolean {
    return this.reply !== undefined;
  }

  /** The turn the reply now streaming belongs to (undefined while muted or idle). */
  get replyTask(): string | undefined {
    return this.muted ? undefined : this.reply?.taskId;
  }

  /** A user turn (typed or voice) under a fresh id; the previous one is superseded. */
  begin(): string {
    this.supersede();
    this.current = this.freshId();
    return this.current;
  }

  /**
   * Barge-in, a cancelled turn or a new one: the current turn ends as interrupted (even without a
   * reply yet, so whoever waits for it stops waiting) and a reply still streaming is muted.
   * Returns whether a reply was playing (the caller then tells the server to stop it).
   */
  supersede(): boolean {
    const wasPlaying = this.reply !== undefined;
    const reply = this.reply;
    this.reply = undefined;
    if (wasPlaying) this.muted = true;
    const ended = new Set<string>();
    if (reply) ended.add(reply.taskId);
    if (this.current !== undefined) ended.add(this.current);
    for (const taskId of ended) {
      this.remember(taskId);
      this.events.emit('replyInterrupted', {
        taskId,
        text: reply?.taskId === taskId ? reply.text : '',
      });
    }
    this.current = undefined;
    return wasPlaying;
  }

  /** The link dropped: nothing of the old exchange will come; nothing is muted on the next. */
  interruptAll(): void {
    this.supersede();
    this.muted = false;
  }

  transcript(text: string): void {
    this.events.emit('transcript', { taskId: this.turn(), text });
  }

  mood(emoji: string): void {
    this.events.emit('mood', { taskId: this.reply?.taskId ?? this.turn(), emoji });
  }

  /** `tts start`: the server begins a reply (a new one, even after a muted one). */
  start(): void {
    this.muted = false;
    if (this.reply) return; // a repeated start continues the same reply
    this.reply = { taskId: this.turn(), text: '' };
  }

  /** `tts sentence_start`: one subtitle of the reply. */
  sentence(text: string): void {
    if (this.muted || !text) return;
    const reply = this.ensureReply();
    if (reply.full) return;
    // Sentences of Latin text need a space between them; CJK text needs none.
    let piece =
      reply.text && /[\x21-\x7e]$/.test(reply.text) && /^[\x21-\x7e]/.test(text)
        ? ` ${text}`
        : text;
    const room = MAX_REPLY_CHARS - reply.text.length;
    if (piece.length > room) {
      piece = piece.slice(0, room);
      reply.full = true;
      this.events.emit('odd', {
        message: `the reply passed ${MAX_REPLY_CHARS} characters; the rest of its subtitles are dropped`,
      });
    }
    if (!piece) return;
    reply.text += piece;
    this.events.emit('replyDelta', { taskId: reply.taskId, text: piece });
  }

  /** `tts stop`: the reply is complete (or the stop of a muted one, which is only unmuted). */
  stop(): void {
    if (this.muted) {
      this.muted = false;
      return;
    }
    const reply = this.reply;
    if (!reply) return;
    this.reply = undefined;
    if (this.current === reply.taskId) this.current = undefined;
    this.events.emit('replyDone', { taskId: reply.taskId, text: reply.text });
  }

  /** The task reply audio belongs to now, or undefined to drop it (muted). */
  audioTask(): string | undefined {
    if (this.muted) return undefined;
    // Some servers send audio before (or without) `tts start`.
    return this.ensureReply().taskId;
  }

  private ensureReply(): Reply {
    if (!this.reply) this.start();
    return this.reply!;
  }

  /** The current turn, or a server-initiated one when the user has none open. */
  private turn(): string {
    this.current ??= this.freshId();
    return this.current;
  }

  private freshId(): string {
    let id = this.ids.hex(8);
    while (this.superseded.has(id) || id === this.current) id = this.ids.hex(8);
    return id;
  }

  private remember(taskId: string): void {
    this.superseded.add(taskId);
    if (this.superseded.size > SUPERSEDED_MEMORY) {
      const oldest = this.superseded.values().next().value;
      if (oldest !== undefined) this.superseded.delete(oldest);
    }
  }
}
