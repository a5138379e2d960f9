/**
 * Whose reminders a connection sees and cancels, through the real gate: a server lists and cancels
 * only the reminders it set itself and those the user set from the window, never another server's
 * (whose text is what the user gave that server, and whose words would reach this server's model).
 */
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Agent } from '../../../app/agent.js';
import type { DispatchResult } from '../../../app/dispatch.js';
import { MemorySecretStore } from '../../../app/settings/secrets.js';
import { tempDirs } from '../helpers.js';

const dirs = tempDirs();
const A = { id: 'p1', name: 'Server A' };
const B = { id: 'p2', name: 'Server B' };
let agent: Agent;
let prompts: string[];
let seq = 0;

beforeEach(async () => {
  const dir = await dirs.make('advent-reminder-owners-');
  agent = await Agent.open({
    dataDir: path.join(dir, 'data'),
    defaultFilesRoot: path.join(dir, 'files'),
    secrets: new MemorySecretStore(),
  });
  prompts = [];
  agent.broker.attach();
  agent.events.on('prompt', (p) => {
    prompts.push(`${p.connection.name}: ${p.summary}`);
    agent.broker.answer(p.id, 'once');
  });
});
afterEach(async () => {
  await agent.close();
  await dirs.cleanup();
});

async function call(
  connection: { id: string; name: string },
  service: string,
  params: Record<string, unknown>,
): Promise<DispatchResult> {
  return agent.dispatch({
    connection,
    dialect: 'advent',
    callId: `c${++seq}`,
    service,
    params,
  });
}

function idOf(result: DispatchResult): string {
  expect(result).toMatchObject({ ok: true });
  return (result as { data: { id: string } }).data.id;
}

describe('reminders belong to the connection that set them', () => {
  it("list_reminders never shows a server another server's reminder; it shows its own and the user's", async () => {
    const secret = 'ask Dr Lee about the test result; the portal PIN is 4471';
    const ofA = idOf(await call(A, 'set_reminder', { time: '23:59', text: secret }));
    const ofB = idOf(await call(B, 'set_timer', { duration_seconds: 600, label: 'tea' }));
    const ofUser = idOf(
      await agent.runService('set_timer', { duration_seconds: 900, label: 'laundry' }),
    );

    const seenByB = await call(B, 'list_reminders', {});
    expect(JSON.stringify(seenByB)).not.toContain('4471');
    expect(JSON.stringify(seenByB)).not.toContain(ofA);
    expect(seenByB).toMatchObject({
      ok: true,
      data: {
        reminders: [
          { id: ofB, text: 'tea', set_by: 'you' },
          { id: ofUser, text: 'laundry', set_by: 'user' },
        ],
      },
    });
    const seenByA = (await call(A, 'list_reminders', {})) as {
      data: { reminders: { id: string }[] };
    };
    expect(seenByA.data.reminders.map((r) => r.id).sort()).toEqual([ofA, ofUser].sort());
    // The user, from the window, sees them all.
    const seenByUser = (await agent.runService('list_reminders', {})) as {
      data: { reminders: { id: string }[] };
    };
    expect(seenByUser.data.reminders.map((r) => r.id).sort()).toEqual([ofA, ofB, ofUser].sort());
  });

  it("cancel_reminder answers another server's id as unknown, before the user is asked, and keeps it", async () => {
    const ofA = idOf(await call(A, 'set_timer', { duration_seconds: 600, label: 'oven' }));
    prompts.length = 0;
    const refused = await call(B, 'cancel_reminder', { id: ofA });
    const unknown = await call(B, 'cancel_reminder', { id: 'r-00000000' });
    expect(refused).toMatchObject({ ok: false, code: 'not_found' });
    const message = (r: DispatchResult) => (r.ok ? '' : r.message);
    expect(message(refused)).toBe(message(unknown).replace('r-00000000', ofA));
    expect(prompts).toEqual([]);
    expect(agent.reminders.get(ofA)).toMatchObject({ state: 'pending' });
    // Its own server cancels it (asked first).
    expect(await call(A, 'cancel_reminder', { id: ofA })).toMatchObject({ ok: true });
    expect(prompts).toHaveLength(1);
    expect(prompts[0]).toMatch(/^Server A: Cancel the timer “oven” set for \S+$/);
    expect(agent.reminders.get(ofA)).toBeUndefined();
  });

  it("a server may cancel one the user set, and the prompt says it is the user's own", async () => {
    const ofUser = idOf(
      await agent.runService('set_timer', { duration_seconds: 900, label: 'laundry' }),
    );
    expect(await call(B, 'cancel_reminder', { id: ofUser })).toMatchObject({ ok: true });
    expect(prompts).toHaveLength(1);
    expect(prompts[0]).toMatch(
      /^Server B: Cancel the timer “laundry” set for \S+ \(one you set yourself\)$/,
    );
  });
});
