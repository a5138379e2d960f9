/** What the four reminder services share: the room check, adding, and how a reminder reads. */
import { LOCAL_CONNECTION, type ConnectionRef } from '../../contract/connection.js';
import type { ReminderView } from '../../contract/reminders.js';
import { MAX_PENDING, MAX_TEXT, type NewReminder, type Reminders } from '../reminders/reminders.js';
import { oneLine, shortLine } from '../../unsafe-chars.js';
import { ServiceFailure } from '../service.js';

/**
 * Server text as one quoted line of a prompt: nothing in it can reorder or hide words. Long
 * enough for a whole reminder, so the prompt shows all that will be stored, shown and spoken.
 */
export function quoted(text: string, max = MAX_TEXT): string {
  return `“${shortLine(text, max)}”`;
}

/**
 * A reminder's text as it is stored, shown in the prompt, the notification and the conversation,
 * and spoken: one line (line breaks and whitespace runs one space), without the control, bidi
 * and invisible characters that could hide words in a prompt and show them in a notification.
 */
export function reminderText(text: string): string {
  return oneLine(text).slice(0, MAX_TEXT);
}

/**
 * Whether `asking` may see (list) and cancel `r`: the user sees all; a server sees those it set
 * and those the user set from the window (the user's own, in the user's words) — never another
 * server's, whose text is what the user gave that server and could carry its words to this one.
 */
export function visibleTo(r: Pick<ReminderView, 'connection'>, asking: ConnectionRef): boolean {
  return (
    asking.id === LOCAL_CONNECTION.id ||
    r.connection.id === asking.id ||
    r.connection.id === LOCAL_CONNECTION.id
  );
}

function full(): ServiceFailure {
  return new ServiceFailure(
    'limit_reached',
    `${MAX_PENDING} reminders and timers are already waiting, the most this computer keeps; cancel one with cancel_reminder first`,
  );
}

/** Refuse before the user is asked when nothing more can be added. */
export function checkRoom(reminders: Reminders): void {
  if (reminders.pendingCount() >= MAX_PENDING) throw full();
}

export async function addReminder(reminders: Reminders, input: NewReminder): Promise<ReminderView> {
  try {
    return await reminders.add(input);
  } catch (err) {
    if (err instanceof RangeError) throw full();
    throw err;
  }
}

/** "the timer “tea”" / "the reminder “call mom”" / "the timer" */
export function nameOf(r: Pick<ReminderView, 'kind' | 'text'>): string {
  return `the ${r.kind}${r.text ? ` ${quoted(r.text)}` : ''}`;
}
