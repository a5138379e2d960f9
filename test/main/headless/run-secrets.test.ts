import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { inspect } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FileSecretStore } from '../../../app/settings/secrets.js';
import { RunSecretStore } from '../../../main/headless/run-secrets.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'advent-run-secrets-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('RunSecretStore', () => {
  it('keeps a key marked for memory off disk, and passes every other key to the saved store', async () => {
    const file = path.join(dir, 'secrets.json');
    const saved = await FileSecretStore.open(file);
    const store = new RunSecretStore(saved);
    store.keepInMemory('profile:cli:token');

    await store.set('profile:cli:token', 'flag-token');
    expect(await store.get('profile:cli:token')).toBe('flag-token');
    expect(existsSync(file)).toBe(false);

    await store.set('profile:p-1:token', 'saved-token');
    expect(await saved.get('profile:p-1:token')).toBe('saved-token');
    const text = await readFile(file, 'utf8');
    expect(text).toContain('saved-token');
    expect(text).not.toContain('flag-token');

    await store.delete('profile:cli:token');
    expect(await store.get('profile:cli:token')).toBeUndefined();
    expect(await store.get('profile:p-1:token')).toBe('saved-token');
    expect(store.kind).toBe('file');
  });

  it('never shows a value when printed', async () => {
    const store = new RunSecretStore(await FileSecretStore.open(path.join(dir, 's.json')));
    store.keepInMemory('k');
    await store.set('k', 'hush-hush');
    expect(inspect(store) + String(store) + JSON.stringify({ store })).not.toContain('hush-hush');
  });
});
