import { MAX_TEXT, MAX_AHEAD_MS, type Reminders } from '../reminders/reminders.js';
import { describeDue, localIso, parseWhen } from '../reminders/when.js';
import { ServiceFailure, type Service } from '../service.js';
import { addReminder, checkRoom, quoted } from './reminder_common.js';

export type SetReminderParams = { time: string; text: string };

/** The moment `time` names, or the refusal saying why it cannot be used. */
function dueAt(time: string, now: number): number {
  const when = parseWhen(time, now);
  if (!when.ok) throw new ServiceFailure('invalid_params', when.message);
  if (when.at <= now)
    throw new ServiceFailure(
      'invalid_params',
      `${time.trim()} is in the past (it is now ${localIso(now)}); give a time still to come`,
    );
  if (when.at - now > MAX_AHEAD_MS)
    throw new ServiceFailure(
      'invalid_params',
      `${time.trim()} is more than a year ahead; give a nearer time`,
    );
  return when.at;
}

export function setReminderService(reminders: Reminders): Service<SetReminderParams> {
  return {
    name: 'set_reminder',
    title: 'Set a reminder',
    summary: 'Reminds you of something at a time you choose: a notification, and said aloud.',
    group: 'time',
    description:
      "Remind the user of something at a given time on their computer: a notification, and the text said aloud, even if no server is connected then. time is an ISO date-time in the user's local time such as '2025-01-22T14:30' (or with an offset), " +
      "or a time of day such as '14:30' (the next time the clock shows it). For 'in 10 minutes' use set_timer. The result has the reminder's id for cancel_reminder.",
    parameters: {
      type: 'object',
      properties: {
        time: {
          type: 'string',
          minLength: 1,
          maxLength: 40,
          description:
            "When: '2025-01-22T14:30' (local time), '2025-01-22T14:30:00+08:00', or '14:30'",
        },
        text: {
          type: 'string',
          minLength: 1,
          maxLength: MAX_TEXT,
          description: "What to remind the user of, e.g. 'call mom'",
        },
      },
      required: ['time', 'text'],
      additionalProperties: false,
    },
    risk: 'write',
    timeoutMs: 5000,
    preview(params, ctx) {
      checkRoom(reminders);
      const now = ctx.clock.now();
      const at = dueAt(params.time, now);
      return {
        summary: `Remind you at ${describeDue(at, now)}: ${quoted(params.text)}`,
        resolvedPaths: [],
      };
    },
    async run(params, ctx) {
      const now = ctx.clock.now();
      const r = await addReminder(reminders, {
        kind: 'reminder',
        text: params.text.trim(),
        dueAt: dueAt(params.time, now),
        connection: ctx.connection,
      });
      return {
        message: `Reminder set for ${describeDue(r.dueAt, now)}: ${quoted(r.text)}`,
        id: r.id,
        due: localIso(r.dueAt),
      };
    },
  };
}
