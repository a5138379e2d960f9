/**
 * The conversation timeline: what the user said, what the assistant answered (streamed), every
 * tool call with its decision and outcome, and notices — kept in the core so any UI attaching
 * late (a reloaded window, a second browser tab) gets the same history from a snapshot.
 */
import type { AgentEvents } from '../agent.js';
import { redactParams } from '../audit/redact.js';
import type { Clock, TimerHandle } from '../clock.js';
import type { AssistantItem, ChatItem, ToolItem, UserItem } from '../contract/chat.js';
import type { ReminderView } from '../contract/reminders.js';
import { Emitter } from '../events.js';
import { type Disposable, DisposableStore } from '../lifecycle.js';

/** Oldest items are dropped past this; the audit log keeps the durable record of calls. */
export const TIMELINE_LIMIT = 500;

/**
 * A streamed item is sent to the UIs at most once per this window. Every emission carries the
 * whole item and each UI bridge serialises it, so sending one per delta is quadratic in the reply's
 * length (64 K one-character deltas came to ~2 GB serialised); 50 ms still reads as live typing.
 */
export const STREAM_EMIT_MS = 50;

/** The server's answer to LISTEN start ("开始监听", listening started). */
const LISTEN_ACK = /^\s*开始监听\s*$/;

/** An item whose streamed updates are being held back; `dirty` when one waits to be sent. */
interface StreamWindow {
  timer: TimerHandle;
  dirty: boolean;
}

export class Timeline implements Disposable {
  readonly events = new Emitter<{ chat: ChatItem }>();
  private readonly items = new Map<string, ChatItem>();
  private readonly windows = new Map<string, StreamWindow>();
  private readonly subscriptions = new DisposableStore();
  private disposed = false;
  private seq = 0;

  constructor(
    agentEvents: Pick<Emitter<AgentEvents>, 'on'>,
    private readonly clock: Clock,
  ) {
    const on: typeof agentEvents.on = (event, listener) =>
      this.subscriptions.add(agentEvents.on(event, listener));
    on('replyDelta', ({ id, taskId, text }) => {
      const item = this.assistant(id, taskId);
      this.append({ ...item, text: item.text + text });
    });
    on('replyDone', ({ id, taskId, text }) => {
      const item = this.assistant(id, taskId);
      this.put({ ...item, text: text || item.text, state: 'done' });
    });
    on('replyInterrupted', ({ id, taskId, text }) => {
      const existing = this.items.get(`a:${id}:${taskId}`);
      // A turn cut off before any reply leaves nothing to show; a reply that already ended
      // (the next turn supersedes its task) was not cut off.
      if ((!existing && !text) || (existing?.kind === 'assistant' && existing.state === 'done'))
        return;
      const item = this.assistant(id, taskId);
      this.put({ ...item, text: text || item.text, state: 'interrupted' });
    });
    on('thought', ({ id, taskId, text }) => {
      const item = this.assistant(id, taskId);
      this.append({ ...item, thought: (item.thought ?? '') + text });
    });
    // What the server heard: the voice bubble ("voice message, 3.2 s") shows these words instead.
    // Windowed like streamed text once the bubble is there: a server may send its transcript of a
    // turn again and again (partial results, or a flood), and only the newest words matter.
    on('transcript', ({ id, taskId, text }) => {
      const existing = this.items.get(`u:${id}:${taskId}`);
      if (existing?.kind !== 'user') this.user(id, taskId, text);
      else if (existing.text !== text) this.append({ ...existing, text });
    });
    // A mood is the reply's state like its text (the avatar has its own 'mood' event, at once):
    // windowed the same way, so a server sending moods between deltas, or a flood of them, cannot
    // make each one send the whole reply to every window.
    on('mood', ({ id, taskId, emoji }) => {
      const item = this.assistant(id, taskId);
      if (item.mood === emoji && this.items.has(item.id)) return;
      this.append({ ...item, mood: emoji });
    });
    on('callStarted', (e) => {
      this.put({
        kind: 'tool',
        id: `t:${e.key}`,
        at: e.at,
        connection: e.connection.id,
        service: e.service,
        callId: e.callId,
        // The card shows what the audit keeps (depth, size and strings bounded, secrets masked):
        // the raw params are the server's, and a snapshot serialises every item of the timeline.
        params: redactParams(e.params),
        state: 'running',
      });
    });
    on('callWaiting', (e) => {
      const item = this.items.get(`t:${e.key}`);
      if (item?.kind === 'tool') this.put({ ...item, state: 'waiting', summary: e.summary });
    });
    on('callFinished', (e) => {
      const item = this.items.get(`t:${e.key}`);
      if (item?.kind !== 'tool') return;
      const done: ToolItem = {
        ...item,
        state: 'done',
        summary: e.summary ?? item.summary,
        decision: e.decision,
        outcome: e.outcome,
        code: e.code,
        message: e.message,
        durationMs: e.durationMs,
        ...(e.waitMs !== undefined && { waitMs: e.waitMs }),
        ...(e.runMs !== undefined && { runMs: e.runMs }),
        auditSeq: e.auditSeq,
      };
      this.put(done);
    });
    // What the server says on STATUS goes into the conversation quietly (not as a toast). The VAD
    // "listening started" acknowledgement is left out: the mic button already shows it.
    on('status', ({ id, text }) => {
      if (LISTEN_ACK.test(text)) return;
      this.put({
        kind: 'notice',
        id: `n:${++this.seq}`,
        at: this.clock.now(),
        connection: id,
        level: 'info',
        text,
        from: 'server',
      });
    });
    on('notice', ({ level, message, connection, kind, words }) => {
      this.put({
        kind: 'notice',
        id: `n:${++this.seq}`,
        at: this.clock.now(),
        connection: connection?.id ?? '',
        level,
        text: message,
        ...(kind === 'protocol' && { technical: true as const }),
        ...(words && { words }),
      });
    });
  }

