import { MAX_TEXT, MAX_AHEAD_MS, type Reminders } from '../reminders/reminders.js';
import { describeDue, localIso, parseWhen } from '../reminders/when.js';
import { ServiceFailure, type CallPreview, type Service } from '../service.js';
import { addReminder, checkRoom, quoted, reminderText } from './reminder_common.js';

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

/** The text as it will be stored and shown (see `reminderText`), or the refusal when none is left. */
function textOf(params: SetReminderParams): string {
  const text = reminderText(params.text);
  if (!text)
    throw new ServiceFailure(
      'invalid_params',
      'text has nothing to show once line breaks and control characters are removed; give the words to remind of',
    );
  return text;
}

/**
 * What the user approved: the sentence, and the moment it named. A time of day is read once,
 * here: read again after a slow answer, '14:30' would have become tomorrow's 14:30.
 */
interface SetReminderPlan extends CallPreview {
  dueAt: number;
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
          description:
            "What to remind the user of, one line, e.g. 'call mom' (line breaks and control characters are removed)",
        },
      },
      required: ['time', 'text'],
      additionalProperties: false,
    },
    risk: 'write',
    timeoutMs: 5000,
    preview(params, ctx): SetReminderPlan {
      checkRoom(reminders);
      const now = ctx.clock.now();
      const at = dueAt(params.time, now);
      return {
        summary: `Remind you at ${describeDue(at, now)}: ${quoted(textOf(params))}`,
        resolvedPaths: [],
        dueAt: at,
      };
    },
    async run(params, ctx, approved) {
      const now = ctx.clock.now();
      const shown = (approved as SetReminderPlan | undefined)?.dueAt;
      // The moment the prompt showed; without a preview (a direct run) the params alone decide.
      const at = typeof shown === 'number' ? shown : dueAt(params.time, now);
      const r = await addReminder(reminders, {
        kind: 'reminder',
        text: textOf(params),
        // Passed while the user was deciding: it rings at once (a due time already past rings on
        // the next tick), never on another day than the one approved.
        dueAt: at,
        connection: ctx.connection,
      });
      if (at <= now)
        return {
          message: `The time approved (${describeDue(at, now)}) passed while the user was asked; the reminder rings now: ${quoted(r.text)}`,
          id: r.id,
          due: localIso(r.dueAt),
        };
      return {
        message: `Reminder set for ${describeDue(r.dueAt, now)}: ${quoted(r.text)}`,
        id: r.id,
        due: localIso(r.dueAt),
      };
    },
  };
}
