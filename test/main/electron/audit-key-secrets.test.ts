/**
 * The audit chain's key kept by safeStorage when the keyring cannot be read at one start (locked
 * at login, or its encryption unavailable): the stored key is never replaced by a new one, the
 * user is told, and verify names the records written meanwhile instead of calling them tampered.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Agent } from '../../../app/agent.js';
import { SafeStorageSecretStore } from '../../../main/electron/secrets.js';
import { fakeSafeStorage } from './fake-electron.js';

vi.mock('electron', () => import('./fake-electron.js').then((m) => m.fakeElectron()));

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'advent-audit-key-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

type Keyring = 'open' | 'locked' | 'unavailable';

/** The safeStorage of one start: its keyring open, locked (decryption refused), or unavailable. */
function keyring(state: Keyring): ReturnType<typeof fakeSafeStorage> {
  const storage = fakeSafeStorage({ keyAvailable: state !== 'unavailable' });
  if (state === 'locked')
    storage.decryptStringAsync.mockRejectedValue(
      new Error('safeStorage.decryptStringAsync is temporarily unavailable. Please try again.'),
    );
  return storage;
}

async function start(state: Keyring): Promise<Agent> {
  const dataDir = path.join(dir, 'data');
  const files = path.join(dir, 'files');
  return Agent.open({
    dataDir,
    defaultFilesRoot: files,
    secrets: await SafeStorageSecretStore.open(path.join(dataDir, 'secrets.safe.json'), {
      safeStorage: keyring(state),
      platform: 'linux',
    }),
    overrides: { filesRoots: [files], policies: { create_file: 'allow' } },
  });
}

async function createFile(agent: Agent, name: string): Promise<void> {
  const r = await agent.dispatch({
    connection: { id: 's', name: 's' },
    dialect: 'advent',
    callId: name,
    service: 'create_file',
    params: { filename: `${name}.txt`, content: name },
  });
  expect(r.ok).toBe(true);
}

const ciphers = async (): Promise<Record<string, string>> =>
  (
    JSON.parse(await readFile(path.join(dir, 'data', 'secrets.safe.json'), 'utf8')) as {
      secrets: Record<string, string>;
    }
  ).secrets;

describe.each<Keyring>(['locked', 'unavailable'])('a keyring %s at one start', (state) => {
  it('keeps the stored key, tells the user, and names the records written meanwhile', async () => {
    let agent = await start('open');
    await createFile(agent, 'a'); // seq 1 (intent) and 2
    expect(await agent.verifyAudit()).toMatchObject({ ok: true, keyCheck: 'checked' });
    await agent.close();
    const before = await ciphers();

    agent = await start(state);
    expect(agent.startupNotices.map((n) => n.message).join('\n')).toMatch(
      /audit log's key cannot be read now/,
    );
    // A window shows it in the reader's language.
    expect(agent.startupNotices.map((n) => n.words?.key)).toContain('notice.auditKeyUnavailable');
    await createFile(agent, 'b'); // seq 3 and 4, without MACs
    const during = await agent.verifyAudit();
    expect(during).toMatchObject({ ok: false, firstBadSeq: 3 });
    expect(!during.ok && during.reason).toMatch(
      /^records 3–4 were recorded while the log's key could not be read/,
    );
    await agent.close();
    // The key's ciphertext, and every other entry of the chain, as they were.
    expect(await ciphers()).toEqual(before);

    agent = await start('open');
    expect(agent.startupNotices.map((n) => n.message).join('\n')).toMatch(
      /records 3–4 carry no keyed MAC/,
    );
    expect(agent.startupNotices.map((n) => n.words)).toContainEqual({
      key: 'notice.auditUnchecked',
      params: { from: 3, to: 4 },
    });
    await createFile(agent, 'c');
    const after = await agent.verifyAudit();
    // The old key still checks records 1-2 and 5-6; 3-4 are named, not called re-chained.
    expect(after).toMatchObject({ ok: false, firstBadSeq: 3, keyCheck: 'checked', records: 3 });
    expect(!after.ok && after.reason).toMatch(
      /^records 3–4 carry no keyed MAC .*could not be read/,
    );
    await agent.close();
  });
});

describe('SafeStorageSecretStore.has', () => {
  it('tells a value out of reach now from one never stored', async () => {
    const file = path.join(dir, 'secrets.safe.json');
    await (await SafeStorageSecretStore.open(file, { safeStorage: keyring('open') })).set('k', 'v');
    for (const state of ['locked', 'unavailable'] as const) {
      const store = await SafeStorageSecretStore.open(file, { safeStorage: keyring(state) });
      expect(await store.get('k')).toBeUndefined();
      expect(await store.has('k')).toBe(true);
      expect(await store.has('other')).toBe(false);
    }
  });
});
