/**
 * Turns on an Advent session (protocols/advent.md §6): which task is current, how a reply is
 * assembled from TEXT pieces, and which frames are dropped because their task was superseded.
 *
 * Bounded whatever the server sends (kit/bounds.ts): a server inventing task ids opens at most
 * `MAX_OPEN_REPLIES` replies (the oldest is closed as interrupted to make room, and its later
 * frames are dropped), and one reply keeps at most `MAX_REPLY_CHARS` of text.
 */
import { TextDecoder } from 'node:util';
import { Emitter } from '../../events.js';
import type { IdSource } from '../../ids.js';
import { MAX_NAME_CHARS, MAX_OPEN_REPLIES, MAX_REPLY_CHARS, cutString } from '../kit/bounds.js';
import { type Frame, FrameType, SYSTEM_TASK, taskKey } from './frame.js';

export type TurnEvents = {
  /** A piece of the assistant's reply text, decoded (a character split across frames is joined). */
  replyDelta: { taskId: string; text: string };
  /** END_FRAME for a task: its reply is complete. */
  replyDone: { taskId: string; text: string };
  /** A newer turn replaced this one before its reply finished. */
  replyInterrupted: { taskId: string; text: string };
  mood: { taskId: string; emoji: string };
  /**
   * Reply audio. From Turns: the AUDIO_FRAME bytes (whole 16-bit samples unless `rawAudio`).
   * From the session: always PCM s16le mono at `sampleRate` (Opus is decoded in between).
   */
  audio: { taskId: string; seq: number; data: Buffer; sampleRate?: number };
  listen: { taskId: string; message: unknown };
  /** A frame we could not make sense of, for the log. */
  odd: { message: string };
};

interface Reply {
  decoder: TextDecoder;
  text: string;
  /** The text reached MAX_REPLY_CHARS: the rest of this reply is dropped. */
  full: boolean;
  /** Odd trailing byte of the last audio chunk, carried to the next. */
  carry: Buffer | undefined;
}

/** How many superseded task ids we remember, to drop their late frames. */
const SUPERSEDED_MEMORY = 64;

export class Turns {
  readonly events = new Emitter<TurnEvents>();
  private active: string | undefined;
  private readonly replies = new Map<string, Reply>();
  private readonly superseded = new Set<string>();
  /** Replies closed to make room (see dropOldestReply), and replies cut at the text bound. */
  private dropped = 0;
  private cut = 0;

  constructor(
    private readonly ids: IdSource,
    /** Opus replies: pass the bytes as they come (a packet may have any length). */
    private readonly rawAudio = false,
  ) {}

  get activeTask(): string | undefined {
    return this.active;
  }

  /** A fresh 8-character task id that becomes the current turn; the previous one is superseded. */
  begin(): string {
    let id = this.ids.hex(8);
    while (id === SYSTEM_TASK || this.superseded.has(id)) id = this.ids.hex(8);
    this.supersede();
    this.active = id;
    return id;
  }

  /** Barge-in or a new turn: the current reply stops and its late frames are dropped. */
  supersede(): void {
    const old = this.active;
    if (old === undefined) return;
    this.active = undefined;
    this.remember(old);
    // Reported even when no reply had started, so whoever waits for this turn stops waiting.
    const reply = this.replies.get(old);
    this.replies.delete(old);
    this.events.emit('replyInterrupted', { taskId: old, text: reply ? this.finalText(reply) : '' });
  }

  /** The link dropped: every open reply ends as interrupted, and the current turn with it. */
  interruptAll(): void {
    this.supersede();
    for (const [taskId, reply] of [...this.replies]) {
      this.replies.delete(taskId);
      this.events.emit('replyInterrupted', { taskId, text: this.finalText(reply) });
    }
  }

  private finalText(reply: Reply): string {
    return reply.full ? reply.text : reply.text + reply.decoder.decode();
  }

