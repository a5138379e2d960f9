import type { Decision, Outcome } from './audit.js';
import type { ErrorCode } from './errors.js';
import type { NoticeWords } from './notice.js';
import type { ReminderKind } from './reminders.js';

/** One entry of the conversation timeline (DESIGN §2 chat/). Sent whole on every change (upsert by id). */
export type ChatItem = UserItem | AssistantItem | ToolItem | NoticeItem | ReminderItem;

interface Base {
  id: string;
  /** Epoch ms the item started. */
  at: number;
  /** Connection id, or '' for items not tied to one. */
  connection: string;
}

export interface UserItem extends Base {
  kind: 'user';
  text: string;
  /** A voice turn: its length; `text` is filled in if the server sends a transcript. */
  voiceMs?: number;
}

export interface AssistantItem extends Base {
  kind: 'assistant';
  taskId: string;
  text: string;
  state: 'streaming' | 'done' | 'interrupted';
  mood?: string;
  /** The AI's reasoning (robot servers send it), shown folded under the reply. */
  thought?: string;
}

export interface ToolItem extends Base {
  kind: 'tool';
  service: string;
  callId: string;
  params: unknown;
  summary?: string;
  state: 'running' | 'waiting' | 'done';
  decision?: Decision;
  outcome?: Outcome;
  code?: ErrorCode;
  message?: string;
  durationMs?: number;
  /** Of that, how long the user took to answer its question, and how long the service ran. */
  waitMs?: number;
  runMs?: number;
  auditSeq?: number;
}

export interface NoticeItem extends Base {
  kind: 'notice';
  level: 'info' | 'warn' | 'error';
  text: string;
  /** A technical line from the connection's protocol handling: shown folded under a human line. */
  technical?: true;
  /** Said by the server itself (its STATUS text), not by the agent. */
  from?: 'server';
  /** The agent's own notice in words for people: shown translated instead of `text`. */
  words?: NoticeWords;
}

/** A reminder or timer rang, or was found missed at start (it fell due while the app was closed). */
export interface ReminderItem extends Base {
  kind: 'reminder';
  reminderId: string;
  reminderKind: ReminderKind;
  text: string;
  dueAt: number;
  missed: boolean;
}
