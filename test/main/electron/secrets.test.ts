import { mkdir, mkdtemp, readFile, readdir, rm, stat, truncate, writeFile } from 'node:fs/promises';
import { MAX_OWN_FILE_BYTES } from '../../../app/settings/atomic.js';
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

  it('warns when Linux has no keyring (basic_text), and still saves the token', async () => {
    // Electron's rule (electron_api_safe_storage.cc, SafeStorage::IsEncryptionAvailable): with the
    // basic_text backend nothing is available until setUsePlainTextEncryption(true) is called.
    const storage = fakeSafeStorage({ backend: 'basic_text' });
    expect(storage.isEncryptionAvailable()).toBe(false);
    expect(await storage.isAsyncEncryptionAvailable()).toBe(false);
    const store = await SafeStorageSecretStore.open(file, {
      safeStorage: storage,
      platform: 'linux',
    });
    expect(store.kind).toBe('basic_text');
    expect(store.warning).toBe(WEAK_PROTECTION_WARNING);
    expect(store.warning).toMatch(
      /^Secrets are stored with weak protection because no system keyring was found/,
    );
    // Weak but working: the store opted in to Electron's hardcoded key, as the warning says.
    expect(storage.setUsePlainTextEncryption).toHaveBeenCalledWith(true);
    await store.set('k', TOKEN);
    expect(await store.get('k')).toBe(TOKEN);
    expect(await readFile(file, 'utf8')).not.toContain('plaintext-token');
  });

  it('never opts in to the hardcoded key where a keyring exists, or off Linux', async () => {
    for (const [platform, backend] of [
      ['linux', 'gnome_libsecret'],
      ['linux', 'kwallet6'],
      ['darwin', 'basic_text'],
      ['win32', 'basic_text'],
    ] as const) {
      const storage = fakeSafeStorage({ backend, platform });
      const store = await SafeStorageSecretStore.open(file, { safeStorage: storage, platform });
      expect(store.kind).toBe('os-keychain');
      expect(storage.setUsePlainTextEncryption).not.toHaveBeenCalled();
    }
  });

  it('uses only the async API (the sync one is deprecated in Electron 45 and can block)', async () => {
    const storage = fakeSafeStorage();
    const store = await SafeStorageSecretStore.open(file, { safeStorage: storage });
    await store.set('k', TOKEN);
    expect(await store.get('k')).toBe(TOKEN);
    await store.delete('k');
    expect(storage.encryptStringAsync).toHaveBeenCalledTimes(1);
    expect(storage.decryptStringAsync).toHaveBeenCalledTimes(1);
    expect(storage.isEncryptionAvailable).not.toHaveBeenCalled();
    expect(storage.encryptString).not.toHaveBeenCalled();
    expect(storage.decryptString).not.toHaveBeenCalled();
  });

  it('re-encrypts a token when safeStorage says shouldReEncrypt (a keyring came back)', async () => {
    // Saved without a keyring (v10, the hardcoded key)…
    const weak = await SafeStorageSecretStore.open(file, {
      safeStorage: fakeSafeStorage({ backend: 'basic_text' }),
      platform: 'linux',
    });
    await weak.set('k', TOKEN);
    const before = JSON.parse(await readFile(file, 'utf8')) as { secrets: Record<string, string> };
    // …read once a keyring is there: decryptStringAsync says shouldReEncrypt (electron.d.ts,
    // DecryptStringAsyncReturnValue), so the store saves it again under the better key.
    const strong = fakeSafeStorage({ backend: 'gnome_libsecret' });
    const store = await SafeStorageSecretStore.open(file, {
      safeStorage: strong,
      platform: 'linux',
    });
    expect(await store.get('k')).toBe(TOKEN);
    const after = JSON.parse(await readFile(file, 'utf8')) as { secrets: Record<string, string> };
    expect(after.secrets.k).not.toBe(before.secrets.k);
    expect(
      Buffer.from(after.secrets.k ?? '', 'base64')
        .subarray(0, 3)
        .toString(),
    ).toBe('v11');
    expect(strong.encryptStringAsync).toHaveBeenCalledTimes(1);
    // Read again: nothing left to re-encrypt.
    expect(await store.get('k')).toBe(TOKEN);
    expect(strong.encryptStringAsync).toHaveBeenCalledTimes(1);
  });

  it('a re-encryption never overwrites a token saved meanwhile', async () => {
    const weak = await SafeStorageSecretStore.open(file, {
      safeStorage: fakeSafeStorage({ backend: 'basic_text' }),
      platform: 'linux',
    });
    await weak.set('k', 'old-token');
    const strong = fakeSafeStorage({ backend: 'gnome_libsecret' });
    // The re-encryption of the old token is slow (a Keychain prompt, say)…
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const encrypt = strong.encryptStringAsync.getMockImplementation();
    strong.encryptStringAsync.mockImplementationOnce(async (plain: string) => {
      await gate;
      return (await encrypt?.(plain)) ?? Buffer.alloc(0);
    });
    const store = await SafeStorageSecretStore.open(file, {
      safeStorage: strong,
      platform: 'linux',
    });
    const reading = store.get('k');
    await vi.waitFor(() => expect(strong.encryptStringAsync).toHaveBeenCalledTimes(1));
    // …and the user saves a new token meanwhile.
    await store.set('k', 'new-token');
    release();
    expect(await reading).toBe('old-token');
    const reopened = await SafeStorageSecretStore.open(file, { safeStorage: fakeSafeStorage() });
    expect(await reopened.get('k')).toBe('new-token');
  });

  it('refuses to store when encryption is unavailable, with a clear error', async () => {
    // A refused Keychain (macOS) or a locked keyring: isAsyncEncryptionAvailable() is false.
    const storage = fakeSafeStorage({ keyAvailable: false, platform: 'darwin' });
    const store = await SafeStorageSecretStore.open(file, {
      safeStorage: storage,
      platform: 'darwin',
    });
    await expect(store.set('k', TOKEN)).rejects.toThrow(ENCRYPTION_UNAVAILABLE);
    expect(storage.encryptStringAsync).not.toHaveBeenCalled();
    await expect(stat(file)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('treats an undecryptable entry as absent instead of failing the start', async () => {
    const store = await SafeStorageSecretStore.open(file, { safeStorage: fakeSafeStorage() });
    await store.set('k', TOKEN);
    // Another machine's keyring key (a copied profile): Electron rejects the decryption.
    const other = fakeSafeStorage();
    other.decryptStringAsync.mockRejectedValue(
      new Error(
        'Error while decrypting the ciphertext provided to safeStorage.decryptStringAsync.',
      ),
    );
    const copied = await SafeStorageSecretStore.open(file, { safeStorage: other });
    expect(await copied.get('k')).toBeUndefined();
    // A keyring that is only locked for now ("temporarily unavailable") loses nothing either.
    other.decryptStringAsync.mockRejectedValue(
      new Error('safeStorage.decryptStringAsync is temporarily unavailable. Please try again.'),
    );
    expect(await copied.get('k')).toBeUndefined();
    const later = await SafeStorageSecretStore.open(file, { safeStorage: fakeSafeStorage() });
    expect(await later.get('k')).toBe(TOKEN);
  });

  it('sets a damaged file aside and says where, so the next save does not erase it', async () => {
    const store = await SafeStorageSecretStore.open(file, { safeStorage: fakeSafeStorage() });
    await store.set('k', 'v');
    await writeFile(file, '{ not json');
    const reopened = await SafeStorageSecretStore.open(file, { safeStorage: fakeSafeStorage() });
    expect(await reopened.get('k')).toBeUndefined();
    expect(reopened.warning).toMatch(/could not be read .* kept as .*corrupt/);
    await reopened.set('other', 'w');
    const aside = (await readdir(path.dirname(file))).filter((f) => f.includes('corrupt'));
    expect(aside).toHaveLength(1);
    expect(await readFile(path.join(path.dirname(file), aside[0]!), 'utf8')).toBe('{ not json');
  });

  it('keeps the tokens of a file from a newer version aside rather than losing them on a save', async () => {
    // A downgrade: the older app cannot read the file, and must not replace it with one token.
    const store = await SafeStorageSecretStore.open(file, { safeStorage: fakeSafeStorage() });
    await store.set('profile:p1:token', TOKEN);
    const newer = JSON.stringify({ ...JSON.parse(await readFile(file, 'utf8')), version: 2 });
    await writeFile(file, newer);
    const older = await SafeStorageSecretStore.open(file, { safeStorage: fakeSafeStorage() });
    expect(older.warning).toMatch(/newer version/);
    await older.set('profile:p2:token', 'second');
    const aside = (await readdir(path.dirname(file))).filter((f) => f.includes('corrupt'));
    expect(await readFile(path.join(path.dirname(file), aside[0]!), 'utf8')).toBe(newer);
  });

  it('reads a file an editor saved with a byte order mark', async () => {
    const store = await SafeStorageSecretStore.open(file, { safeStorage: fakeSafeStorage() });
    await store.set('profile:p1:token', TOKEN);
    await writeFile(file, `\uFEFF${await readFile(file, 'utf8')}`);
    const reopened = await SafeStorageSecretStore.open(file, { safeStorage: fakeSafeStorage() });
    expect(await reopened.get('profile:p1:token')).toBe(TOKEN);
    expect(reopened.warning).toBeUndefined();
  });

  it('starts with a file too large to be its own, set aside unread', async () => {
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, '');
    await truncate(file, MAX_OWN_FILE_BYTES + 1); // sparse: no disk is filled
    const store = await SafeStorageSecretStore.open(file, { safeStorage: fakeSafeStorage() });
    expect(store.warning).toMatch(/too large/);
    expect(await store.get('anything')).toBeUndefined();
  });

  it('never shows a value in its printed form or error messages', async () => {
    const store = await SafeStorageSecretStore.open(file, { safeStorage: fakeSafeStorage() });
    await store.set('k', TOKEN);
    for (const shown of [String(store), JSON.stringify(store), inspect(store)]) {
      expect(shown).not.toContain(TOKEN);
      expect(shown).toContain('1 key');
    }
    const locked = fakeSafeStorage();
    locked.encryptStringAsync.mockRejectedValue(new Error('keychain locked'));
    const failing = await SafeStorageSecretStore.open(file, { safeStorage: locked });
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