  /** Route a reply frame (TEXT, AUDIO_FRAME, END_FRAME, EMOJI, LISTEN). MCP and STATUS go elsewhere. */
  handle(frame: Frame): void {
    const task = taskKey(frame.taskId);
    // System frames are always delivered; frames of a superseded task never are.
    if (task !== SYSTEM_TASK && this.superseded.has(task)) return;
    switch (frame.type) {
      case FrameType.TEXT: {
        const reply = this.reply(task);
        if (reply.full) return;
        let text = reply.decoder.decode(frame.payload, { stream: true });
        const room = MAX_REPLY_CHARS - reply.text.length;
        if (text.length > room) {
          text = text.slice(0, room);
          reply.full = true;
          this.cut += 1;
          if (Number.isInteger(Math.log10(this.cut)))
            this.events.emit('odd', {
              message: `the reply of task '${task}' passed ${MAX_REPLY_CHARS} characters; the rest of it is dropped (${this.cut} replies cut so far)`,
            });
        }
        if (text) {
          reply.text += text;
          this.events.emit('replyDelta', { taskId: task, text });
        }
        return;
      }
      case FrameType.AUDIO: {
        const reply = this.reply(task);
        let data = frame.payload;
        if (reply.carry) {
          data = Buffer.concat([reply.carry, data]);
          reply.carry = undefined;
        }
        if (!this.rawAudio && data.length % 2 === 1) {
          reply.carry = Buffer.from(data.subarray(data.length - 1));
          data = data.subarray(0, data.length - 1);
        }
        if (data.length) this.events.emit('audio', { taskId: task, seq: frame.seq, data });
        return;
      }
      case FrameType.END: {
        const reply = this.replies.get(task);
        this.replies.delete(task);
        // Ended before anyone hears of it: a listener may start the next turn at once (piped
        // lines in the terminal), and begin() would take this one for cut off.
        if (this.active === task) this.active = undefined;
        const tail = reply && !reply.full ? reply.decoder.decode() : '';
        if (tail) this.events.emit('replyDelta', { taskId: task, text: tail });
        this.events.emit('replyDone', { taskId: task, text: (reply?.text ?? '') + tail });
        return;
      }
      case FrameType.EMOJI: {
        const emoji = parseEmoji(frame.payload);
        // The timeline keeps every mood: a face, never a document.
        if (emoji)
          this.events.emit('mood', { taskId: task, emoji: cutString(emoji, MAX_NAME_CHARS) });
        else
          this.events.emit('odd', { message: `unreadable EMOJI frame: ${preview(frame.payload)}` });
        return;
      }
      case FrameType.LISTEN: {
        try {
          this.events.emit('listen', {
            taskId: task,
            message: JSON.parse(frame.payload.toString('utf8')),
          });
        } catch {
          this.events.emit('odd', {
            message: `unreadable LISTEN frame: ${preview(frame.payload)}`,
          });
        }
        return;
      }
      default:
        this.events.emit('odd', {
          message: `unexpected frame type ${frame.type} on task '${task}'`,
        });
    }
  }

  private reply(task: string): Reply {
    let reply = this.replies.get(task);
    if (!reply) {
      if (this.replies.size >= MAX_OPEN_REPLIES) this.dropOldestReply();
      reply = { decoder: new TextDecoder('utf-8'), text: '', full: false, carry: undefined };
      this.replies.set(task, reply);
    }
    return reply;
  }

  /** Room for one more reply: the oldest open one (not the current turn's) ends here. */
  private dropOldestReply(): void {
    for (const [taskId, reply] of this.replies) {
      if (taskId === this.active) continue;
      this.replies.delete(taskId);
      this.remember(taskId);
      // One line per power of ten: a server inventing task ids must not flood the log either.
      this.dropped += 1;
      if (Number.isInteger(Math.log10(this.dropped)))
        this.events.emit('odd', {
          message: `more than ${MAX_OPEN_REPLIES} replies were open at once; the oldest was closed and its later frames are dropped (task '${taskId}'; ${this.dropped} closed so far)`,
        });
      this.events.emit('replyInterrupted', { taskId, text: reply.text });
      return;
    }
  }

  private remember(taskId: string): void {
    this.superseded.add(taskId);
    if (this.superseded.size > SUPERSEDED_MEMORY) {
      const oldest = this.superseded.values().next().value;
      if (oldest !== undefined) this.superseded.delete(oldest);
    }
  }

  /** Characters of reply text held now (tests check the bound). */
  get heldChars(): number {
    let n = 0;
    for (const reply of this.replies.values()) n += reply.text.length;
    return n;
  }

  get openReplies(): number {
    return this.replies.size;
  }
}

function parseEmoji(payload: Buffer): string | undefined {
  try {
    const msg: unknown = JSON.parse(payload.toString('utf8'));
    if (msg && typeof msg === 'object' && typeof (msg as { emoji?: unknown }).emoji === 'string') {
      return (msg as { emoji: string }).emoji;
    }
  } catch {
    // fall through
  }
  return undefined;
}

export function preview(payload: Buffer, max = 120): string {
  // Only the start is decoded: a payload may be megabytes.
  const text = payload.subarray(0, max * 4).toString('utf8');
  return text.length > max || payload.length > max * 4 ? `${text.slice(0, max)}…` : text;
}
