import { MAX_TEXT, type Reminders } from '../reminders/reminders.js';
import { describeDue, describeDuration, localIso } from '../reminders/when.js';
import type { Service } from '../service.js';
import { addReminder, checkRoom, quoted, reminderText } from './reminder_common.js';

export type SetTimerParams = { duration_seconds: number; label?: string };

/** A week: longer waits are reminders (a date), not timers. */
export const MAX_TIMER_SECONDS = 7 * 24 * 3600;

export function setTimerService(reminders: Reminders): Service<SetTimerParams> {
  return {
    name: 'set_timer',
    title: 'Set a timer',
    summary: 'Starts a timer that rings and speaks when it ends, even with no server connected.',
    group: 'time',
    description:
      "Start a countdown timer on the user's computer. When it ends the computer shows a notification " +
      'and says the label aloud, even if no server is connected then. duration_seconds is its length ' +
      "(1 to 604800), label what it is for, e.g. 'tea'. The result has the timer's id for cancel_reminder.",
    parameters: {
      type: 'object',
      properties: {
        duration_seconds: {
          type: 'integer',
          minimum: 1,
          maximum: MAX_TIMER_SECONDS,
          description: 'Length of the timer in seconds, e.g. 300 for five minutes',
        },
        label: {
          type: 'string',
          maxLength: MAX_TEXT,
          description:
            "What the timer is for, one line, said when it rings, e.g. 'tea' (line breaks and control characters are removed)",
        },
      },
      required: ['duration_seconds'],
      additionalProperties: false,
    },
    risk: 'write',
    timeoutMs: 5000,
    preview(params) {
      checkRoom(reminders);
      const label = reminderText(params.label ?? '');
      return {
        summary: `Set a timer for ${describeDuration(params.duration_seconds)}${label ? `: ${quoted(label)}` : ''}`,
        resolvedPaths: [],
      };
    },
    async run(params, ctx) {
      const now = ctx.clock.now();
      const label = reminderText(params.label ?? '');
      const r = await addReminder(reminders, {
        kind: 'timer',
        text: label,
        dueAt: now + params.duration_seconds * 1000,
        connection: ctx.connection,
      });
      return {
        // Counted from the user's yes, not from the request: say so, the model may have waited.
        message: `Timer set for ${describeDuration(params.duration_seconds)}${label ? ` (${quoted(label)})` : ''}, counted from when the user allowed it; it rings at ${describeDue(r.dueAt, now)}`,
        id: r.id,
        due: localIso(r.dueAt),
      };
    },
  };
}
