/**
 * The terminal host's side of reminders: one line when one rings, and at start one line for each
 * that fell due while no agent was running (they are never dropped silently). Read from the core's
 * contract like everything else the terminal prints.
 */
import type { CoreApi } from '../../app/api.js';
import type { ReminderView } from '../../app/contract/reminders.js';
import type { Printer } from './printer.js';
import { oneLine } from './terminal-text.js';

/** Where the terminal's own lines go (the Printer, or a test's list). */
export type LineOutput = Pick<Printer, 'info' | 'notice'>;

/** One line; the text came from a server, so it is kept to one escaped line. */
export function reminderLine(r: ReminderView): string {
  const what = r.kind === 'timer' ? `timer${r.text ? `: ${r.text}` : ''}` : `reminder: ${r.text}`;
  const due = new Date(r.dueAt).toLocaleString();
  return oneLine(`${what} (due ${due}, set by ${r.connection.name})`);
}

/**
 * Print reminders as they ring, and the ones the core found missed at its start (they are in the
 * conversation as missed); resolves with the unsubscribe function.
 */
export async function printReminders(
  api: Pick<CoreApi, 'events' | 'snapshot' | 'listReminders'>,
  out: LineOutput,
): Promise<() => void> {
  const off = api.events.on('reminder', ({ reminder }) => out.info(`⏰ ${reminderLine(reminder)}`));
  const missed = new Set<string>();
  for (const item of (await api.snapshot()).chat)
    if (item.kind === 'reminder' && item.missed) missed.add(item.reminderId);
  for (const r of await api.listReminders())
    if (missed.has(r.id))
      out.notice('warn', `⏰ missed while the agent was not running — ${reminderLine(r)}`);
  return off;
}