  /** Record what the user said (the host calls this when a turn is sent). */
  user(connection: string, taskId: string, text: string, voiceMs?: number): void {
    const id = `u:${connection}:${taskId}`;
    const existing = this.items.get(id);
    // A transcript may arrive before the voice turn is closed: keep its words.
    const kept = existing?.kind === 'user' ? existing : undefined;
    this.put({
      kind: 'user',
      id,
      at: kept?.at ?? this.clock.now(),
      connection,
      text: text || kept?.text || '',
      voiceMs: voiceMs ?? kept?.voiceMs,
    });
  }

  /** A reminder rang now, or (missed) fell due while the app was closed. */
  reminder(r: ReminderView, missed: boolean): void {
    this.put({
      kind: 'reminder',
      id: `r:${r.id}`,
      at: r.firedAt ?? this.clock.now(),
      connection: '',
      reminderId: r.id,
      reminderKind: r.kind,
      text: r.text,
      dueAt: r.dueAt,
      missed,
    });
  }

  list(): ChatItem[] {
    return [...this.items.values()];
  }

  /**
   * Stops listening and drops held-back updates: whoever still asks has `list()`, which is always
   * current, and no timer may fire into a timeline that has ended.
   */
  dispose(): void {
    this.disposed = true;
    this.subscriptions.dispose();
    for (const window of this.windows.values()) this.clock.clearTimeout(window.timer);
    this.windows.clear();
  }

  private assistant(connection: string, taskId: string): AssistantItem {
    const id = `a:${connection}:${taskId}`;
    const item = this.items.get(id);
    if (item?.kind === 'assistant') return item;
    return {
      kind: 'assistant',
      id,
      at: this.clock.now(),
      connection,
      taskId,
      text: '',
      state: 'streaming',
    };
  }

  /** Any change but streamed text: sent at once, so no UI sees it late or out of order. */
  private put(item: ChatItem): void {
    this.store(item);
    this.sendHeld(item.id);
    const window = this.windows.get(item.id);
    if (window) {
      // What was held back is part of the state sent now. A reply still streaming keeps its window,
      // so a change between deltas does not let the next delta through; a finished one ends it, so
      // a stale timer cannot send 'streaming' after 'done'.
      if (item.kind === 'assistant' && item.state === 'streaming') window.dirty = false;
      else this.endWindow(item.id);
    }
    this.events.emit('chat', item);
  }

  /**
   * Streamed text (reply, thought, transcript, mood): stored at once, so a snapshot is current, but sent at most
   * once per STREAM_EMIT_MS. The first update after a quiet spell goes out at once (the first words
   * show without delay) and opens a window; what comes within it is sent, newest only, when it
   * ends. Text arriving after the reply ended is held back the same way: the server decides how
   * much it sends, and the window only ever sends the newest state, so order cannot suffer.
   */
  private append(item: AssistantItem | UserItem): void {
    this.store(item);
    const window = this.windows.get(item.id);
    if (window) {
      window.dirty = true;
      return;
    }
    // Opened before emitting, so a listener that changes the item meanwhile finds the window.
    this.openWindow(item.id);
    this.events.emit('chat', item);
  }

  /**
   * Text other items hold back goes out before this change: the server said it first, and a
   * terminal prints in order. Their windows stay open, so this costs at most one update per item
   * the server adds, never one per delta.
   */
  private sendHeld(except: string): void {
    for (const [id, window] of this.windows) {
      if (id === except || !window.dirty) continue;
      window.dirty = false;
      const held = this.items.get(id);
      if (held) this.events.emit('chat', held);
    }
  }

  private openWindow(id: string): void {
    if (this.disposed) return;
    const window: StreamWindow = {
      timer: this.clock.setTimeout(() => this.windowEnded(id, window), STREAM_EMIT_MS),
      dirty: false,
    };
    this.windows.set(id, window);
  }

  private windowEnded(id: string, window: StreamWindow): void {
    if (this.windows.get(id) !== window) return;
    this.windows.delete(id);
    const item = this.items.get(id);
    if (!window.dirty || !item) return;
    // Still streaming: the next window starts now, so deltas keep being held back.
    this.openWindow(id);
    this.events.emit('chat', item);
  }

  private endWindow(id: string): void {
    const window = this.windows.get(id);
    if (!window) return;
    this.clock.clearTimeout(window.timer);
    this.windows.delete(id);
  }

  private store(item: ChatItem): void {
    this.items.set(item.id, item);
    if (this.items.size > TIMELINE_LIMIT) {
      const oldest = this.items.keys().next().value;
      if (oldest === undefined) return;
      this.items.delete(oldest);
      // A dropped item is gone from every UI's next snapshot: a held-back update must not revive it.
      this.endWindow(oldest);
    }
  }
}
