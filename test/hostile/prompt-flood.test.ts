/**
 * A server asking faster than a person can answer: a wall of permission questions is how a "yes"
 * gets clicked without reading. Past MAX_WAITING_PROMPTS waiting from one connection, the rest are
 * refused without asking; other connections still ask as before.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Agent } from '../../app/agent.js';
import { MAX_WAITING_PROMPTS } from '../../app/dispatch.js';
import { MemorySecretStore } from '../../app/settings/secrets.js';
import { until } from '../helpers/wait.js';

let dir: string;
let agent: Agent;

beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'advent-prompt-flood-'));
  agent = await Agent.open({
    dataDir: path.join(dir, 'data'),
    defaultFilesRoot: path.join(dir, 'files'),
    secrets: new MemorySecretStore(),
  });
  agent.broker.attach({ name: 'test-ui' });
});

afterEach(async () => {
  await agent.close();
  await rm(dir, { recursive: true, force: true });
});

const create = (connectionId: string, n: number) =>
  agent.gate.dispatch({
    connection: { id: connectionId, name: connectionId },
    dialect: connectionId.startsWith('mcp:') ? 'mcp' : 'advent',
    callId: `${connectionId}-${n}`,
    service: 'create_file',
    params: { filename: `f${n}.txt`, content: 'x' },
  });

/** `n` calls from one connection at once, and their results in the order they settle. */
function flood(connectionId: string, n: number) {
  const calls = Array.from({ length: n }, (_, i) => create(connectionId, i));
  const settled: Awaited<ReturnType<typeof create>>[] = [];
  for (const c of calls) void c.then((r) => settled.push(r));
  return { calls, settled };
}

describe('a server asking faster than the user can answer', () => {
  it('has at most MAX_WAITING_PROMPTS questions shown; the rest are refused unasked', async () => {
    const shown: string[] = [];
    agent.events.on('prompt', (p) => void shown.push(p.id));
    // Which calls get a question depends on whose preview finishes first: count, do not name.
    const { calls, settled } = flood('flood', 20);
    await until(() => settled.length === 20 - MAX_WAITING_PROMPTS, 'the extra calls refused');
    for (const r of settled) {
      expect(r).toMatchObject({ ok: false, code: 'limit_reached' });
      expect(!r.ok && r.message).toMatch(/already waiting for the user/);
    }
    expect(shown).toHaveLength(MAX_WAITING_PROMPTS);

    // Another server is not held back by this one.
    const other = create('calm', 0);
    await until(() => shown.length === MAX_WAITING_PROMPTS + 1, 'the other server asked');
    agent.answerPrompt(shown.at(-1)!, 'deny');
    expect(await other).toMatchObject({ ok: false, code: 'denied' });

    // An answer frees a place: the flooding server may ask once more.
    agent.answerPrompt(shown[0]!, 'deny');
    await until(() => settled.length === 20 - MAX_WAITING_PROMPTS + 1, 'the answered call');
    expect(settled.at(-1)).toMatchObject({ ok: false, code: 'denied' });
    const again = create('flood', 99);
    await until(() => shown.length === MAX_WAITING_PROMPTS + 2, 'a question in the freed place');
    for (const id of shown) agent.answerPrompt(id, 'deny');
    expect(await again).toMatchObject({ ok: false, code: 'denied' });
    await Promise.all(calls);
  });

  it('counts every MCP app together, as they are paced together', async () => {
    const shown: string[] = [];
    agent.events.on('prompt', (p) => void shown.push(p.id));
    const calls = Array.from({ length: MAX_WAITING_PROMPTS + 2 }, (_, i) =>
      create(`mcp:app-${i}`, i),
    );
    const settled: Awaited<ReturnType<typeof create>>[] = [];
    for (const c of calls) void c.then((r) => settled.push(r));
    await until(() => settled.length === 2, 'the extra calls refused');
    for (const r of settled) expect(r).toMatchObject({ ok: false, code: 'limit_reached' });
    expect(shown).toHaveLength(MAX_WAITING_PROMPTS);
    for (const id of shown) agent.answerPrompt(id, 'deny');
    await Promise.all(calls);
  });
});
