import { mkdir, readFile, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Agent } from '../../../app/agent.js';
import { createFilesSandbox, type FilesSandbox } from '../../../app/services/files/sandbox.js';
import { MemorySecretStore } from '../../../app/settings/secrets.js';
import { refusal, tempDirs } from '../helpers.js';

// The home folder is a common allowed folder, and the agent's data folder lives inside it
// (~/.config/advent-agent): a prompt-injected server must not read the keys, rewrite the
// policies, or edit the audit log that records it, even with the user's "yes" to a vague prompt.

const dirs = tempDirs();
let home: string;
let dataDir: string;

beforeEach(async () => {
  home = await dirs.make('advent-home-');
  dataDir = path.join(home, '.config', 'advent-agent');
  await mkdir(path.join(dataDir, 'audit'), { recursive: true });
  await writeFile(path.join(dataDir, 'settings.json'), '{"policies":{}}');
  await writeFile(path.join(dataDir, 'secrets.json'), '{"audit-key":"KEY"}');
  await writeFile(path.join(home, 'notes.txt'), 'buy milk');
});

afterEach(() => dirs.cleanup());

describe.each(['anchored', 'checked'] as const)("the agent's own data folder (%s)", (holdMode) => {
  let files: FilesSandbox;
  beforeEach(() => {
    files = createFilesSandbox({
      roots: () => [home],
      maxFileBytes: () => 1024,
      holdMode,
      protectedFolders: () => [dataDir],
    });
  });

  it('is never read, listed or written, though the allowed folder holds it', async () => {
    for (const p of ['.config/advent-agent/secrets.json', '.config/advent-agent/settings.json']) {
      const err = await refusal(files.resolveEntry(p, 'file'));
      expect(err.code).toBe('path_outside_roots');
      expect(err.message).toMatch(/agent's own data folder/);
    }
    expect((await refusal(files.resolveEntry('.config/advent-agent', 'folder'))).code).toBe(
      'path_outside_roots',
    );
    expect((await refusal(files.resolve('.config/advent-agent/settings.json'))).code).toBe(
      'path_outside_roots',
    );
    expect((await refusal(files.resolve('.config/advent-agent/audit/new.jsonl'))).code).toBe(
      'path_outside_roots',
    );
    // Everything else in the allowed folder is as reachable as before.
    const notes = await files.resolveEntry('notes.txt', 'file');
    expect(Buffer.from((await files.readFile(notes, 1024)).bytes).toString()).toBe('buy milk');
    expect(await readFile(path.join(dataDir, 'settings.json'), 'utf8')).toBe('{"policies":{}}');
  });

  it('cannot be reached through a link inside the allowed folder', async () => {
    await symlink(dataDir, path.join(home, 'shortcut'));
    const err = await refusal(files.resolveEntry('shortcut/secrets.json', 'file'));
    expect(err.code).toBe('path_outside_roots');
  });

  it('is passed over by a walk of the folder around it', async () => {
    const seen: string[] = [];
    const start = await files.resolveEntry('.', 'folder');
    await files.walk(start, (item) => void seen.push(item.relative), {
      maxDepth: 8,
      maxPerFolder: 100,
    });
    expect(seen).toContain('notes.txt');
    expect(seen).toContain('.config');
    expect(seen.some((p) => p.startsWith(path.join('.config', 'advent-agent')))).toBe(false);
  });

  it('is passed over by a walk that starts at a link to a folder around it', async () => {
    // A dotfiles convenience link: the walk goes down the real .config, so the check must too.
    await symlink(path.join(home, '.config'), path.join(home, 'config'));
    const seen: string[] = [];
    const start = await files.resolveEntry('config', 'folder');
    await files.walk(start, (item) => void seen.push(item.relative), {
      maxDepth: 8,
      maxPerFolder: 100,
    });
    expect(seen).toEqual([]);
    await mkdir(path.join(home, '.config', 'other'));
    await files.walk(start, (item) => void seen.push(item.relative), {
      maxDepth: 8,
      maxPerFolder: 100,
    });
    expect(seen).toEqual([path.join('config', 'other')]);
  });

  it('is not read or written through a link turned towards it after the path was checked', async () => {
    // The prompt may wait a minute: a local process can point the link elsewhere meanwhile.
    await mkdir(path.join(home, 'decoy'));
    await writeFile(path.join(home, 'decoy', 'secrets.json'), 'nothing here');
    await symlink(path.join(home, 'decoy'), path.join(home, 'link'));
    const entry = await files.resolveEntry('link/secrets.json', 'file');
    const target = await files.resolve('link/new.txt');
    await rm(path.join(home, 'link'));
    await symlink(dataDir, path.join(home, 'link'));

    const read = await refusal(files.readFile(entry, 1024));
    expect(read.code).toBe('path_outside_roots');
    expect(read.message).toMatch(/agent's own data folder/);
    expect((await refusal(files.readStart(entry, 1024))).code).toBe('path_outside_roots');
    expect((await refusal(files.info(entry))).code).toBe('path_outside_roots');
    expect((await refusal(files.writeNew(target, 'planted'))).code).toBe('path_outside_roots');
    expect((await readdir(dataDir)).sort()).toEqual(['audit', 'secrets.json', 'settings.json']);
  });

  it('refuses at the moment of reading an entry resolved before the folder became protected', async () => {
    const entry = await files.resolveEntry('notes.txt', 'file');
    const moved = createFilesSandbox({
      roots: () => [home],
      maxFileBytes: () => 1024,
      holdMode,
      protectedFolders: () => [home],
    });
    expect((await refusal(moved.readFile(entry, 1024))).code).toBe('path_outside_roots');
  });
});

describe("the agent's data folder, through the gate", () => {
  it('a call to read the settings is refused even with the home folder allowed', async () => {
    const agent = await Agent.open({
      dataDir,
      defaultFilesRoot: home,
      secrets: new MemorySecretStore(),
      overrides: { filesRoots: [home], policies: { read_file: 'allow', search_files: 'allow' } },
    });
    try {
      const read = (p: string) =>
        agent.gate.dispatch({
          connection: { id: 'c1', name: 'Server' },
          dialect: 'advent',
          callId: p,
          service: 'read_file',
          params: { path: p },
        });
      const refused = await read('.config/advent-agent/settings.json');
      expect(refused).toMatchObject({ ok: false, code: 'path_outside_roots' });
      expect(await read('notes.txt')).toMatchObject({ ok: true });

      // A search that starts at a link to .config finds nothing of the data folder's contents.
      await symlink(path.join(home, '.config'), path.join(home, 'config'));
      const search = await agent.gate.dispatch({
        connection: { id: 'c1', name: 'Server' },
        dialect: 'advent',
        callId: 'search',
        service: 'search_files',
        params: { path: 'config', pattern: '*', text: 'policies' },
      });
      expect(search).toMatchObject({ ok: true });
      expect(JSON.stringify(search)).not.toMatch(/settings\.json|policies/);
    } finally {
      await agent.close();
    }
  });
});
