/** What the reminder service tests share: a fake clock at a fixed local time, a store, a context. */
import path from 'node:path';
import { seededIds } from '../../../app/ids.js';
import { createFilesSandbox } from '../../../app/services/files/sandbox.js';
import { Reminders } from '../../../app/services/reminders/reminders.js';
import type { ServiceContext } from '../../../app/services/service.js';
import { FakeClock } from '../../helpers/fake-clock.js';
import { context } from '../helpers.js';

/** 14:00 local time: the sentences the tests check read in the local zone, wherever they run. */
export const NOW = new Date(2025, 0, 22, 14, 0, 0).getTime();

/** A reminders store in `dir` on a fake clock at NOW, and a call context from 'Home server'. */
export async function openReminderRig(dir: string, seed: number) {
  const clock = new FakeClock(NOW);
  const reminders = await Reminders.open({
    file: path.join(dir, 'reminders.json'),
    clock,
    ids: seededIds(seed),
  });
  const ctx: ServiceContext = {
    ...context(createFilesSandbox({ roots: () => [], maxFileBytes: () => 1 }), clock),
    connection: { id: 'p1', name: 'Home server' },
  };
  return { clock, reminders, ctx };
}
