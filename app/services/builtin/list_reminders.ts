import type { Reminders } from '../reminders/reminders.js';
import { describeDuration, localIso } from '../reminders/when.js';
import type { Service } from '../service.js';

export function listRemindersService(reminders: Reminders): Service<Record<string, never>> {
  return {
    name: 'list_reminders',
    title: 'List reminders',
    summary: 'Tells which reminders and timers are waiting, and which were missed.',
    group: 'time',
    description:
      "List the user's reminders and timers that are still waiting (with their ids, for cancel_reminder), " +
      'and those missed while the computer was off.',
    parameters: { type: 'object', properties: {}, additionalProperties: false },
    risk: 'read',
    timeoutMs: 2000,
    preview() {
      return {
        summary: `Read your reminders and timers (${reminders.pendingCount()} waiting)`,
        resolvedPaths: [],
      };
    },
    async run(_params, ctx) {
      const now = ctx.clock.now();
      const list = reminders.list().filter((r) => r.state === 'pending' || r.state === 'missed');
      return {
        reminders: list.map((r) => ({
          id: r.id,
          kind: r.kind,
          text: r.text,
          due: localIso(r.dueAt),
          state: r.state,
          ...(r.state === 'pending'
            ? { in: describeDuration(Math.max(0, (r.dueAt - now) / 1000)) }
            : {}),
        })),
        ...(list.length === 0 ? { message: 'no reminders or timers are waiting' } : {}),
      };
    },
  };
}
