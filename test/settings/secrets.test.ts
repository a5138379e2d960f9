import { chmod, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { inspect } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  FileSecretStore,
  MemorySecretStore,
  type SecretStore,
} from '../../app/settings/secrets.js';
import { FakeClock } from '../helpers/fake-clock.js';

const posix = process.platform !== 'win32';
const SECRET = 'tok-7f3a9c1e-SUPER-SECRET';

let dir: string;
let file: string;

beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'advent-secrets-'));
  file = path.join(dir, 'data', 'secrets.json');
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const mode = async (p: string): Promise<number> => (await stat(p)).mode & 0o777;

async function writeSecretsFile(body: string, fileMode: number): Promise<void> {
  await rm(path.dirname(file), { recursive: true, force: true });
  const store = await FileSecretStore.open(file);
  await store.set('seed', 'x'); // creates the 0700 directory
  await writeFile(file, body);
  await chmod(file, fileMode);
}

describe('FileSecretStore', () => {
  it('starts empty without writing anything when the file does not exist', async () => {
    const store = await FileSecretStore.open(file);
    expect(await store.get('profile:a:token')).toBeUndefined();
    expect(store.warnings).toEqual([]);
    expect(await readdir(dir)).toEqual([]);
  });

  it('keeps values across a reopen, and delete removes them from disk', async () => {
    const store = await FileSecretStore.open(file);
    await store.set('profile:a:token', SECRET);
    await store.set('profile:b:token', 'other');
    expect(await store.get('profile:a:token')).toBe(SECRET);

    await store.delete('profile:b:token');
    const again = await FileSecretStore.open(file);
    expect(await again.get('profile:a:token')).toBe(SECRET);
    expect(await again.get('profile:b:token')).toBeUndefined();
    expect(await readdir(path.dirname(file))).toEqual(['secrets.json']);
  });

  it.runIf(posix)('writes the file with mode 0600 in a 0700 directory', async () => {
    const store = await FileSecretStore.open(file);
    await store.set('k', SECRET);
    expect(await mode(file)).toBe(0o600);
    expect(await mode(path.dirname(file))).toBe(0o700);
  });

  it.runIf(posix)(
    'tightens a group/world readable secrets file to 0600 on open and says so',
    async () => {
      await writeSecretsFile(JSON.stringify({ version: 1, secrets: { k: SECRET } }), 0o644);
      const store = await FileSecretStore.open(file, { platform: 'linux' });

      expect(await mode(file)).toBe(0o600);
      expect(await store.get('k')).toBe(SECRET);
      expect(store.warnings).toHaveLength(1);
      expect(store.warnings[0]).toMatch(/accessible to other users \(mode 644\); it is now 0600/);
      expect(store.warnings[0]).not.toContain(SECRET);
    },
  );

  it('leaves modes alone on Windows, where they mean nothing', async () => {
    await writeSecretsFile(JSON.stringify({ version: 1, secrets: { k: SECRET } }), 0o644);
    const store = await FileSecretStore.open(file, { platform: 'win32' });
    expect(store.warnings).toEqual([]);
    if (posix) expect(await mode(file)).toBe(0o644);
  });

  it('keeps a damaged file aside (0600), starts empty, and never quotes its content', async () => {
    const broken = `{"version":1,"secrets":{"k":"${SECRET}"`;
    await writeSecretsFile(broken, 0o600);
    const store = await FileSecretStore.open(file, { clock: new FakeClock(Date.UTC(2025, 0, 1)) });

    expect(await store.get('k')).toBeUndefined();
    const kept = `${file}.corrupt-2025-01-01T00-00-00-000Z`;
    expect(await readFile(kept, 'utf8')).toBe(broken);
    if (posix) expect(await mode(kept)).toBe(0o600);
    expect(store.warnings[0]).toContain(kept);
    expect(store.warnings.join(' ')).not.toContain(SECRET);
  });

  it('treats a JSON file of the wrong shape as damaged', async () => {
    await writeSecretsFile(JSON.stringify({ version: 1, secrets: { k: 42 } }), 0o600);
    const store = await FileSecretStore.open(file);
    expect(store.warnings[0]).toMatch(/is damaged/);
  });

  it('concurrent sets both land on disk', async () => {
    const store = await FileSecretStore.open(file);
    await Promise.all([
      store.set('a', '1'),
      store.set('b', '2'),
      store.delete('a'),
      store.set('c', '3'),
    ]);
    const again = await FileSecretStore.open(file);
    expect([await again.get('a'), await again.get('b'), await again.get('c')]).toEqual([
      undefined,
      '2',
      '3',
    ]);
  });

  it('a failed write rejects without the value in the message and changes nothing in memory', async () => {
    const store = await FileSecretStore.open(file);
    await store.set('k', 'old');
    await rm(path.dirname(file), { recursive: true });
    await writeFile(path.dirname(file), 'in the way');

    const failure = store.set('k', SECRET);
    await expect(failure).rejects.toThrow(/^Could not save the secrets file/);
    await failure.catch((err: Error) => expect(err.message).not.toContain(SECRET));
    expect(await store.get('k')).toBe('old');
  });

  it('rejects empty keys and non-string values', async () => {
    const store = await FileSecretStore.open(file);
    await expect(store.set('', 'v')).rejects.toThrow(TypeError);
    await expect(store.set('k', 42 as unknown as string)).rejects.toThrow(
      'A secret value must be a string.',
    );
  });
});

describe.each<[string, () => Promise<SecretStore>]>([
  ['FileSecretStore', () => FileSecretStore.open(file)],
  ['MemorySecretStore', async () => new MemorySecretStore()],
])('%s printed form', (_name, make) => {
  it('never shows a secret in String(store), util.inspect or JSON.stringify', async () => {
    const store = await make();
    await store.set('profile:a:token', SECRET);
    const printed = [
      String(store),
      `${store}`,
      inspect(store, { depth: Infinity, showHidden: true }),
      inspect({ nested: { store } }, { depth: Infinity }),
      JSON.stringify({ store }),
    ];
    for (const text of printed) expect(text).not.toContain(SECRET);
    expect(String(store)).toMatch(/1 key\)$/);
  });
});

describe('MemorySecretStore', () => {
  it('round-trips and deletes values', async () => {
    const store = new MemorySecretStore();
    expect(store.kind).toBe('memory');
    await store.set('k', 'v');
    expect(await store.get('k')).toBe('v');
    await store.delete('k');
    expect(await store.get('k')).toBeUndefined();
  });
});
