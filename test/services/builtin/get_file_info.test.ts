import { mkdir, symlink, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { getFileInfoService as service } from '../../../app/services/builtin/get_file_info.js';
import type { FileInfoResult } from '../../../app/services/builtin/get_file_info.js';
import { createFilesSandbox, displayPath } from '../../../app/services/files/sandbox.js';
import type { ServiceContext } from '../../../app/services/service.js';
import { context, paramsCheck, refusal, tempDirs } from '../helpers.js';

const dirs = tempDirs();
let root: string;
let outside: string;
let ctx: ServiceContext;
const when = new Date('2025-01-22T14:30:25.000Z');

beforeEach(async () => {
  root = path.join(await dirs.make(), 'Advent Agent');
  outside = await dirs.make('advent-outside-');
  await mkdir(path.join(root, 'notes'), { recursive: true });
  await writeFile(path.join(root, 'notes', 'todo.txt'), '\ufeffbuy milk');
  await utimes(path.join(root, 'notes', 'todo.txt'), when, when);
  await writeFile(path.join(root, 'blob.bin'), Buffer.from([1, 0, 2, 0, 3]));
  const files = createFilesSandbox({ roots: () => [root], maxFileBytes: () => 8 });
  ctx = context(files, undefined, { id: 'p-home', name: 'Home server' });
});

afterEach(() => dirs.cleanup());

const run = (params: Parameters<typeof service.run>[0], c = ctx) =>
  service.run(params, c) as Promise<FileInfoResult>;
const preview = (params: { path: string }) => Promise.resolve(service.preview?.(params, ctx));

describe('get_file_info', () => {
  it('is a private files service with one path parameter', () => {
    expect(service).toMatchObject({ risk: 'private', group: 'files' });
    const check = paramsCheck(service);
    expect(check({ path: '.' })).toEqual({ ok: true });
    expect(check({})).toMatchObject({ ok: false });
    expect(check({ path: 'a', deep: true })).toMatchObject({ ok: false });
  });

  it('says in the prompt what is sent and to which server', async () => {
    expect((await preview({ path: 'notes/todo.txt' }))?.summary).toBe(
      `Send the kind, size and date of ${path.join('notes', 'todo.txt')} to Home server`,
    );
    expect((await preview({ path: '.' }))?.summary).toBe(
      `Send the kind, size and date of the folder ${displayPath(root)} to Home server`,
    );
  });

  it('describes a text file: size, date, encoding, and whether read_file may read it', async () => {
    expect(await run({ path: 'notes/todo.txt' }, ctx)).toEqual({
      path: 'notes/todo.txt',
      kind: 'file',
      size: 11,
      modified: '2025-01-22T14:30:25.000Z',
      text: true,
      encoding: 'UTF-8 with BOM',
      readable: false, // 11 bytes, above this sandbox's 8-byte cap
    });
  });

  it('says why a binary file is not text', async () => {
    expect(await run({ path: 'blob.bin' }, ctx)).toMatchObject({
      kind: 'file',
      text: false,
      not_text_reason: 'contains NUL bytes (binary data)',
      readable: false,
    });
  });

  it('describes folders, the allowed folder included', async () => {
    expect(await run({ path: 'notes' }, ctx)).toMatchObject({
      path: 'notes',
      kind: 'folder',
    });
    const top = await run({ path: '.' }, ctx);
    expect(top).toMatchObject({ path: '.', kind: 'folder' });
    expect(top.size).toBeUndefined();
  });

  it('refuses what is outside, through a link out, or missing', async () => {
    await symlink(path.join(outside), path.join(root, 'out'), 'dir');
    expect((await refusal(preview({ path: '../x' }))).code).toBe('path_outside_roots');
    expect((await refusal(preview({ path: 'out' }))).code).toBe('path_outside_roots');
    expect((await refusal(run({ path: 'out' }, ctx))).code).toBe('path_outside_roots');
    expect((await refusal(preview({ path: 'nope' }))).message).toMatch(/does not exist/);
  });
});
