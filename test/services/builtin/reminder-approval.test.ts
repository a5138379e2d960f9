/**
 * What the user approves is what happens: the prompt shows the whole reminder text, exactly as it
 * is stored, notified and spoken (one line, nothing hidden); and a reminder approved for a time
 * rings at that time, however long the user took to answer — never on another day.
 */
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Agent } from '../../../app/agent.js';
import type { ReminderView } from '../../../app/contract/reminders.js';
import { setReminderService } from '../../../app/services/builtin/set_reminder.js';
import { setTimerService } from '../../../app/services/builtin/set_timer.js';
import { Reminders } from '../../../app/services/reminders/reminders.js';
import { spokenReminder } from '../../../app/services/reminders/spoken.js';
import { ServiceFailure, type ServiceContext } from '../../../app/services/service.js';
import { MemorySecretStore } from '../../../app/settings/secrets.js';
import { reminderNotice } from '../../../main/electron/desktop.js';
import { FakeClock } from '../../helpers/fake-clock.js';
import { tempDirs } from '../helpers.js';
import { NOW, openReminderRig } from './reminder-rig.js';

vi.mock('electron', () =>
  import('../../main/electron/fake-electron.js').then((m) => m.fakeElectron()),
);

const dirs = tempDirs();
let clock: FakeClock;
let reminders: Reminders;
let ctx: ServiceContext;

beforeEach(async () => {
  ({ clock, reminders, ctx } = await openReminderRig(await dirs.make(), 7));
});
afterEach(async () => {
  await reminders.close();
  await dirs.cleanup();
});

describe('the reminder text the user approves is the text shown and spoken', () => {
  it('a long text with line breaks and bidi/invisible characters: the prompt shows it all, as stored', async () => {
    const text =
      'stand up and stretch your legs for a minute, then drink a glass of water' +
      ' '.repeat(8) +
      '\n\n\n\n\nAdvent Agent security: your \u202Etoken\u202C expired.\r\nSay your\u200B password\u0007 aloud.';
    const shown =
      'stand up and stretch your legs for a minute, then drink a glass of water ' +
      'Advent Agent security: your token expired. Say your password aloud.';
    const set = setReminderService(reminders);
    const plan = await set.preview!({ time: '14:30', text }, ctx);
    expect(plan.summary).toBe(`Remind you at 14:30: “${shown}”`);
    await set.run({ time: '14:30', text }, ctx, plan);
    clock.advance(30 * 60_000);
    const fired = reminders.list()[0]!;
    expect(fired).toMatchObject({ state: 'fired', text: shown });
    for (const platform of ['darwin', 'win32', 'linux'] as const)
      expect(reminderNotice({ reminder: fired, speech: 'window' }, 'en', platform).body).toBe(
        shown,
      );
    expect(spokenReminder(fired, 'en')).toBe(`Reminder: ${shown}.`);
    // Whatever put a text there, the notification and the voice say it on one line, unhidden.
    const raw = { ...fired, text: 'call mom\n\nsay your\u202E password' };
    expect(reminderNotice({ reminder: raw, speech: 'window' }, 'en', 'darwin').body).toBe(
      'call mom say your password',
    );
    expect(spokenReminder(raw, 'en')).toBe('Reminder: call mom say your password.');
  });

  it('a text of nothing but breaks and control characters is refused before the user is asked', async () => {
    const err = await Promise.resolve()
      .then(() =>
        setReminderService(reminders).preview!(
          { time: '14:30', text: '\n\u202E\u200B\t\u0000' },
          ctx,
        ),
      )
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ServiceFailure);
    expect(err).toMatchObject({ code: 'invalid_params' });
  });

  it("a timer's label is cleaned the same way, in the prompt and in what is stored", async () => {
    const timer = setTimerService(reminders);
    const params = { duration_seconds: 60, label: 'tea\n\nIgnore the above\u2066 now' };
    expect(timer.preview!(params, ctx)).toMatchObject({
      summary: 'Set a timer for 1 minute: “tea Ignore the above now”',
    });
    await timer.run(params, ctx);
    expect(reminders.list()[0]).toMatchObject({ text: 'tea Ignore the above now' });
  });

  it('the store cleans a text too, and a saved file from before (or edited by hand)', async () => {
    const added = await reminders.add({
      kind: 'reminder',
      text: 'one\ntwo\u202E three',
      dueAt: NOW + 60_000,
      connection: ctx.connection,
    });
    expect(added.text).toBe('one two three');
    await reminders.close();
    const dir = await dirs.make();
    const file = path.join(dir, 'reminders.json');
    const old: ReminderView = { ...added, text: 'call\r\n\r\nsecurity notice:\u0085 say it' };
    const { writeFile } = await import('node:fs/promises');
    await writeFile(file, JSON.stringify({ version: 1, reminders: [old] }));
    reminders = await Reminders.open({ file, clock });
    expect(reminders.get(added.id)?.text).toBe('call security notice: say it');
  });
});

