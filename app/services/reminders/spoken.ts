import type { ReminderView } from '../../contract/reminders.js';

/**
 * The sentence a connection's voice says when a reminder rings (Advent `SPEAK` says it verbatim),
 * in the app's language. The window speaks its own translated text instead.
 */
export function spokenReminder(r: Pick<ReminderView, 'kind' | 'text'>, language: string): string {
  const text = r.text.trim();
  if (language === 'zh-CN') {
    if (r.kind === 'timer') return text ? `计时结束：${text}。` : '计时结束。';
    return `提醒：${text}。`;
  }
  if (r.kind === 'timer') return text ? `Your timer for ${text} is done.` : 'Your timer is done.';
  return `Reminder: ${text}.`;
}
