/**
 * The terminal host's side of reminders: one line when one rings, and at start one line for each
 * that fell due while no agent was running (they are never dropped silently).
 */
import type { Agent } from '../../app/agent.js';
import type { ReminderView } from '../../app/contract/reminders.js';

export interface ReminderOutput {
  info(text: string): void;
  notice(level: 'info' | 'warn' | 'error', message: string): void;
}

export function reminderLine(r: ReminderView): string {
  const what = r.kind === 'timer' ? `timer${r.text ? `: ${r.text}` : ''}` : `reminder: ${r.text}`;
  const due = new Date(r.dueAt).toLocaleString();
  return `${what} (due ${due}, set by ${r.connection.name})`;
}

/** Print reminders as they ring and the missed ones now; returns the unsubscribe function. */
export function printReminders(
  agent: Pick<Agent, 'events' | 'reminders'>,
  out: ReminderOutput,
): () => void {
  for (const r of agent.reminders.missedAtStart())
    out.notice('warn', `⏰ missed while the agent was not running — ${reminderLine(r)}`);
  return agent.events.on('reminderFired', (r) => out.info(`⏰ ${reminderLine(r)}`));
}
