import { LOCAL_CONNECTION, type ConnectionRef } from '../../contract/connection.js';
import type { Reminders } from '../reminders/reminders.js';
import { describeDue } from '../reminders/when.js';
import { ServiceFailure, type Service } from '../service.js';
import { nameOf, visibleTo } from './reminder_common.js';

export type CancelReminderParams = { id: string };

/**
 * The waiting reminder with this id, or the refusal for the model. Another server's reminder is
 * answered as an unknown id: its existence, like its text, is not this connection's to learn.
 */
function waiting(reminders: Reminders, id: string, asking: ConnectionRef) {
  const r = reminders.get(id);
  if (!r || !visibleTo(r, asking))
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
      'Cancel a reminder or timer that has not rung yet, by the id set_timer, set_reminder or list_reminders gave. ' +
      'Only those you set or the user set themselves can be cancelled.',
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
      const r = waiting(reminders, params.id, ctx.connection);
      // A server cancelling one the user set themselves: the prompt says it is the user's own.
      const yours =
        r.connection.id === LOCAL_CONNECTION.id && ctx.connection.id !== LOCAL_CONNECTION.id
          ? ' (one you set yourself)'
          : '';
      return {
        summary: `Cancel ${nameOf(r)} set for ${describeDue(r.dueAt, ctx.clock.now())}${yours}`,
        resolvedPaths: [],
      };
    },
    async run(params, ctx) {
      const r = waiting(reminders, params.id, ctx.connection);
      await reminders.cancel(r.id);
      return { message: `Cancelled ${nameOf(r)}`, id: r.id };
    },
  };
}
