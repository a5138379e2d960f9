import { readFile, writeFile } from 'node:fs/promises';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { AgentNotice } from '../../../app/contract/notice.js';
import type { ReminderView } from '../../../app/contract/reminders.js';
import { seededIds } from '../../../app/ids.js';
import {
  MAX_DONE,
  MAX_PENDING,
  MAX_TEXT,
  Reminders,
} from '../../../app/services/reminders/reminders.js';
import { FakeClock } from '../../helpers/fake-clock.js';
import { tempDirs } from '../helpers.js';

const dirs = tempDirs();
const open: Reminders[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((r) => r.close()));
  await dirs.cleanup();
});

const START = Date.UTC(2025, 0, 22, 6, 0, 0);
const who = { id: 'p1', name: 'Home server' };

async function openAt(
  file: string,
  clock: FakeClock,
  warnings: AgentNotice[] = [],
): Promise<Reminders> {
  const r = await Reminders.open({ file, clock, ids: seededIds(3), warn: (m) => warnings.push(m) });
  open.push(r);
  return r;
}

async function fixture() {
  const dir = await dirs.make();
  const file = path.join(dir, 'reminders.json');
  const clock = new FakeClock(START);
  const reminders = await openAt(file, clock);
  const fired: ReminderView[] = [];
  reminders.events.on('fired', (r) => fired.push(r));
  return { dir, file, clock, reminders, fired };
}

