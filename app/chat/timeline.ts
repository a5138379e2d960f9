/**
 * The conversation timeline: what the user said, what the assistant answered (streamed), every
 * tool call with its decision and outcome, and notices — kept in the core so any UI attaching
 * late (a reloaded window, a second browser tab) gets the same history from a snapshot.
 */
import type { AgentEvents } from '../agent.js';
import { redactParams } from '../audit/redact.js';
import type { Clock } from '../clock.js';
import type { ChatItem, ToolItem } from '../contract/chat.js';
import type { ReminderView } from '../contract/reminders.js';
import { Emitter } from '../events.js';

/** Oldest items are dropped past this; the audit log keeps the durable record of calls. */
export const TIMELINE_LIMIT = 500;

/** The server's answer to LISTEN start ("开始监听", listening started). */
const LISTEN_ACK = /^\s*开始监听\s*$/;

export class Timeline {
  readonly events = new Emitter<{ chat: ChatItem }>();
  private readonly items = new Map<string, ChatItem>();
  private seq = 0;

  constructor(
    agentEvents: Pick<Emitter<AgentEvents>, 'on'>,
    private readonly clock: Clock,
  ) {
    agentEvents.on('replyDelta', ({ id, taskId, text }) => {
      const item = this.assistant(id, taskId);
      this.put({ ...item, text: item.text + text });
    });
    agentEvents.on('replyDone', ({ id, taskId, text }) => {
      const item = this.assistant(id, taskId);
      this.put({ ...item, text: text || item.text, state: 'done' });
    });
    agentEvents.on('replyInterrupted', ({ id, taskId, text }) => {
      const existing = this.items.get(`a:${id}:${taskId}`);
      // A turn cut off before any reply leaves nothing to show.
      if (!existing && !text) return;
      const item = this.assistant(id, taskId);
      this.put({ ...item, text: text || item.text, state: 'interrupted' });
    });
    agentEvents.on('thought', ({ id, taskId, text }) => {
      const item = this.assistant(id, taskId);
      this.put({ ...item, thought: (item.thought ?? '') + text });
    });
    // What the server heard: the voice bubble ("voice message, 3.2 s") shows these words instead.
    agentEvents.on('transcript', ({ id, taskId, text }) => {
      const existing = this.items.get(`u:${id}:${taskId}`);
      if (existing?.kind === 'user') this.put({ ...existing, text });
      else this.user(id, taskId, text);
    });
    agentEvents.on('mood', ({ id, taskId, emoji }) => {
      this.put({ ...this.assistant(id, taskId), mood: emoji });
    });
    agentEvents.on('callStarted', (e) => {
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
    agentEvents.on('callWaiting', (e) => {
      const item = this.items.get(`t:${e.key}`);
      if (item?.kind === 'tool') this.put({ ...item, state: 'waiting', summary: e.summary });
    });
    agentEvents.on('callFinished', (e) => {
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
        auditSeq: e.auditSeq,
      };
      this.put(done);
    });
    // What the server says on STATUS goes into the conversation quietly (not as a toast). The VAD
    // "listening started" acknowledgement is left out: the mic button already shows it.
    agentEvents.on('status', ({ id, text }) => {
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
    agentEvents.on('notice', ({ level, message, connection, kind }) => {
      this.put({
        kind: 'notice',
        id: `n:${++this.seq}`,
        at: this.clock.now(),
        connection: connection?.id ?? '',
        level,
        text: message,
        ...(kind === 'protocol' && { technical: true as const }),
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

  private assistant(connection: string, taskId: string): Extract<ChatItem, { kind: 'assistant' }> {
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

  private put(item: ChatItem): void {
    this.items.set(item.id, item);
    if (this.items.size > TIMELINE_LIMIT) {
      const oldest = this.items.keys().next().value;
      if (oldest !== undefined) this.items.delete(oldest);
    }
    this.events.emit('chat', item);
  }
}
