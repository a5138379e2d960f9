/**
 * Reminders and timers: kept in the data folder (`reminders.json`, written atomically), rung on
 * the injected clock whether or not any server is connected, and never lost silently — one that
 * fell due while the app was closed is marked `missed` at the next start and reported then.
 *
 * Bounded: at most MAX_PENDING waiting, MAX_TEXT characters each, MAX_DONE rung/missed kept for
 * the list (oldest dropped). One timer at a time, for the earliest due, re-armed at most
 * MAX_WAIT_MS ahead so a computer waking from sleep rings what fell due within a minute.
 */
import type { Clock, TimerHandle } from '../../clock.js';
import type { ConnectionRef } from '../../contract/connection.js';
import type { AgentNotice } from '../../contract/notice.js';
import type { ReminderKind, ReminderState, ReminderView } from '../../contract/reminders.js';
import { Emitter } from '../../events.js';
import { type IdSource, cryptoIds } from '../../ids.js';
import { oneLine } from '../../unsafe-chars.js';
import {
  errorText,
  keepAside,
  readBoundedText,
  type BoundedText,
  writeFileAtomic,
} from '../../settings/atomic.js';

export const MAX_PENDING = 50;
export const MAX_TEXT = 200;
export const MAX_DONE = 50;
/** The longest a single clock timer is set for; longer waits re-arm. */
export const MAX_WAIT_MS = 60_000;
/** A reminder may be set at most this far ahead. */
export const MAX_AHEAD_MS = 366 * 24 * 3600 * 1000;

export type RemindersEvents = {
  /** A reminder rang now. */
  fired: ReminderView;
  /** The list changed (added, rang, cancelled, cleared). */
  changed: ReminderView[];
};

export interface RemindersOptions {
  file: string;
  clock: Clock;
  ids?: IdSource;
  /**
   * A problem worth telling the user (a damaged file set aside, a failed save): its English
   * sentence and the words a window translates.
   */
  warn?: (notice: AgentNotice) => void;
}

export interface NewReminder {
  kind: ReminderKind;
  text: string;
  dueAt: number;
  connection: ConnectionRef;
}

interface FileShape {
  version: 1;
  reminders: ReminderView[];
}

export class Reminders {
  readonly events = new Emitter<RemindersEvents>();
  private items: ReminderView[] = [];
  private timer: TimerHandle | undefined;
  private writing: Promise<void> = Promise.resolve();
  private closed = false;
  /** Those found overdue when the file was opened: the app was closed when they fell due. */
  private missed: ReminderView[] = [];

  private constructor(private readonly options: RemindersOptions) {}

  static async open(options: RemindersOptions): Promise<Reminders> {
    const reminders = new Reminders(options);
    await reminders.load();
    reminders.arm();
    return reminders;
  }

  /** Newest due last: pending first by due time, then the rung and missed ones, newest first. */
  list(): ReminderView[] {
    const pending = this.items
      .filter((r) => r.state === 'pending')
      .sort((a, b) => a.dueAt - b.dueAt);
    const done = this.items
      .filter((r) => r.state !== 'pending')
      .sort((a, b) => (b.firedAt ?? b.dueAt) - (a.firedAt ?? a.dueAt));
    return [...pending, ...done].map((r) => ({ ...r }));
  }

  get(id: string): ReminderView | undefined {
    const r = this.items.find((x) => x.id === id);
    return r && { ...r };
  }

  /** Reminders that fell due while the app was closed, found at open (reported once by the host). */
  missedAtStart(): ReminderView[] {
    return this.missed.map((r) => ({ ...r }));
  }

  pendingCount(): number {
    return this.items.filter((r) => r.state === 'pending').length;
  }

  /** Adds and saves; throws a RangeError naming the bound that was hit. */
  async add(input: NewReminder): Promise<ReminderView> {
    if (this.pendingCount() >= MAX_PENDING)
      throw new RangeError(`${MAX_PENDING} reminders are already waiting`);
    const now = this.options.clock.now();
    const reminder: ReminderView = {
      id: this.freshId(),
      kind: input.kind,
      text: storedText(input.text),
      dueAt: input.dueAt,
      createdAt: now,
      state: 'pending',
      connection: { id: input.connection.id, name: input.connection.name },
    };
    this.items.push(reminder);
    await this.save();
    this.arm();
    this.changed();
    return { ...reminder };
  }

  /**
   * Cancel a pending reminder, or clear a rung or missed one from the list. Returns what it was,
   * or undefined for an id that is not there.
   */
  async cancel(id: string): Promise<ReminderView | undefined> {
    const at = this.items.findIndex((r) => r.id === id);
    if (at < 0) return undefined;
    const [removed] = this.items.splice(at, 1);
    this.missed = this.missed.filter((r) => r.id !== id);
    await this.save();
    this.arm();
    this.changed();
    return { ...removed!, state: removed!.state === 'pending' ? 'cancelled' : removed!.state };
  }

  /** Stop the timer; pending reminders stay saved for the next start. */
  async close(): Promise<void> {
    this.closed = true;
    this.options.clock.clearTimeout(this.timer);
    this.timer = undefined;
    await this.writing;
  }

