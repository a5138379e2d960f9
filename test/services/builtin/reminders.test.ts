import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { cancelReminderService } from '../../../app/services/builtin/cancel_reminder.js';
import { listRemindersService } from '../../../app/services/builtin/list_reminders.js';
import { setReminderService } from '../../../app/services/builtin/set_reminder.js';
import { setTimerService } from '../../../app/services/builtin/set_timer.js';
import type { Reminders } from '../../../app/services/reminders/reminders.js';
import { MAX_PENDING } from '../../../app/services/reminders/reminders.js';
import { ServiceFailure, type ServiceContext } from '../../../app/services/service.js';
import { Registry } from '../../../app/services/registry.js';
import type { FakeClock } from '../../helpers/fake-clock.js';
import { tempDirs } from '../helpers.js';
import { NOW, openReminderRig } from './reminder-rig.js';

const dirs = tempDirs();
let clock: FakeClock;
let reminders: Reminders;
let ctx: ServiceContext;

beforeEach(async () => {
  ({ clock, reminders, ctx } = await openReminderRig(await dirs.make(), 5));
});
afterEach(async () => {
  await reminders.close();
  await dirs.cleanup();
});

async function failure(fn: () => unknown): Promise<ServiceFailure> {
  const err = await Promise.resolve()
    .then(fn)
    .then(
      () => new Error('expected a refusal'),
      (e: unknown) => e,
    );
  if (err instanceof ServiceFailure) return err;
  throw err;
}

describe('the reminder services', () => {
  it('have valid schemas, groups and risks (setting asks; listing is a harmless read)', () => {
    const registry = new Registry();
    const services = [
      setTimerService(reminders),
      setReminderService(reminders),
      listRemindersService(reminders),
      cancelReminderService(reminders),
    ];
    for (const s of services) registry.add(s);
    expect(services.map((s) => [s.name, s.group, s.risk])).toEqual([
      ['set_timer', 'time', 'write'],
      ['set_reminder', 'time', 'write'],
      ['list_reminders', 'time', 'read'],
      ['cancel_reminder', 'time', 'write'],
    ]);
    expect(registry.validate('set_timer', { duration_seconds: 0 }).ok).toBe(false);
    expect(registry.validate('set_reminder', { time: '14:30' }).ok).toBe(false);
  });

  it('set_timer: the prompt says how long and what for; the result says when it rings', async () => {
    const timer = setTimerService(reminders);
    expect(timer.preview!({ duration_seconds: 300, label: 'tea' }, ctx)).toEqual({
      summary: 'Set a timer for 5 minutes: “tea”',
      resolvedPaths: [],
    });
    const result = await timer.run({ duration_seconds: 300, label: 'tea' }, ctx);
    expect(result).toMatchObject({
      message:
        'Timer set for 5 minutes (“tea”), counted from when the user allowed it; it rings at 14:05',
      id: expect.stringMatching(/^r-[0-9a-f]{8}$/),
    });
    expect(reminders.list()).toMatchObject([
      {
        kind: 'timer',
        text: 'tea',
        dueAt: NOW + 300_000,
        connection: { id: 'p1', name: 'Home server' },
      },
    ]);
  });

  it('set_reminder: a time of day or an ISO time; the past and nonsense are refused before asking', async () => {
    const set = setReminderService(reminders);
    expect(await set.preview!({ time: '2025-01-22T15:30', text: 'call mom' }, ctx)).toEqual({
      summary: 'Remind you at 15:30: “call mom”',
      resolvedPaths: [],
      dueAt: new Date(2025, 0, 22, 15, 30).getTime(),
    });
    expect((await set.preview!({ time: '09:00', text: 'stand-up' }, ctx)).summary).toBe(
      'Remind you at tomorrow 09:00: “stand-up”',
    );
    const past = await failure(() => set.preview!({ time: '2025-01-22T13:00', text: 'x' }, ctx));
    expect(past.code).toBe('invalid_params');
    expect(past.message).toMatch(
      /^2025-01-22T13:00 is in the past \(it is now 2025-01-22T14:00:00[+-]\d{2}:\d{2}\); give a time still to come$/,
    );
    const nonsense = await failure(() => set.preview!({ time: 'whenever', text: 'x' }, ctx));
    expect(nonsense.code).toBe('invalid_params');
    const far = await failure(() => set.preview!({ time: '2027-01-01T00:00', text: 'x' }, ctx));
    expect(far.message).toBe('2027-01-01T00:00 is more than a year ahead; give a nearer time');
    expect(await set.run({ time: '15:30', text: ' call mom ' }, ctx)).toMatchObject({
      message: 'Reminder set for 15:30: “call mom”',
    });
  });

  it('list_reminders tells the waiting and the missed with their ids; cancel_reminder cancels by id', async () => {
    const timer = setTimerService(reminders);
    const { id } = (await timer.run({ duration_seconds: 600, label: 'oven' }, ctx)) as {
      id: string;
    };
    const list = listRemindersService(reminders);
    expect((await list.preview!({}, ctx)).summary).toBe(
      'Read your reminders and timers (1 waiting)',
    );
    expect(await list.run({}, ctx)).toEqual({
      reminders: [
        {
          id,
          kind: 'timer',
          text: 'oven',
          due: expect.stringMatching(/^2025-01-22T14:10:00/),
          state: 'pending',
          set_by: 'you',
          in: '10 minutes',
        },
      ],
    });
    const cancel = cancelReminderService(reminders);
    expect((await cancel.preview!({ id }, ctx)).summary).toBe(
      'Cancel the timer “oven” set for 14:10',
    );
    expect(await cancel.run({ id }, ctx)).toEqual({ message: 'Cancelled the timer “oven”', id });
    expect(await list.run({}, ctx)).toEqual({
      reminders: [],
      message: 'no reminders or timers are waiting',
    });
  });

  it('cancel_reminder refuses an unknown id and one that already rang', async () => {
    const cancel = cancelReminderService(reminders);
    expect(await failure(() => cancel.preview!({ id: 'r-deadbeef' }, ctx))).toMatchObject({
      code: 'not_found',
      message:
        "there is no reminder or timer with the id 'r-deadbeef'; list_reminders shows the ids of those waiting",
    });
    const { id } = (await setTimerService(reminders).run({ duration_seconds: 1 }, ctx)) as {
      id: string;
    };
    clock.advance(1000);
    expect(await failure(() => cancel.preview!({ id }, ctx))).toMatchObject({
      code: 'not_found',
      message: `the timer (${id}) is not waiting any more: it has already rung`,
    });
  });

  it('refuses a new one when 50 are waiting, before anyone is asked', async () => {
    for (let i = 0; i < MAX_PENDING; i++)
      await reminders.add({
        kind: 'timer',
        text: '',
        dueAt: NOW + 60_000 + i,
        connection: ctx.connection,
      });
    const refusal = await failure(() =>
      setTimerService(reminders).preview!({ duration_seconds: 5 }, ctx),
    );
    expect(refusal).toMatchObject({
      code: 'limit_reached',
      message:
        '50 reminders and timers are already waiting, the most this computer keeps; cancel one with cancel_reminder first',
    });
  });
});
