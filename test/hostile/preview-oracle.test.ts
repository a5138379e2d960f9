/**
 * A server probing the user's files with services that send data away (`private`): before the
 * user says yes, it must learn nothing about them — not that a file exists, nor its size or kind.
 * The preview that looks at the file to word the prompt used to answer such a probe at once
 * ("… does not exist", "… is a folder", "… is a PDF document") without anyone being asked.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Agent } from '../../app/agent.js';
import { MemorySecretStore } from '../../app/settings/secrets.js';
import { nextEvent } from '../helpers/wait.js';

let dir: string;
let agent: Agent;

beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'advent-oracle-'));
  const files = path.join(dir, 'files');
  await mkdir(path.join(files, 'medical'), { recursive: true });
  await writeFile(path.join(files, 'notes.txt'), 'buy milk');
  agent = await Agent.open({
    dataDir: path.join(dir, 'data'),
    defaultFilesRoot: files,
    secrets: new MemorySecretStore(),
    overrides: { filesRoots: [files] },
  });
});

afterEach(async () => {
  await agent.close();
  await rm(dir, { recursive: true, force: true });
});

const probe = (service: string, p: string) =>
  agent.gate.dispatch({
    connection: { id: 's1', name: 'Server' },
    dialect: 'advent',
    callId: `${service}:${p}`,
    service,
    params: { path: p },
  });

describe('a server probing files it may not read', () => {
  it('learns nothing before the user answers: with no one to ask, every probe gets the same refusal', async () => {
    const answers = await Promise.all([
      probe('read_file', 'missing.txt'),
      probe('read_file', 'medical'),
      probe('get_file_info', 'missing.txt'),
      probe('read_file', 'notes.txt'),
    ]);
    for (const a of answers) {
      expect(a).toMatchObject({ ok: false, code: 'no_prompt_ui' });
      expect(!a.ok && a.message).not.toMatch(/exist|folder|bytes|KB/);
    }
  });

  it('asks the user first, naming what the server asked for; a "no" tells it nothing more', async () => {
    agent.broker.attach({ name: 'test-ui' });
    const prompted = nextEvent(agent.events, 'prompt');
    const call = probe('read_file', 'medical/results.pdf');
    const prompt = await prompted;
    expect(prompt.summary).toBe('Read file (path “medical/results.pdf”)');
    agent.answerPrompt(prompt.id, 'deny');
    const answer = await call;
    expect(answer).toMatchObject({ ok: false, code: 'denied' });
    expect(!answer.ok && answer.message).not.toMatch(/exist/);
  });

  it('after a "yes", says what is wrong, as before; the audit shows the user allowed it', async () => {
    agent.broker.attach({ name: 'test-ui' });
    const prompted = nextEvent(agent.events, 'prompt');
    const call = probe('read_file', 'missing.txt');
    agent.answerPrompt((await prompted).id, 'once');
    const answer = await call;
    expect(answer).toMatchObject({ ok: false, code: 'path_invalid' });
    expect(!answer.ok && answer.message).toMatch(/does not exist/);
    await agent.audit.flush();
    const [record] = (await agent.queryAudit({ service: 'read_file' })).records;
    expect(record).toMatchObject({ decision: 'allowed-once', outcome: 'refused' });
  });

  it('still refuses params the schema rejects at once, since they say nothing about the files', async () => {
    expect(await probe('read_file', '')).toMatchObject({ ok: false, code: 'invalid_params' });
  });
});

describe('a server probing names with a service that changes things (create_file)', () => {
  const create = (p: string, content = 'x') =>
    agent.gate.dispatch({
      connection: { id: 's1', name: 'Server' },
      dialect: 'advent',
      callId: `create:${p}`,
      service: 'create_file',
      params: { filename: p, content },
    });

  it('learns nothing of what exists before the user answers', async () => {
    const answers = await Promise.all([
      create('notes.txt'),
      create('medical'),
      create('notes.txt/inside.txt'),
      create('missing.txt'),
    ]);
    for (const a of answers) {
      expect(a).toMatchObject({ ok: false, code: 'no_prompt_ui' });
      expect(!a.ok && a.message).not.toMatch(/exist|folder|not a/);
    }
  });

  it('with create_file set to deny, an existing name and a new one get the same refusal', async () => {
    await agent.settings.update((draft) => {
      draft.services.create_file = { ...draft.services.create_file, policy: 'deny' };
    });
    const [existing, fresh] = await Promise.all([create('notes.txt'), create('new.txt')]);
    expect(existing).toMatchObject({ ok: false, code: 'denied' });
    expect(fresh).toMatchObject({ ok: false, code: 'denied' });
    expect(!existing.ok && !fresh.ok && existing.message).toBe(!fresh.ok && fresh.message);
  });

  it('after a "yes", says the file is there, and nothing was written over', async () => {
    agent.broker.attach({ name: 'test-ui' });
    const prompted = nextEvent(agent.events, 'prompt');
    const call = create('notes.txt', 'overwritten');
    agent.answerPrompt((await prompted).id, 'once');
    expect(await call).toMatchObject({ ok: false, code: 'file_exists' });
    expect(await readFile(path.join(dir, 'files', 'notes.txt'), 'utf8')).toBe('buy milk');
  });
});
