import { mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { inspect } from 'node:util';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  ENCRYPTION_UNAVAILABLE,
  SafeStorageSecretStore,
  WEAK_PROTECTION_WARNING,
} from '../../../main/electron/secrets.js';
import { fakeSafeStorage } from './fake-electron.js';

vi.mock('electron', () => import('./fake-electron.js').then((m) => m.fakeElectron()));

// A JWT-shaped token built at run time (no token-looking literal in the repo).
const TOKEN = `${Buffer.from('{"alg":"HS256"}').toString('base64url')}.${Buffer.from('{"sub":"user"}').toString('base64url')}.c2lnbmF0dXJl-plaintext-token`;

let dir: string;
let file: string;

beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'advent-secrets-'));
  file = path.join(dir, 'userData', 'secrets.json');
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('SafeStorageSecretStore', () => {
  it('round-trips a token through safeStorage and a fresh open', async () => {
    const store = await SafeStorageSecretStore.open(file, {
      safeStorage: fakeSafeStorage(),
      platform: 'linux',
    });
    await store.set('profile:p1:token', TOKEN);
    expect(await store.get('profile:p1:token')).toBe(TOKEN);
    expect(await store.get('profile:other:token')).toBeUndefined();

    const again = await SafeStorageSecretStore.open(file, {
      safeStorage: fakeSafeStorage(),
      platform: 'linux',
    });
    expect(await again.get('profile:p1:token')).toBe(TOKEN);
    await again.delete('profile:p1:token');
    expect(await again.get('profile:p1:token')).toBeUndefined();
    const third = await SafeStorageSecretStore.open(file, {
      safeStorage: fakeSafeStorage(),
      platform: 'linux',
    });
    expect(await third.get('profile:p1:token')).toBeUndefined();
  });

  it('never writes the plaintext to disk, only base64 ciphertexts', async () => {
    const store = await SafeStorageSecretStore.open(file, { safeStorage: fakeSafeStorage() });
    await store.set('profile:p1:token', TOKEN);
    const raw = await readFile(file, 'utf8');
    expect(raw).not.toContain(TOKEN);
    expect(raw).not.toContain('plaintext-token');
    const parsed = JSON.parse(raw) as { version: number; secrets: Record<string, string> };
    expect(parsed.version).toBe(1);
    const cipher = parsed.secrets['profile:p1:token'] ?? '';
    expect(cipher).toMatch(/^[A-Za-z0-9+/]+=*$/);
    expect(Buffer.from(cipher, 'base64').toString('latin1')).not.toContain('plaintext');
    // Atomic replace leaves no temp files behind.
    expect(await readdir(path.dirname(file))).toEqual(['secrets.json']);
  });

  it.runIf(process.platform !== 'win32')('keeps the file private (0600)', async () => {
    const store = await SafeStorageSecretStore.open(file, { safeStorage: fakeSafeStorage() });
    await store.set('k', 'v');
    expect((await stat(file)).mode & 0o777).toBe(0o600);
  });

  it('reports an OS keychain normally and no warning', async () => {
    for (const platform of ['darwin', 'win32', 'linux'] as const) {
      const store = await SafeStorageSecretStore.open(file, {
        safeStorage: fakeSafeStorage(),
        platform,
      });
      expect(store.kind).toBe('os-keychain');
      expect(store.warning).toBeUndefined();
    }
  });

  it('warns when Linux has no keyring (basic_text)', async () => {
    const storage = fakeSafeStorage({ getSelectedStorageBackend: () => 'basic_text' });
    const store = await SafeStorageSecretStore.open(file, {
      safeStorage: storage,
      platform: 'linux',
    });
    expect(store.kind).toBe('basic_text');
    expect(store.warning).toBe(WEAK_PROTECTION_WARNING);
    expect(store.warning).toMatch(
      /^Secrets are stored with weak protection because no system keyring was found/,
    );
    // It still works: weak protection is a warning, not a refusal.
    await store.set('k', TOKEN);
    expect(await store.get('k')).toBe(TOKEN);
  });

  it('refuses to store when encryption is unavailable, with a clear error', async () => {
    const storage = fakeSafeStorage({ isEncryptionAvailable: () => false });
    const encrypt = vi.spyOn(storage, 'encryptString');
    const store = await SafeStorageSecretStore.open(file, { safeStorage: storage });
    await expect(store.set('k', TOKEN)).rejects.toThrow(ENCRYPTION_UNAVAILABLE);
    expect(encrypt).not.toHaveBeenCalled();
    await expect(stat(file)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('treats an undecryptable entry as absent instead of failing the start', async () => {
    const store = await SafeStorageSecretStore.open(file, { safeStorage: fakeSafeStorage() });
    await store.set('k', TOKEN);
    const other = await SafeStorageSecretStore.open(file, {
      safeStorage: fakeSafeStorage({
        decryptString: () => {
          throw new Error('Error while decrypting the ciphertext');
        },
      }),
    });
    expect(await other.get('k')).toBeUndefined();
  });

  it('opens a damaged file as empty (only ciphertexts are lost)', async () => {
    const store = await SafeStorageSecretStore.open(file, { safeStorage: fakeSafeStorage() });
    await store.set('k', 'v');
    await writeFile(file, '{ not json');
    const reopened = await SafeStorageSecretStore.open(file, { safeStorage: fakeSafeStorage() });
    expect(await reopened.get('k')).toBeUndefined();
  });

  it('never shows a value in its printed form or error messages', async () => {
    const store = await SafeStorageSecretStore.open(file, { safeStorage: fakeSafeStorage() });
    await store.set('k', TOKEN);
    for (const shown of [String(store), JSON.stringify(store), inspect(store)]) {
      expect(shown).not.toContain(TOKEN);
      expect(shown).toContain('1 key');
    }
    const failing = await SafeStorageSecretStore.open(file, {
      safeStorage: fakeSafeStorage({
        encryptString: () => {
          throw new Error('keychain locked');
        },
      }),
    });
    const err = (await failing.set('k2', TOKEN).then(
      () => new Error('expected a rejection'),
      (e: unknown) => e,
    )) as Error;
    expect(err.message).toMatch(/keychain locked/);
    expect(err.message).not.toContain(TOKEN);
  });

  it('serializes concurrent writes', async () => {
    const store = await SafeStorageSecretStore.open(file, { safeStorage: fakeSafeStorage() });
    await Promise.all(Array.from({ length: 10 }, (_, i) => store.set(`k${i}`, `v${i}`)));
    const reopened = await SafeStorageSecretStore.open(file, { safeStorage: fakeSafeStorage() });
    for (let i = 0; i < 10; i++) expect(await reopened.get(`k${i}`)).toBe(`v${i}`);
  });

  it('rejects bad keys and values', async () => {
    const store = await SafeStorageSecretStore.open(file, { safeStorage: fakeSafeStorage() });
    await expect(store.set('', 'v')).rejects.toThrow(TypeError);
    await expect(store.set('k', 42 as unknown as string)).rejects.toThrow(TypeError);
    await expect(store.get('')).rejects.toThrow(TypeError);
  });
});