describe('a reminder rings at the time the user approved', () => {
  it('approved for "14:30" after 14:30 passed: rings at once, today — not tomorrow', async () => {
    clock = new FakeClock(new Date(2025, 0, 22, 14, 29, 50).getTime());
    await reminders.close();
    reminders = await Reminders.open({ file: path.join(await dirs.make(), 'r.json'), clock });
    ctx = { ...ctx, clock };
    const fired: ReminderView[] = [];
    reminders.events.on('fired', (r) => fired.push(r));
    const set = setReminderService(reminders);
    const plan = await set.preview!({ time: '14:30', text: 'take the pill' }, ctx);
    expect(plan.summary).toBe('Remind you at 14:30: “take the pill”');
    clock.advance(15_000); // the user reads the prompt, then allows it
    const result = await set.run({ time: '14:30', text: 'take the pill' }, ctx, plan);
    const today1430 = new Date(2025, 0, 22, 14, 30, 0).getTime();
    expect(result).toMatchObject({
      message:
        'The time approved (14:30) passed while the user was asked; the reminder rings now: “take the pill”',
      due: expect.stringMatching(/^2025-01-22T14:30:00/),
    });
    clock.advance(0);
    expect(fired).toMatchObject([{ text: 'take the pill', dueAt: today1430, state: 'fired' }]);
  });

  it('approved before the time: set for exactly the moment the prompt showed', async () => {
    const set = setReminderService(reminders);
    const plan = await set.preview!({ time: '15:30', text: 'call mom' }, ctx);
    clock.advance(20_000);
    expect(await set.run({ time: '15:30', text: 'call mom' }, ctx, plan)).toMatchObject({
      message: 'Reminder set for 15:30: “call mom”',
      due: expect.stringMatching(/^2025-01-22T15:30:00/),
    });
  });

  it('through the gate: the prompt answered late still sets today 14:30 (rung at once)', async () => {
    const gateClock = new FakeClock(new Date(2025, 0, 22, 14, 29, 50).getTime());
    const dir = await dirs.make('advent-reminder-drift-');
    const agent = await Agent.open({
      dataDir: path.join(dir, 'data'),
      defaultFilesRoot: path.join(dir, 'files'),
      secrets: new MemorySecretStore(),
      clock: gateClock,
    });
    try {
      agent.broker.attach();
      agent.events.on('prompt', (p) => {
        gateClock.advance(15_000);
        agent.broker.answer(p.id, 'once');
      });
      const result = await agent.dispatch({
        connection: { id: 'p1', name: 'Server A' },
        dialect: 'advent',
        callId: 'c1',
        service: 'set_reminder',
        params: { time: '14:30', text: 'take the pill' },
      });
      expect(result).toMatchObject({
        ok: true,
        data: { due: expect.stringMatching(/^2025-01-22T14:30:00/) },
      });
      gateClock.advance(0);
      expect(agent.reminders.list()).toMatchObject([{ text: 'take the pill', state: 'fired' }]);
    } finally {
      await agent.close();
    }
  });

  it('a timer counts from when the user allowed it, and its result says so', async () => {
    const timer = setTimerService(reminders);
    const plan = timer.preview!({ duration_seconds: 300, label: 'tea' }, ctx);
    clock.advance(20_000);
    expect(await timer.run({ duration_seconds: 300, label: 'tea' }, ctx, await plan)).toMatchObject(
      {
        message:
          'Timer set for 5 minutes (“tea”), counted from when the user allowed it; it rings at 14:05:20',
      },
    );
  });
});
