import { mkdtemp, mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { defaultSettings, type Settings } from '../../app/settings/schema.js';
import { SettingsStore } from '../../app/settings/store.js';
import { FakeClock } from '../helpers/fake-clock.js';

const posix = process.platform !== 'win32';
const STAMP = Date.UTC(2025, 0, 31, 12, 3, 4, 5);
const STAMP_TEXT = '2025-01-31T12-03-04-005Z';

let dir: string;
let file: string;
const defaults = (): Settings => defaultSettings('/home/me/Documents/Advent Agent');

beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'advent-settings-'));
  file = path.join(dir, 'settings.json');
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const readJson = async (p: string): Promise<unknown> => JSON.parse(await readFile(p, 'utf8'));

describe('SettingsStore.open', () => {
  it('uses the defaults when the file is missing and writes nothing until the first save', async () => {
    const store = await SettingsStore.open(file, defaults());
    expect(store.get()).toEqual(defaults());
    expect(store.warnings).toEqual([]);
    expect(await readdir(dir)).toEqual([]);
  });

  it('keeps connection profiles of every kind, and sets aside a file with a profile no kind allows', async () => {
    const connections: Settings['connections'] = [
      { id: 'a', kind: 'advent', name: 'A', host: 'h', port: 8009, mode: 'vad' },
      {
        id: 'x',
        kind: 'xiaozhi',
        name: 'X',
        url: 'ws://h:8000/xiaozhi/v1/',
        deviceId: 'aa:bb:cc:dd:ee:ff',
        clientId: '123e4567-e89b-42d3-a456-426614174000',
        protocolVersion: 3,
        listenMode: 'auto',
      },
      { id: 'e', kind: 'endpoint', name: 'E', url: 'wss://h/mcp/' },
      { id: 'r', kind: 'robot', name: 'R', url: 'ws://h:8888/ws', macAddr: 'AA-BB-CC-DD-EE-FF' },
    ];
    await writeFile(file, JSON.stringify({ ...defaults(), connections }));
    expect((await SettingsStore.open(file, defaults())).get().connections).toEqual(connections);

    // A robot profile with an Advent field matches no kind: the file is not trusted.
    const bad = [{ id: 'r', kind: 'robot', name: 'R', url: 'ws://h/ws', host: 'h' }];
    await writeFile(file, JSON.stringify({ ...defaults(), connections: bad }));
    const store = await SettingsStore.open(file, defaults());
    expect(store.get().connections).toEqual([]);
    expect(store.warnings.map((w) => w.message).join(' ')).toMatch(/corrupt/);
  });

  it('loads a valid file as it is', async () => {
    const saved = { ...defaults(), theme: 'dark', promptTimeoutSec: 30 };
    await writeFile(file, JSON.stringify(saved));
    const store = await SettingsStore.open(file, defaults());
    expect(store.get()).toEqual(saved);
    expect(store.warnings).toEqual([]);
  });

  it('accepts a file starting with a byte-order mark', async () => {
    await writeFile(file, `\uFEFF${JSON.stringify({ ...defaults(), language: 'zh-CN' })}`);
    const store = await SettingsStore.open(file, defaults());
    expect(store.get().language).toBe('zh-CN');
  });

  it('keeps corrupt JSON aside as settings.json.corrupt-<timestamp>, uses defaults and warns in one sentence', async () => {
    const garbage = '{"version": 1, "theme": "dark",';
    await writeFile(file, garbage);
    const store = await SettingsStore.open(file, defaults(), { clock: new FakeClock(STAMP) });

    expect(store.get()).toEqual(defaults());
    const kept = `${file}.corrupt-${STAMP_TEXT}`;
    expect(await readFile(kept, 'utf8')).toBe(garbage);
    expect(await readdir(dir)).toEqual([path.basename(kept)]);
    expect(store.warnings).toHaveLength(1);
    const [warning] = store.warnings;
    expect(warning?.message).toContain('not readable JSON');
    expect(warning?.message).toContain(kept);
    expect(warning?.message.split('. ').length).toBe(1);
    // …and in words a window translates, the paths as they are.
    expect(warning?.words).toEqual({
      key: 'notice.settingsNotJson',
      params: { file, reason: expect.any(String), keptAs: kept },
    });
  });

  it('keeps a schema-invalid file aside and names the problem in readable words', async () => {
    await writeFile(file, JSON.stringify({ ...defaults(), promptTimeoutSec: 1, colour: 'red' }));
    const store = await SettingsStore.open(file, defaults(), { clock: new FakeClock(STAMP) });

    expect(store.get()).toEqual(defaults());
    expect(store.warnings[0]?.message).toContain('promptTimeoutSec must be at least 5');
    expect(store.warnings[0]?.message).toContain('unknown key "colour"');
    expect(store.warnings[0]?.words).toMatchObject({
      key: 'notice.settingsInvalid',
      params: { file, keptAs: `${file}.corrupt-${STAMP_TEXT}` },
    });
    expect(store.warnings[0]?.words?.params).toHaveProperty(
      'reason',
      expect.stringContaining('promptTimeoutSec must be at least 5'),
    );
    expect(await readJson(`${file}.corrupt-${STAMP_TEXT}`)).toMatchObject({ promptTimeoutSec: 1 });
  });

  it('never overwrites an earlier corrupt copy made at the same instant', async () => {
    const clock = new FakeClock(STAMP);
    await writeFile(file, 'first');
    await SettingsStore.open(file, defaults(), { clock });
    await writeFile(file, 'second');
    const store = await SettingsStore.open(file, defaults(), { clock });

    expect(await readFile(`${file}.corrupt-${STAMP_TEXT}`, 'utf8')).toBe('first');
    expect(await readFile(`${file}.corrupt-${STAMP_TEXT}-1`, 'utf8')).toBe('second');
    expect(store.warnings[0]?.message).toContain(`corrupt-${STAMP_TEXT}-1`);
  });

  it('refuses to start on a file it cannot read rather than overwrite it later', async () => {
    await mkdir(file);
    await expect(SettingsStore.open(file, defaults())).rejects.toThrow(
      /Cannot read the settings file/,
    );
  });

  it('refuses invalid defaults: that is a programming error', async () => {
    await expect(SettingsStore.open(file, { ...defaults(), promptTimeoutSec: 0 })).rejects.toThrow(
      /Default settings are invalid: promptTimeoutSec must be at least 5/,
    );
  });
});

