import { execFileSync } from 'node:child_process';
import { mkdir, rm, symlink, unlink, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  createFilesSandbox,
  type FilesSandbox,
  type WalkedEntry,
} from '../../../app/services/files/sandbox.js';
import { ServiceFailure } from '../../../app/services/service.js';
import { tempDirs } from '../helpers.js';

const dirs = tempDirs();
let root: string;
let outside: string;

beforeEach(async () => {
  root = path.join(await dirs.make(), 'Advent Agent');
  await mkdir(path.join(root, 'notes', 'deep'), { recursive: true });
  await writeFile(path.join(root, 'notes', 'todo.txt'), 'buy milk');
  await writeFile(path.join(root, 'notes', 'deep', 'old.md'), '# old');
  outside = await dirs.make('advent-outside-');
  await writeFile(path.join(outside, 'secret.txt'), 'SECRET');
});

afterEach(() => dirs.cleanup());

async function refusal(promise: Promise<unknown>): Promise<ServiceFailure> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof ServiceFailure) return err;
    throw err;
  }
  throw new Error('expected a ServiceFailure, got success');
}

function mkfifo(at: string): void {
  execFileSync('mkfifo', [at]);
}

describe.each(['anchored', 'checked'] as const)('reading with %s folders', (holdMode) => {
  let files: FilesSandbox;
  beforeEach(() => {
    files = createFilesSandbox({ roots: () => [root], maxFileBytes: () => 1024, holdMode });
  });

  describe('resolveEntry', () => {
    it('resolves files and folders, and the root itself as a folder', async () => {
      expect(await files.resolveEntry('notes/todo.txt', 'file')).toEqual({
        root,
        relative: path.join('notes', 'todo.txt'),
        absolute: path.join(root, 'notes', 'todo.txt'),
        kind: 'file',
      });
      expect((await files.resolveEntry('notes/', 'folder')).kind).toBe('folder');
      for (const input of ['', '.', './']) {
        expect(await files.resolveEntry(input, 'folder')).toMatchObject({
          relative: '',
          absolute: root,
        });
      }
      expect((await files.resolveEntry('notes', 'any')).kind).toBe('folder');
    });

    it.each<[string, string, 'file' | 'folder' | 'any', string, RegExp]>([
      [
        'a missing file',
        'notes/nope.txt',
        'file',
        'path_invalid',
        /does not exist; call list_directory/,
      ],
      ['a folder as a file', 'notes', 'file', 'path_invalid', /is a folder; call list_directory/],
      ['a file as a folder', 'notes/todo.txt', 'folder', 'path_invalid', /is a file, not a folder/],
      ['the root as a file', '.', 'file', 'path_invalid', /names a folder, not a file/],
      ['a parent escape', '../x', 'folder', 'path_outside_roots', /outside the allowed folders/],
      ['an absolute path outside', '/etc', 'folder', 'path_outside_roots', /outside/],
      ['a URL', 'file:///etc/passwd', 'file', 'path_invalid', /is a URL/],
      ['a NUL', 'a\u0000b', 'any', 'path_invalid', /NUL/],
    ])('refuses %s', async (_label, input, wanted, code, message) => {
      const failure = await refusal(files.resolveEntry(input, wanted));
      expect(failure.code).toBe(code);
      expect(failure.message).toMatch(message);
    });

    it('refuses links that lead out, and dangling links', async () => {
      await symlink(path.join(outside, 'secret.txt'), path.join(root, 'secret.txt'));
      await symlink(outside, path.join(root, 'out'), 'dir');
      await symlink(path.join(root, 'gone'), path.join(root, 'dangling'));
      expect((await refusal(files.resolveEntry('secret.txt', 'file'))).code).toBe(
        'path_outside_roots',
      );
      expect((await refusal(files.resolveEntry('out', 'folder'))).code).toBe('path_outside_roots');
      expect((await refusal(files.resolveEntry('out/secret.txt', 'any'))).code).toBe(
        'path_outside_roots',
      );
      expect((await refusal(files.resolveEntry('dangling', 'any'))).message).toMatch(
        /points nowhere/,
      );
    });

    it('refuses a pipe without opening it', async () => {
      mkfifo(path.join(root, 'pipe'));
      const failure = await refusal(files.resolveEntry('pipe', 'any'));
      expect(failure.message).toMatch(/not a regular file or folder/);
    });
  });

  describe('readFile', () => {
    it('reads the whole file with its facts', async () => {
      const { bytes, facts } = await files.readFile(
        await files.resolveEntry('notes/todo.txt', 'file'),
        100,
      );
      expect(bytes.toString()).toBe('buy milk');
      expect(facts).toMatchObject({ kind: 'file', size: 8 });
    });

    it('refuses a file above the cap, saying its size and the cap', async () => {
      await writeFile(path.join(root, 'big.txt'), 'x'.repeat(3000));
      const failure = await refusal(
        files.readFile(await files.resolveEntry('big.txt', 'file'), 2048),
      );
      expect(failure.code).toBe('file_too_large');
      expect(failure.message).toBe(
        "'big.txt' is 2.9 KB, more than the 2.0 KB that can be read at once; it was not read",
      );
    });

    it('reads through a link that stays inside the root', async () => {
      await symlink(path.join(root, 'notes', 'todo.txt'), path.join(root, 'alias.txt'));
      const entry = await files.resolveEntry('alias.txt', 'file');
      expect((await files.readFile(entry, 100)).bytes.toString()).toBe('buy milk');
    });

    it('never reads what a file was swapped for after it was checked', async () => {
      const entry = await files.resolveEntry('notes/todo.txt', 'file');
      await unlink(path.join(root, 'notes', 'todo.txt'));
      await symlink(path.join(outside, 'secret.txt'), path.join(root, 'notes', 'todo.txt'));
      expect((await refusal(files.readFile(entry, 100))).code).toBe('path_outside_roots');

      await unlink(path.join(root, 'notes', 'todo.txt'));
      mkfifo(path.join(root, 'notes', 'todo.txt'));
      expect((await refusal(files.readFile(entry, 100))).code).toBe('path_invalid');

      await unlink(path.join(root, 'notes', 'todo.txt'));
      expect((await refusal(files.readFile(entry, 100))).message).toMatch(
        /does not exist \(any more\)/,
      );
    });

    it('never reads through a folder swapped for a link after it was checked', async () => {
      await mkdir(path.join(outside, 'notes'));
      await writeFile(path.join(outside, 'notes', 'todo.txt'), 'SECRET');
      const entry = await files.resolveEntry('notes/todo.txt', 'file');
      await rm(path.join(root, 'notes'), { recursive: true });
      await symlink(path.join(outside, 'notes'), path.join(root, 'notes'), 'dir');
      expect((await refusal(files.readFile(entry, 100))).code).toBe('path_outside_roots');
    });
  });

  describe('readStart and info', () => {
    it('reads the start of a file and says whether there is more', async () => {
      const entry = await files.resolveEntry('notes/todo.txt', 'file');
      const head = await files.readStart(entry, 3);
      expect([head.bytes.toString(), head.more]).toEqual(['buy', true]);
      const whole = await files.readStart(entry, 100);
      expect([whole.bytes.toString(), whole.more]).toEqual(['buy milk', false]);
    });

    it('gives kind, size and modified time of files, folders and the root', async () => {
      const when = new Date('2025-01-22T14:30:25Z');
      await utimes(path.join(root, 'notes', 'todo.txt'), when, when);
      expect(await files.info(await files.resolveEntry('notes/todo.txt', 'any'))).toEqual({
        kind: 'file',
        size: 8,
        modifiedMs: when.getTime(),
      });
      expect((await files.info(await files.resolveEntry('notes', 'any'))).kind).toBe('folder');
      expect((await files.info(await files.resolveEntry('.', 'any'))).kind).toBe('folder');
    });
  });

  describe('list', () => {
    it('lists names with kinds and sizes, describing links without following them', async () => {
      await symlink(outside, path.join(root, 'notes', 'out'), 'dir');
      const { entries, truncated } = await files.list(
        await files.resolveEntry('notes', 'folder'),
        100,
      );
      expect(truncated).toBe(false);
      expect(entries.map(({ name, kind, size }) => ({ name, kind, size })).sort(byName)).toEqual([
        { name: 'deep', kind: 'folder', size: 0 },
        { name: 'out', kind: 'link', size: 0 },
        { name: 'todo.txt', kind: 'file', size: 8 },
      ]);
    });

    it('reads at most the cap of names and says so', async () => {
      for (let i = 0; i < 5; i++) await writeFile(path.join(root, `f${i}`), '');
      const listing = await files.list(await files.resolveEntry('', 'folder'), 3);
      expect(listing.entries).toHaveLength(3);
      expect(listing.truncated).toBe(true);
    });

    it('lists a root that does not exist yet as empty', async () => {
      const later = createFilesSandbox({
        roots: () => [path.join(outside, 'not', 'yet')],
        maxFileBytes: () => 1,
        holdMode,
      });
      expect(await later.list(await later.resolveEntry('', 'folder'), 10)).toEqual({
        entries: [],
        truncated: false,
      });
    });
  });

  describe('walk', () => {
    it('visits every entry below a folder by name, never entering links', async () => {
      await symlink(outside, path.join(root, 'notes', 'out'), 'dir');
      const seen: string[] = [];
      await files.walk(
        await files.resolveEntry('', 'folder'),
        (item) => {
          seen.push(`${item.relative}:${item.kind}`);
        },
        { maxDepth: 10, maxPerFolder: 100 },
      );
      expect(seen).toEqual([
        'notes:folder',
        `${path.join('notes', 'deep')}:folder`,
        `${path.join('notes', 'deep', 'old.md')}:file`,
        `${path.join('notes', 'out')}:link`,
        `${path.join('notes', 'todo.txt')}:file`,
      ]);
    });

    it('stops when asked, stays above maxDepth, and reads files by the same rules', async () => {
      const seen: string[] = [];
      const heads: string[] = [];
      await files.walk(
        await files.resolveEntry('notes', 'folder'),
        async (item: WalkedEntry) => {
          seen.push(item.name);
          if (item.kind === 'file') heads.push((await item.readStart(3)).bytes.toString());
        },
        { maxDepth: 0, maxPerFolder: 100 },
      );
      expect(seen).toEqual(['deep', 'todo.txt']);
      expect(heads).toEqual(['buy']);

      let visits = 0;
      await files.walk(
        await files.resolveEntry('', 'folder'),
        () => (++visits === 2 ? 'stop' : undefined),
        { maxDepth: 10, maxPerFolder: 100 },
      );
      expect(visits).toBe(2);
    });
  });
});

const byName = (a: { name: string }, b: { name: string }) => (a.name < b.name ? -1 : 1);