describe('reminders on the injected clock', () => {
  it('rings exactly when due, not before, with no server involved', async () => {
    const f = await fixture();
    await f.reminders.add({
      kind: 'timer',
      text: 'tea',
      dueAt: START + 5 * 60_000,
      connection: who,
    });
    f.clock.advance(5 * 60_000 - 1);
    expect(f.fired).toEqual([]);
    f.clock.advance(1);
    expect(f.fired).toHaveLength(1);
    expect(f.fired[0]).toMatchObject({
      kind: 'timer',
      text: 'tea',
      state: 'fired',
      firedAt: START + 300_000,
    });
    expect(f.reminders.list()[0]).toMatchObject({ state: 'fired' });
    expect(f.clock.pendingTimers()).toBe(0);
  });

  it('rings several in due order, a far one after re-arming (a timer never waits more than a minute)', async () => {
    const f = await fixture();
    await f.reminders.add({
      kind: 'reminder',
      text: 'later',
      dueAt: START + 3 * 3600_000,
      connection: who,
    });
    await f.reminders.add({
      kind: 'reminder',
      text: 'sooner',
      dueAt: START + 90_000,
      connection: who,
    });
    f.clock.advance(3 * 3600_000);
    expect(f.fired.map((r) => r.text)).toEqual(['sooner', 'later']);
  });

  it('survives a restart: pending ones are saved and ring in the next run', async () => {
    const f = await fixture();
    const added = await f.reminders.add({
      kind: 'reminder',
      text: 'call mom',
      dueAt: START + 60_000,
      connection: who,
    });
    await f.reminders.close();
    const saved = JSON.parse(await readFile(f.file, 'utf8')) as { reminders: ReminderView[] };
    expect(saved.reminders).toEqual([added]);

    const clock = new FakeClock(START + 30_000);
    const again = await openAt(f.file, clock);
    const fired: ReminderView[] = [];
    again.events.on('fired', (r) => fired.push(r));
    expect(again.missedAtStart()).toEqual([]);
    clock.advance(30_000);
    expect(fired.map((r) => [r.id, r.text])).toEqual([[added.id, 'call mom']]);
  });

  it('one that fell due while the app was closed is reported missed at the next start, never dropped', async () => {
    const f = await fixture();
    await f.reminders.add({
      kind: 'reminder',
      text: 'stretch',
      dueAt: START + 60_000,
      connection: who,
    });
    await f.reminders.close();

    const clock = new FakeClock(START + 3600_000);
    const again = await openAt(f.file, clock);
    const fired: ReminderView[] = [];
    again.events.on('fired', (r) => fired.push(r));
    expect(again.missedAtStart()).toMatchObject([
      { text: 'stretch', state: 'missed', firedAt: START + 3600_000 },
    ]);
    expect(again.list()).toMatchObject([{ text: 'stretch', state: 'missed' }]);
    clock.advance(3600_000);
    expect(fired).toEqual([]);
    // Saved as missed: a third start does not report it again as newly missed.
    await again.close();
    const third = await openAt(f.file, new FakeClock(START + 7200_000));
    expect(third.missedAtStart()).toEqual([]);
    expect(third.list()).toMatchObject([{ text: 'stretch', state: 'missed' }]);
  });

  it('cancels a pending one (it never rings) and clears a rung one from the list', async () => {
    const f = await fixture();
    const a = await f.reminders.add({
      kind: 'timer',
      text: 'a',
      dueAt: START + 1000,
      connection: who,
    });
    const b = await f.reminders.add({
      kind: 'timer',
      text: 'b',
      dueAt: START + 2000,
      connection: who,
    });
    expect(await f.reminders.cancel(b.id)).toMatchObject({ id: b.id, state: 'cancelled' });
    f.clock.advance(5000);
    expect(f.fired.map((r) => r.text)).toEqual(['a']);
    expect(await f.reminders.cancel(a.id)).toMatchObject({ state: 'fired' });
    expect(f.reminders.list()).toEqual([]);
    expect(await f.reminders.cancel('r-00000000')).toBeUndefined();
    expect(f.clock.pendingTimers()).toBe(0);
  });

  it('is bounded: 50 waiting at most, texts cut to 200 characters, 50 rung kept', async () => {
    const f = await fixture();
    await f.reminders.add({
      kind: 'reminder',
      text: 'x'.repeat(MAX_TEXT + 50),
      dueAt: START + 10,
      connection: who,
    });
    expect(f.reminders.list()[0]!.text).toHaveLength(MAX_TEXT);
    for (let i = 1; i < MAX_PENDING; i++)
      await f.reminders.add({
        kind: 'timer',
        text: `t${i}`,
        dueAt: START + 10 + i,
        connection: who,
      });
    await expect(
      f.reminders.add({ kind: 'timer', text: 'one too many', dueAt: START + 999, connection: who }),
    ).rejects.toThrow(RangeError);
    f.clock.advance(1000);
    for (let i = 0; i < 10; i++)
      await f.reminders.add({
        kind: 'timer',
        text: `u${i}`,
        dueAt: START + 2000 + i,
        connection: who,
      });
    f.clock.advance(2000);
    expect(f.fired).toHaveLength(MAX_PENDING + 10);
    expect(f.reminders.list()).toHaveLength(MAX_DONE);
  });

  it('a damaged file is set aside (kept) and the list starts empty, with a warning', async () => {
    const dir = await dirs.make();
    const file = path.join(dir, 'reminders.json');
    await writeFile(file, '{"reminders": [tru');
    const warnings: AgentNotice[] = [];
    const r = await openAt(file, new FakeClock(START), warnings);
    expect(r.list()).toEqual([]);
    expect(warnings[0]?.message).toMatch(
      /the reminders file was damaged and was moved aside to .*reminders\.json\.corrupt-/,
    );
    const aside = (await readdir(dir)).find((n) => n.startsWith('reminders.json.corrupt-'));
    expect(aside).toBeDefined();
    // …and in words a window translates, the copy's path as it is.
    expect(warnings[0]?.words).toEqual({
      key: 'notice.remindersSetAside',
      params: { keptAs: path.join(dir, aside!) },
    });
  });

  it('leaves out malformed entries of a file edited by hand', async () => {
    const dir = await dirs.make();
    const file = path.join(dir, 'reminders.json');
    const good = {
      id: 'r-0123abcd',
      kind: 'timer',
      text: 'ok',
      dueAt: START + 5000,
      createdAt: START,
      state: 'pending',
      connection: who,
    };
    await writeFile(
      file,
      JSON.stringify({ version: 1, reminders: [good, { id: '../x', kind: 'timer' }, null, 7] }),
    );
    const r = await openAt(file, new FakeClock(START));
    expect(r.list()).toEqual([good]);
  });
});
