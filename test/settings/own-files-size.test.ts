/**
 * The agent's own files (settings, secrets, reminders) are a few KB in use. One grown huge, by
 * damage or by another program, is set aside unread like one that does not parse: read whole, past
 * 512 MB it cannot even become a string, and the app refused to start.
 */
import { mkdtemp, readdir, rm, truncate, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../app/clock.js';
import { Reminders } from '../../app/services/reminders/reminders.js';
import { MAX_OWN_FILE_BYTES, readBoundedText } from '../../app/settings/atomic.js';
import { defaultSettings } from '../../app/settings/schema.js';
import { FileSecretStore } from '../../app/settings/secrets.js';
import { SettingsStore } from '../../app/settings/store.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'advent-own-'));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

/** A JSON object just past the bound (valid JSON: only the size is wrong with it). */
async function oversized(name: string): Promise<string> {
  const file = path.join(dir, name);
  await writeFile(file, `{"pad":"${'x'.repeat(MAX_OWN_FILE_BYTES)}"}`, { mode: 0o600 });
  return file;
}

const asideIn = async (): Promise<string[]> =>
  (await readdir(dir)).filter((n) => n.includes('corrupt'));

describe("the agent's own files, grown huge", () => {
  it('settings: set aside unread, defaults in use, and the warning says why', async () => {
    const store = await SettingsStore.open(
      await oversized('settings.json'),
      defaultSettings(path.join(dir, 'files')),
    );
    expect(store.warnings).toEqual([
      {
        message: expect.stringMatching(/is too large to be settings \(\d+ bytes\)/),
        words: {
          key: 'notice.settingsTooLarge',
          params: {
            file: path.join(dir, 'settings.json'),
            bytes: expect.any(Number),
            keptAs: expect.stringContaining('settings.json.corrupt-'),
          },
        },
      },
    ]);
    expect(await asideIn()).toHaveLength(1);
  });

  it('secrets: set aside unread, an empty store in use', async () => {
    const store = await FileSecretStore.open(await oversized('secrets.json'));
    expect(await store.get('anything')).toBeUndefined();
    expect(await asideIn()).toHaveLength(1);
  });

  it('reminders: set aside unread, with a warning', async () => {
    const warnings: string[] = [];
    const reminders = await Reminders.open({
      file: await oversized('reminders.json'),
      clock: systemClock,
      warn: (m) => warnings.push(m.message),
    });
    expect(reminders.list()).toEqual([]);
    expect(warnings).toEqual([expect.stringMatching(/moved aside/)]);
    await reminders.close();
  });

  it('a file of 600 MB is not read at all (its size alone says)', async () => {
    const file = path.join(dir, 'huge.json');
    await writeFile(file, '');
    await truncate(file, 600 * 1024 * 1024); // sparse: no disk used
    expect(await readBoundedText(file)).toEqual({ tooLarge: 600 * 1024 * 1024 });
  });
});
