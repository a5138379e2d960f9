import { LOCAL_CONNECTION, type ConnectionRef } from '../../contract/connection.js';
import type { Reminders } from '../reminders/reminders.js';
import { describeDuration, localIso } from '../reminders/when.js';
import type { Service } from '../service.js';
import { visibleTo } from './reminder_common.js';

/** The waiting and missed reminders `asking` may see (see `visibleTo`). */
function listed(reminders: Reminders, asking: ConnectionRef) {
  return reminders
    .list()
    .filter((r) => (r.state === 'pending' || r.state === 'missed') && visibleTo(r, asking));
}

export function listRemindersService(reminders: Reminders): Service<Record<string, never>> {
  return {
    name: 'list_reminders',
    title: 'List reminders',
    summary: 'Tells which reminders and timers are waiting, and which were missed.',
    group: 'time',
    description:
      'List the reminders and timers you (this connection) set and those the user set on the computer ' +
      "themselves (set_by: 'you' or 'user'), still waiting (with their ids, for cancel_reminder) or missed " +
      "while the computer was off. Other servers' reminders are not listed.",
    parameters: { type: 'object', properties: {}, additionalProperties: false },
    risk: 'read',
    timeoutMs: 2000,
    preview(_params, ctx) {
      const waiting = listed(reminders, ctx.connection).filter((r) => r.state === 'pending');
      return {
        summary: `Read your reminders and timers (${waiting.length} waiting)`,
        resolvedPaths: [],
      };
    },
    async run(_params, ctx) {
      const now = ctx.clock.now();
      const list = listed(reminders, ctx.connection);
      return {
        reminders: list.map((r) => ({
          id: r.id,
          kind: r.kind,
          text: r.text,
          due: localIso(r.dueAt),
          state: r.state,
          set_by:
            r.connection.id === LOCAL_CONNECTION.id
              ? 'user'
              : r.connection.id === ctx.connection.id
                ? 'you'
                : r.connection.name,
          ...(r.state === 'pending'
            ? { in: describeDuration(Math.max(0, (r.dueAt - now) / 1000)) }
            : {}),
        })),
        ...(list.length === 0 ? { message: 'no reminders or timers are waiting' } : {}),
      };
    },
  };
}
