import type { ReminderView } from '../../contract/reminders.js';
import { oneLine } from '../../unsafe-chars.js';

/**
 * The sentence a connection's voice says when a reminder rings (Advent `SPEAK` says it verbatim),
 * in the app's language. The window speaks its own translated text instead.
 */
export function spokenReminder(r: Pick<ReminderView, 'kind' | 'text'>, language: string): string {
  // One line, nothing hidden: a voice reads what the prompt showed, never words tucked after it.
  const text = oneLine(r.text);
  if (language === 'zh-CN') {
    if (r.kind === 'timer') return text ? `时间到：${text}。` : '时间到。';
    return `提醒：${text}。`;
  }
  if (r.kind === 'timer') return text ? `Time's up: ${text}.` : "Time's up.";
  return `Reminder: ${text}.`;
}