  // -------------------------------------------------------------------------------------------

  private freshId(): string {
    const ids = this.options.ids ?? cryptoIds;
    for (;;) {
      const id = `r-${ids.hex(8)}`;
      if (!this.items.some((r) => r.id === id)) return id;
    }
  }

  private async load(): Promise<void> {
    const { file, clock } = this.options;
    let read: BoundedText;
    try {
      read = await readBoundedText(file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw err;
    }
    const parsed = 'text' in read ? parseFile(read.text) : undefined;
    if (!parsed) {
      const aside = await keepAside(file, clock.now());
      this.options.warn?.({
        message: `the reminders file was damaged and was moved aside to ${aside}`,
        words: { key: 'notice.remindersSetAside', params: { keptAs: aside } },
      });
      return;
    }
    this.items = parsed;
    const now = clock.now();
    let changed = false;
    for (const r of this.items) {
      if (r.state === 'pending' && r.dueAt <= now) {
        r.state = 'missed';
        r.firedAt = now;
        this.missed.push({ ...r });
        changed = true;
      }
    }
    this.trimDone();
    if (changed) await this.save();
  }

  /** One timer, for the earliest pending reminder. */
  private arm(): void {
    const { clock } = this.options;
    clock.clearTimeout(this.timer);
    this.timer = undefined;
    if (this.closed) return;
    let next: number | undefined;
    for (const r of this.items)
      if (r.state === 'pending' && (next === undefined || r.dueAt < next)) next = r.dueAt;
    if (next === undefined) return;
    const wait = Math.min(Math.max(0, next - clock.now()), MAX_WAIT_MS);
    this.timer = clock.setTimeout(() => {
      this.timer = undefined;
      this.ring();
    }, wait);
  }

  private ring(): void {
    if (this.closed) return;
    const now = this.options.clock.now();
    const due = this.items
      .filter((r) => r.state === 'pending' && r.dueAt <= now)
      .sort((a, b) => a.dueAt - b.dueAt);
    for (const r of due) {
      r.state = 'fired';
      r.firedAt = now;
    }
    if (due.length) {
      this.trimDone();
      // Ring first, save after: a slow disk must not delay the reminder.
      for (const r of due) this.events.emit('fired', { ...r });
      void this.save();
      this.changed();
    }
    this.arm();
  }

  private trimDone(): void {
    const done = this.items
      .filter((r) => r.state !== 'pending')
      .sort((a, b) => (b.firedAt ?? b.dueAt) - (a.firedAt ?? a.dueAt));
    if (done.length <= MAX_DONE) return;
    const drop = new Set(done.slice(MAX_DONE).map((r) => r.id));
    this.items = this.items.filter((r) => !drop.has(r.id));
  }

  private changed(): void {
    this.events.emit('changed', this.list());
  }

  /** Saves queue behind each other, so the file always ends up with the latest list. */
  private save(): Promise<void> {
    const data: FileShape = { version: 1, reminders: this.items };
    const text = `${JSON.stringify(data, null, 2)}\n`;
    this.writing = this.writing.then(() =>
      writeFileAtomic(this.options.file, text, { ids: this.options.ids }).catch((err: unknown) => {
        const reason = errorText(err);
        this.options.warn?.({
          message: `reminders could not be saved: ${reason}`,
          words: { key: 'notice.remindersNotSaved', params: { reason } },
        });
      }),
    );
    return this.writing;
  }
}

/**
 * One line without control, bidi or invisible characters, at most MAX_TEXT: what the prompt
 * showed is what the notification, the conversation and the voice say (also for a file written
 * before texts were cleaned, or edited by hand).
 */
function storedText(text: string): string {
  return oneLine(text).slice(0, MAX_TEXT);
}

const STATES: readonly ReminderState[] = ['pending', 'fired', 'missed'];

/** The saved list, with anything malformed left out; undefined when the file is not ours at all. */
function parseFile(text: string): ReminderView[] | undefined {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return undefined;
  }
  const list = (json as { reminders?: unknown } | null)?.reminders;
  if (!Array.isArray(list)) return undefined;
  const out: ReminderView[] = [];
  for (const item of list.slice(0, MAX_PENDING + MAX_DONE)) {
    const r = item as Partial<ReminderView> | null;
    if (
      !r ||
      typeof r.id !== 'string' ||
      !/^r-[0-9a-f]{8}$/.test(r.id) ||
      (r.kind !== 'timer' && r.kind !== 'reminder') ||
      typeof r.text !== 'string' ||
      typeof r.dueAt !== 'number' ||
      typeof r.createdAt !== 'number' ||
      !STATES.includes(r.state as ReminderState) ||
      typeof r.connection?.id !== 'string' ||
      typeof r.connection?.name !== 'string'
    )
      continue;
    out.push({
      id: r.id,
      kind: r.kind,
      text: storedText(r.text),
      dueAt: r.dueAt,
      createdAt: r.createdAt,
      state: r.state as ReminderState,
      ...(typeof r.firedAt === 'number' ? { firedAt: r.firedAt } : {}),
      connection: { id: r.connection.id.slice(0, 64), name: r.connection.name.slice(0, 100) },
    });
  }
  return out;
}
