import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createFileService as service } from '../../../app/services/builtin/create_file.js';
import { createFilesSandbox, displayPath } from '../../../app/services/files/sandbox.js';
import { ServiceFailure, type ServiceContext } from '../../../app/services/service.js';
import { context, tempDirs } from '../helpers.js';

const dirs = tempDirs();
let root: string;
let ctx: ServiceContext;
const todo = path.join('notes', 'todo.txt');

beforeEach(async () => {
  root = path.join(await dirs.make(), 'Advent Agent');
  ctx = context(createFilesSandbox({ roots: () => [root], maxFileBytes: () => 4096 }));
});

afterEach(() => dirs.cleanup());

async function failure(promise: Promise<unknown>): Promise<ServiceFailure> {
  const err: unknown = await promise.then(
    () => new Error('expected a refusal'),
    (e: unknown) => e,
  );
  if (err instanceof ServiceFailure) return err;
  throw err;
}

const preview = (params: Parameters<typeof service.run>[0], c = ctx) =>
  Promise.resolve(service.preview?.(params, c));

describe('create_file preview', () => {
  it('summarizes a new file with its size and folder', async () => {
    const result = await preview({ filename: 'notes/todo.txt', content: 'x'.repeat(1234) });
    expect(result).toEqual({
      summary: `Create file ${todo} (1.2 KB) in ${displayPath(root)}`,
      resolvedPaths: [path.join(root, 'notes', 'todo.txt')],
    });
  });

  it('refuses an existing file without overwrite, saying how to replace it', async () => {
    await service.run({ filename: 'notes/todo.txt', content: 'old' }, ctx);
    const refusal = await failure(preview({ filename: 'notes/todo.txt', content: 'new' }));
    expect(refusal.code).toBe('file_exists');
    expect(refusal.message).toBe(
      `'${todo}' already exists; call again with overwrite: true to replace it (the user will be asked)`,
    );
  });

  it('asks for its own approval to replace an existing file', async () => {
    await service.run({ filename: 'notes/todo.txt', content: 'old' }, ctx);
    const result = await preview({ filename: 'notes/todo.txt', content: 'new!', overwrite: true });
    expect(result).toEqual({
      summary: `Replace file ${todo} (4 B) in ${displayPath(root)}`,
      resolvedPaths: [path.join(root, 'notes', 'todo.txt')],
      escalation: 'overwrite',
    });
  });

  it('treats overwrite on a missing file as a plain create', async () => {
    const result = await preview({ filename: 'new.txt', content: '', overwrite: true });
    expect(result?.summary).toBe(`Create file new.txt (0 B) in ${displayPath(root)}`);
    expect(result?.escalation).toBeUndefined();
  });

  it('refuses content above the size cap before anyone is asked', async () => {
    const refusal = await failure(preview({ filename: 'big.txt', content: '字'.repeat(2000) }));
    expect(refusal.code).toBe('file_too_large');
    expect(refusal.message).toContain('5.9 KB');
  });

  it('refuses a look-alike of an existing name before anyone is asked', async () => {
    await service.run({ filename: 'notes.txt', content: "the user's notes" }, ctx);
    for (const filename of ['no\u200Btes.txt', 'notes\u2060.txt', 'notes.txt\u{E0049}\u{E0047}']) {
      const refusal = await failure(preview({ filename, content: 'forged' }));
      expect(refusal.code).toBe('path_invalid');
      expect(refusal.message).toMatch(/contains an invisible character \(U\+[0-9A-F]{4,5}, /);
      expect((await failure(service.run({ filename, content: 'forged' }, ctx))).code).toBe(
        'path_invalid',
      );
    }
    expect(await readdir(root)).toEqual(['notes.txt']);
  });

  it('names an emoji file in the prompt as it is', async () => {
    const filename = '\u{1F468}\u200D\u{1F469}\u200D\u{1F467} photos.txt';
    expect((await preview({ filename, content: '' }))?.summary).toBe(
      `Create file ${filename} (0 B) in ${displayPath(root)}`,
    );
  });

  it('refuses a path outside the folder', async () => {
    expect((await failure(preview({ filename: '../escape.txt', content: 'x' }))).code).toBe(
      'path_outside_roots',
    );
  });
});

describe('create_file run', () => {
  it('creates the file and its folders and reports it for the model', async () => {
    const result = await service.run({ filename: 'notes/todo.txt', content: 'héllo' }, ctx);
    expect(result).toEqual({
      message: `Created ${todo} (6 bytes) in ${displayPath(root)}`,
      path: displayPath(path.join(root, 'notes', 'todo.txt')),
      bytes: 6,
    });
    expect(await readFile(path.join(root, 'notes', 'todo.txt'), 'utf8')).toBe('héllo');
  });

  it('replaces an existing file with overwrite and leaves no temp file', async () => {
    await service.run({ filename: 'a.txt', content: 'old' }, ctx);
    await preview({ filename: 'a.txt', content: 'new', overwrite: true });
    const result = await service.run({ filename: 'a.txt', content: 'new', overwrite: true }, ctx);
    expect(result).toMatchObject({ message: `Replaced a.txt (3 bytes) in ${displayPath(root)}` });
    expect(await readFile(path.join(root, 'a.txt'), 'utf8')).toBe('new');
    expect(await readdir(root)).toEqual(['a.txt']);
  });

  it('does not replace a file that appeared after the user approved a create', async () => {
    const params = { filename: 'late.txt', content: 'agent', overwrite: true };
    const approved = await preview(params);
    expect(approved?.escalation).toBeUndefined();
    await mkdir(root, { recursive: true });
    await writeFile(path.join(root, 'late.txt'), 'user');
    expect((await failure(service.run(params, ctx, approved))).code).toBe('file_exists');
    expect(await readFile(path.join(root, 'late.txt'), 'utf8')).toBe('user');
  });

  it('refuses when the file appeared after preview without overwrite', async () => {
    const params = { filename: 'late.txt', content: 'agent' };
    await preview(params);
    await mkdir(root, { recursive: true });
    await writeFile(path.join(root, 'late.txt'), 'user');
    const refusal = await failure(service.run(params, ctx));
    expect(refusal.code).toBe('file_exists');
    expect(refusal.message).toContain('overwrite: true');
  });

  it('is a write service with a 10 s timeout', () => {
    expect(service.risk).toBe('write');
    expect(service.timeoutMs).toBe(10_000);
  });
});
