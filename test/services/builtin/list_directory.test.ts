import { mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LOCAL_CONNECTION } from '../../../app/contract/connection.js';
import { listDirectoryService as service } from '../../../app/services/builtin/list_directory.js';
import type { ListDirectoryResult } from '../../../app/services/builtin/list_directory.js';
import { createFilesSandbox, displayPath } from '../../../app/services/files/sandbox.js';
import type { ServiceContext } from '../../../app/services/service.js';
import { context, paramsCheck, refusal, tempDirs } from '../helpers.js';

const dirs = tempDirs();
let root: string;
let outside: string;
let ctx: ServiceContext;
const home = { id: 'p-home', name: 'Home server' };

beforeEach(async () => {
  root = path.join(await dirs.make(), 'Advent Agent');
  outside = await dirs.make('advent-outside-');
  await mkdir(path.join(root, 'notes', 'archive'), { recursive: true });
  await writeFile(path.join(root, 'notes', 'b.txt'), 'bb');
  await writeFile(path.join(root, 'notes', 'a.txt'), 'a');
  await writeFile(path.join(outside, 'secret.txt'), 'secret');
  const files = createFilesSandbox({ roots: () => [root], maxFileBytes: () => 4096 });
  ctx = context(files, undefined, home);
});

afterEach(() => dirs.cleanup());

const run = (params: Parameters<typeof service.run>[0], c = ctx) =>
  service.run(params, c) as Promise<ListDirectoryResult>;
const preview = (params: Parameters<typeof service.run>[0], c = ctx) =>
  Promise.resolve(service.preview?.(params, c));

describe('list_directory', () => {
  it('is a private files service that asks first', () => {
    expect(service).toMatchObject({ risk: 'private', group: 'files' });
    expect(service.summary).toMatch(/allowed folders/);
  });

  it('takes an optional folder and page, and nothing else', () => {
    const check = paramsCheck(service);
    expect(check({})).toEqual({ ok: true });
    expect(check({ path: 'notes', offset: 10, limit: 200 })).toEqual({ ok: true });
    expect(check({ limit: 0 })).toMatchObject({ ok: false });
    expect(check({ limit: 201 })).toMatchObject({
      ok: false,
      message: expect.stringMatching(/200/),
    });
    expect(check({ offset: -1 })).toMatchObject({ ok: false });
    expect(check({ path: 3 })).toMatchObject({ ok: false });
    expect(check({ recursive: true })).toMatchObject({
      ok: false,
      message: "unexpected parameter 'recursive'",
    });
  });

  it('says in the prompt what is sent and to which server', async () => {
    expect(await preview({ path: 'notes' })).toEqual({
      summary: `Send the list of notes${path.sep} (3 entries) to Home server`,
      resolvedPaths: [path.join(root, 'notes')],
    });
    expect((await preview({}))?.summary).toBe(
      `Send the list of ${displayPath(root)} (1 entry) to Home server`,
    );
    const local = context(ctx.files, undefined, LOCAL_CONNECTION);
    expect((await preview({ path: 'notes' }, local))?.summary).toBe(
      `Show the list of notes${path.sep} (3 entries) here`,
    );
  });

  it('lists folders first, then files by name, with sizes of files', async () => {
    expect(await run({ path: 'notes' }, ctx)).toEqual({
      path: 'notes',
      total: 3,
      offset: 0,
      entries: [
        { name: 'archive', kind: 'folder' },
        { name: 'a.txt', kind: 'file', size: 1 },
        { name: 'b.txt', kind: 'file', size: 2 },
      ],
    });
    expect(await run({}, ctx)).toMatchObject({
      path: '.',
      entries: [{ name: 'notes', kind: 'folder' }],
    });
  });

  it('pages with offset and limit, and says where the next page starts', async () => {
    const first = await run({ path: 'notes', limit: 2 }, ctx);
    expect(first.entries.map((e) => e.name)).toEqual(['archive', 'a.txt']);
    expect(first.next_offset).toBe(2);
    const second = await run({ path: 'notes', offset: first.next_offset, limit: 2 }, ctx);
    expect(second.entries.map((e) => e.name)).toEqual(['b.txt']);
    expect(second.next_offset).toBeUndefined();
  });

  it('shows a link as a link and never lists where it leads', async () => {
    await symlink(outside, path.join(root, 'notes', 'out'), 'dir');
    const result = await run({ path: 'notes' }, ctx);
    expect(result.entries).toContainEqual({ name: 'out', kind: 'link' });
    expect(JSON.stringify(result)).not.toContain('secret');
  });

  it.each<[string, string, string, RegExp]>([
    ['a folder outside', '../', 'path_outside_roots', /outside the allowed folders/],
    ['an absolute path outside', '/etc', 'path_outside_roots', /outside the allowed folders/],
    ['a file', 'notes/a.txt', 'path_invalid', /is a file, not a folder/],
    ['a missing folder', 'nope', 'path_invalid', /does not exist/],
    ['a name with a control character', 'no\u0007tes', 'path_invalid', /control character/],
  ])('refuses %s before anyone is asked', async (_label, input, code, message) => {
    const failure = await refusal(preview({ path: input }));
    expect(failure.code).toBe(code);
    expect(failure.message).toMatch(message);
  });

  it('refuses a link that leads out and a dangling link', async () => {
    await symlink(outside, path.join(root, 'out'), 'dir');
    await symlink(path.join(root, 'gone'), path.join(root, 'dangling'), 'dir');
    expect((await refusal(preview({ path: 'out' }))).code).toBe('path_outside_roots');
    expect((await refusal(run({ path: 'out' }, ctx))).code).toBe('path_outside_roots');
    expect((await refusal(preview({ path: 'dangling' }))).message).toMatch(/points nowhere/);
  });
});
