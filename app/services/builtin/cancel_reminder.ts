import type { Reminders } from '../reminders/reminders.js';
import { describeDue } from '../reminders/when.js';
import { ServiceFailure, type Service } from '../service.js';
import { nameOf } from './reminder_common.js';

export type CancelReminderParams = { id: string };

/** The waiting reminder with this id, or the refusal for the model. */
function waiting(reminders: Reminders, id: string) {
  const r = reminders.get(id);
  if (!r)
    throw new ServiceFailure(
      'not_found',
      `there is no reminder or timer with the id '${id}'; list_reminders shows the ids of those waiting`,
    );
  if (r.state !== 'pending')
    throw new ServiceFailure(
      'not_found',
      `${nameOf(r)} (${id}) is not waiting any more: it ${r.state === 'fired' ? 'has already rung' : 'was missed'}`,
    );
  return r;
}

export function cancelReminderService(reminders: Reminders): Service<CancelReminderParams> {
  return {
    name: 'cancel_reminder',
    title: 'Cancel a reminder',
    summary: 'Cancels a reminder or timer that has not rung yet.',
    group: 'time',
    description:
      'Cancel a reminder or timer that has not rung yet, by the id set_timer, set_reminder or list_reminders gave.',
    parameters: {
      type: 'object',
      properties: {
        id: {
          type: 'string',
          minLength: 1,
          maxLength: 16,
          description: "The reminder's id, e.g. 'r-1a2b3c4d'",
        },
      },
      required: ['id'],
      additionalProperties: false,
    },
    risk: 'write',
    timeoutMs: 5000,
    preview(params, ctx) {
      const r = waiting(reminders, params.id);
      return {
        summary: `Cancel ${nameOf(r)} set for ${describeDue(r.dueAt, ctx.clock.now())}`,
        resolvedPaths: [],
      };
    },
    async run(params) {
      const r = waiting(reminders, params.id);
      await reminders.cancel(r.id);
      return { message: `Cancelled ${nameOf(r)}`, id: r.id };
    },
  };
}
