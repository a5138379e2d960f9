import { mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  READ_LIMIT_BYTES,
  readFileService as service,
} from '../../../app/services/builtin/read_file.js';
import type { ReadFileResult } from '../../../app/services/builtin/read_file.js';
import { createFilesSandbox } from '../../../app/services/files/sandbox.js';
import type { ServiceContext } from '../../../app/services/service.js';
import { context, paramsCheck, refusal, tempDirs } from '../helpers.js';

const dirs = tempDirs();
let root: string;
let outside: string;
let ctx: ServiceContext;
let maxBytes: number;
const todo = path.join('notes', 'todo.txt');

beforeEach(async () => {
  root = path.join(await dirs.make(), 'Advent Agent');
  outside = await dirs.make('advent-outside-');
  await mkdir(path.join(root, 'notes'), { recursive: true });
  await writeFile(path.join(root, 'notes', 'todo.txt'), 'buy milk\n'.repeat(150));
  await writeFile(path.join(outside, 'secret.txt'), 'SECRET');
  maxBytes = 10 * 1024 * 1024;
  const files = createFilesSandbox({ roots: () => [root], maxFileBytes: () => maxBytes });
  ctx = context(files, undefined, { id: 'p-home', name: 'Home server' });
});

afterEach(() => dirs.cleanup());

const run = (params: Parameters<typeof service.run>[0], c = ctx) =>
  service.run(params, c) as Promise<ReadFileResult>;
const preview = (params: { path: string }, c = ctx) =>
  Promise.resolve(service.preview?.(params, c));

describe('read_file', () => {
  it('is a private files service that asks first', () => {
    expect(service).toMatchObject({ risk: 'private', group: 'files' });
  });

  it('takes one path', () => {
    const check = paramsCheck(service);
    expect(check({ path: 'notes/todo.txt' })).toEqual({ ok: true });
    expect(check({})).toEqual({ ok: false, message: "parameter 'path' is required" });
    expect(check({ path: '' })).toMatchObject({ ok: false });
    expect(check({ path: 'a', offset: 3 })).toMatchObject({ ok: false });
  });

  it('says in the prompt which file, how big, and to which server it goes', async () => {
    expect(await preview({ path: 'notes/todo.txt' })).toEqual({
      summary: `Send the contents of ${todo} (1.3 KB) to Home server`,
      resolvedPaths: [path.join(root, 'notes', 'todo.txt')],
    });
  });

  it('returns the text with its encoding', async () => {
    expect(await run({ path: 'notes/todo.txt' }, ctx)).toEqual({
      path: 'notes/todo.txt',
      encoding: 'UTF-8',
      bytes: 1350,
      content: 'buy milk\n'.repeat(150),
    });
    const be = Buffer.from('你好', 'utf16le').swap16();
    await writeFile(path.join(root, 'be.txt'), Buffer.concat([Buffer.from([0xfe, 0xff]), be]));
    expect(await run({ path: 'be.txt' }, ctx)).toMatchObject({
      encoding: 'UTF-16 BE',
      content: '你好',
    });
  });

  it('refuses a binary file before anyone is asked, saying what it is', async () => {
    await writeFile(path.join(root, 'photo.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 1, 2]));
    const failure = await refusal(preview({ path: 'photo.png' }));
    expect(failure).toMatchObject({
      code: 'path_invalid',
      message: "'photo.png' is a PNG image; only text files can be read. It was not read",
    });
  });

  it('refuses a file that turned binary after the prompt', async () => {
    await preview({ path: 'notes/todo.txt' });
    await writeFile(path.join(root, 'notes', 'todo.txt'), Buffer.from('text\u0000binary'));
    expect((await refusal(run({ path: 'notes/todo.txt' }, ctx))).message).toMatch(/NUL bytes/);
  });

  it('refuses a file above the read limit with its size and the limit', async () => {
    await writeFile(path.join(root, 'book.txt'), 'x'.repeat(READ_LIMIT_BYTES + 1));
    const failure = await refusal(preview({ path: 'book.txt' }));
    expect(failure).toMatchObject({
      code: 'file_too_large',
      message:
        "'book.txt' is 256.0 KB, more than the 256.0 KB that can be read at once; it was not read",
    });
  });

  it("applies the user's own size cap when it is smaller", async () => {
    maxBytes = 1024;
    const failure = await refusal(run({ path: 'notes/todo.txt' }, ctx));
    expect(failure.code).toBe('file_too_large');
    expect(failure.message).toContain('1.3 KB, more than the 1.0 KB');
  });

  it.each<[string, string, string, RegExp]>([
    ['a path outside', '../secret.txt', 'path_outside_roots', /outside the allowed folders/],
    ['a folder', 'notes', 'path_invalid', /is a folder; call list_directory/],
    ['a missing file', 'notes/nope.txt', 'path_invalid', /does not exist/],
    ['a URL', 'file:///etc/passwd', 'path_invalid', /is a URL/],
    ['a bidi trick', 'evil\u202etxt.exe', 'path_invalid', /text-direction/],
    ['a look-alike name', 'notes/to\u200Bdo.txt', 'path_invalid', /invisible character \(U\+200B/],
    ['a reserved name', 'notes/con.txt', 'path_invalid', /reserved device name/],
  ])('refuses %s', async (_label, input, code, message) => {
    const failure = await refusal(preview({ path: input }));
    expect(failure.code).toBe(code);
    expect(failure.message).toMatch(message);
  });

  it('refuses links out, a folder link out on the way, and dangling links', async () => {
    await symlink(path.join(outside, 'secret.txt'), path.join(root, 'secret.txt'));
    await symlink(outside, path.join(root, 'out'), 'dir');
    await symlink(path.join(root, 'gone.txt'), path.join(root, 'dangling.txt'));
    for (const input of ['secret.txt', 'out/secret.txt']) {
      expect((await refusal(preview({ path: input }))).code).toBe('path_outside_roots');
      expect((await refusal(run({ path: input }, ctx))).code).toBe('path_outside_roots');
    }
    expect((await refusal(preview({ path: 'dangling.txt' }))).message).toMatch(/points nowhere/);
  });

  it('reads through a link that stays inside the allowed folder', async () => {
    await symlink(path.join(root, 'notes', 'todo.txt'), path.join(root, 'todo-link.txt'));
    expect((await run({ path: 'todo-link.txt' }, ctx)).bytes).toBe(1350);
  });
});