describe('SettingsStore.update', () => {
  it('saves the change, and a fresh open reads it back', async () => {
    const store = await SettingsStore.open(file, defaults());
    const next = await store.update((s) => {
      s.theme = 'dark';
      s.services.create_file = { policy: 'deny' };
    });
    expect(next.theme).toBe('dark');
    expect(store.get()).toBe(next);
    expect((await SettingsStore.open(file, defaults())).get()).toEqual(next);
  });

  it('hands out a deeply frozen snapshot that cannot be changed behind the store', async () => {
    const store = await SettingsStore.open(file, defaults());
    const snapshot = store.get();
    expect(() => {
      snapshot.files.roots.push('/etc');
    }).toThrow(TypeError);
    expect(store.get().files.roots).toHaveLength(1);
  });

  it.runIf(posix)(
    'writes the file with mode 0600 in a directory created with mode 0700',
    async () => {
      const nested = path.join(dir, 'data', 'advent-agent', 'settings.json');
      const store = await SettingsStore.open(nested, defaults());
      await store.update((s) => {
        s.theme = 'light';
      });
      expect((await stat(nested)).mode & 0o777).toBe(0o600);
      expect((await stat(path.dirname(nested))).mode & 0o777).toBe(0o700);
      expect((await stat(path.join(dir, 'data'))).mode & 0o777).toBe(0o700);
    },
  );

  it('atomic save leaves no temp files behind', async () => {
    const store = await SettingsStore.open(file, defaults());
    for (let i = 0; i < 5; i++) {
      await store.update((s) => {
        s.promptTimeoutSec = 10 + i;
      });
    }
    expect(await readdir(dir)).toEqual(['settings.json']);
    expect(await readJson(file)).toMatchObject({ promptTimeoutSec: 14 });
  });

  it('rejects a schema-invalid update with a clear message, writes nothing and keeps the state', async () => {
    const store = await SettingsStore.open(file, defaults());
    await store.update((s) => {
      s.theme = 'dark';
    });
    const before = await readFile(file, 'utf8');
    const beforeStat = await stat(file);
    const snapshot = store.get();
    let changes = 0;
    store.on('changed', () => changes++);

    await expect(
      store.update((s) => {
        s.promptTimeoutSec = 2;
        s.files.maxFileBytes = 0;
      }),
    ).rejects.toThrow(
      /^Settings not saved: files\.maxFileBytes must be at least 1; promptTimeoutSec must be at least 5\.$/,
    );

    expect(store.get()).toBe(snapshot);
    expect(await readFile(file, 'utf8')).toBe(before);
    expect((await stat(file)).mtimeMs).toBe(beforeStat.mtimeMs);
    expect(await readdir(dir)).toEqual(['settings.json']);
    expect(changes).toBe(0);
  });

  it('validates what JSON will store, so NaN cannot sneak in as null', async () => {
    const store = await SettingsStore.open(file, defaults());
    await expect(
      store.update((s) => {
        s.promptTimeoutSec = Number.NaN;
      }),
    ).rejects.toThrow(/promptTimeoutSec must be of type integer/);
  });

  it('concurrent updates both land, in call order', async () => {
    const store = await SettingsStore.open(file, defaults());
    const [a, b] = await Promise.all([
      store.update((s) => {
        s.theme = 'dark';
        s.alwaysGrants.push('create_file');
      }),
      store.update((s) => {
        s.language = 'zh-CN';
        s.alwaysGrants.push('delete_file');
      }),
    ]);
    expect(a.theme).toBe('dark');
    expect(b).toMatchObject({
      theme: 'dark',
      language: 'zh-CN',
      alwaysGrants: ['create_file', 'delete_file'],
    });
    expect(await readJson(file)).toEqual(b);
  });

  it('a throwing mutator rejects without blocking the updates queued after it', async () => {
    const store = await SettingsStore.open(file, defaults());
    const failing = store.update(() => {
      throw new Error('mutator broke');
    });
    const next = store.update((s) => {
      s.theme = 'light';
    });
    await expect(failing).rejects.toThrow('mutator broke');
    await expect(next).resolves.toMatchObject({ theme: 'light' });
  });

  it('a disk write failure rejects clearly and leaves memory at the last saved value', async () => {
    const sub = path.join(dir, 'sub');
    const target = path.join(sub, 'settings.json');
    const store = await SettingsStore.open(target, defaults());
    const saved = await store.update((s) => {
      s.theme = 'dark';
    });
    // A file where the directory should be fails even for root, unlike a chmod.
    await rm(sub, { recursive: true });
    await writeFile(sub, 'in the way');

    await expect(
      store.update((s) => {
        s.theme = 'light';
      }),
    ).rejects.toThrow(
      /^Could not save settings to .*settings\.json \(.+\); the previous settings stay in effect\.$/,
    );
    expect(store.get()).toBe(saved);

    await rm(sub);
    await expect(
      store.update((s) => {
        s.language = 'zh-CN';
      }),
    ).resolves.toMatchObject({ theme: 'dark', language: 'zh-CN' });
  });

  it("emits 'changed' once per saved update with the new settings", async () => {
    const store = await SettingsStore.open(file, defaults());
    const seen: Settings[] = [];
    store.on('changed', (s) => seen.push(s));
    const next = await store.update((s) => {
      s.theme = 'dark';
    });
    expect(seen).toEqual([next]);
    expect(seen[0]).toBe(store.get());
  });
});
