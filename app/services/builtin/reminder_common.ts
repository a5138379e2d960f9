/** What the four reminder services share: the room check, adding, and how a reminder reads. */
import type { ReminderView } from '../../contract/reminders.js';
import { MAX_PENDING, type NewReminder, type Reminders } from '../reminders/reminders.js';
import { shortLine } from '../../unsafe-chars.js';
import { ServiceFailure } from '../service.js';

/** Server text as one short quoted line of a prompt: nothing in it can reorder or hide words. */
export function quoted(text: string, max = 80): string {
  return `“${shortLine(text, max)}”`;
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
