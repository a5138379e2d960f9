import { mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../../app/clock.js';
import {
  SEARCH_LIMITS,
  searchFilesService as service,
} from '../../../app/services/builtin/search_files.js';
import type { SearchFilesResult } from '../../../app/services/builtin/search_files.js';
import {
  createFilesSandbox,
  displayPath,
  type FilesSandbox,
} from '../../../app/services/files/sandbox.js';
import type { ServiceContext } from '../../../app/services/service.js';
import { context, paramsCheck, refusal, tempDirs } from '../helpers.js';

const dirs = tempDirs();
let root: string;
let outside: string;
let files: FilesSandbox;
let ctx: ServiceContext;
const home = { id: 'p-home', name: 'Home server' };

beforeEach(async () => {
  root = path.join(await dirs.make(), 'Advent Agent');
  outside = await dirs.make('advent-outside-');
  await mkdir(path.join(root, 'notes', '2025'), { recursive: true });
  await writeFile(path.join(root, 'notes', 'shopping.txt'), 'eggs\nBuy MILK today\nbread');
  await writeFile(path.join(root, 'notes', '2025', 'jan.md'), '# January\nno dairy');
  await writeFile(path.join(root, 'notes', '2025', 'feb.md'), 'milk again');
  await writeFile(path.join(root, 'notes', 'milk.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47]));
  await writeFile(path.join(outside, 'milk.txt'), 'milk outside');
  files = createFilesSandbox({ roots: () => [root], maxFileBytes: () => 4096 });
  ctx = context(files, undefined, home);
});

afterEach(() => dirs.cleanup());

type Params = Parameters<typeof service.run>[0];
const run = (params: Parameters<typeof service.run>[0], c = ctx) =>
  service.run(params, c) as Promise<SearchFilesResult>;
const preview = (params: Params) => Promise.resolve(service.preview?.(params, ctx));
const paths = (result: { matches: { path: string }[] }) => result.matches.map((m) => m.path);

describe('search_files', () => {
  it('is a private files service; a pattern is required, the rest bounded', () => {
    expect(service).toMatchObject({ risk: 'private', group: 'files' });
    const check = paramsCheck(service);
    expect(check({ pattern: '*.md' })).toEqual({ ok: true });
    expect(check({ pattern: '*', text: 'milk', path: 'notes', max_results: 200 })).toEqual({
      ok: true,
    });
    expect(check({})).toEqual({ ok: false, message: "parameter 'pattern' is required" });
    expect(check({ pattern: '' })).toMatchObject({ ok: false });
    expect(check({ pattern: 'x'.repeat(201) })).toMatchObject({ ok: false });
    expect(check({ pattern: '*', max_results: 201 })).toMatchObject({ ok: false });
  });

  it('says in the prompt where it searches, for what, and where the matches go', async () => {
    expect(await preview({ pattern: '*.md', text: 'milk', path: 'notes' })).toEqual({
      summary: `Search notes${path.sep} for names like '*.md' containing 'milk'; send the matching paths and lines to Home server`,
      resolvedPaths: [path.join(root, 'notes')],
    });
    expect((await preview({ pattern: '*' }))?.summary).toBe(
      `Search ${displayPath(root)} for all names; send the matching paths to Home server`,
    );
  });

  it('writes out hidden characters of the pattern and text in the prompt', async () => {
    const summary = (await preview({ pattern: '*.txt\u{E0041}\u2028', text: 'pw\u200B\u{E0042}' }))
      ?.summary;
    expect(summary).toBe(
      `Search ${displayPath(root)} for names like '*.txt\\u{E0041}\\u2028' containing 'pw\\u200b\\u{E0042}'; send the matching paths and lines to Home server`,
    );
  });

  it('finds names by glob in every folder below, case-insensitively', async () => {
    const result = await run({ pattern: '*.MD' }, ctx);
    expect(paths(result)).toEqual(['notes/2025/feb.md', 'notes/2025/jan.md']);
    expect(result.stopped).toBeUndefined();
    expect(paths(await run({ pattern: '2025' }, ctx))).toEqual(['notes/2025']);
  });

  it('finds text in text files with the first matching line, skipping binary files', async () => {
    const result = await run({ pattern: '*', text: 'milk' }, ctx);
    expect(result.matches).toEqual([
      { path: 'notes/2025/feb.md', kind: 'file', size: 10, line: 1, excerpt: 'milk again' },
      {
        path: 'notes/shopping.txt',
        kind: 'file',
        size: 25,
        line: 2,
        excerpt: 'Buy MILK today',
      },
    ]);
    expect(result.scanned.bytes).toBeGreaterThan(0);
  });

  it('searches only the folder asked for', async () => {
    expect(paths(await run({ pattern: '*', path: 'notes/2025' }, ctx))).toEqual([
      'notes/2025/feb.md',
      'notes/2025/jan.md',
    ]);
  });

  it('never follows a link out of the allowed folder', async () => {
    await symlink(outside, path.join(root, 'notes', 'out'), 'dir');
    await symlink(path.join(outside, 'milk.txt'), path.join(root, 'notes', 'milk-link.txt'));
    const result = await run({ pattern: '*milk*', text: 'milk' }, ctx);
    expect(JSON.stringify(result)).not.toContain('outside');
    const byName = await run({ pattern: '*' }, ctx);
    expect(byName.matches).toContainEqual({ path: 'notes/out', kind: 'link' });
    expect(paths(byName).some((p) => p.startsWith('notes/out/'))).toBe(false);
    expect((await refusal(preview({ pattern: '*', path: 'notes/out' }))).code).toBe(
      'path_outside_roots',
    );
  });

  it('stops at max_results and says so', async () => {
    const result = await run({ pattern: '*', max_results: 2 }, ctx);
    expect(result.matches).toHaveLength(2);
    expect(result.stopped).toBe('results');
    expect(result.note).toMatch(/max_results/);
  });

  it('stops when its time is up and says so', async () => {
    let now = 0;
    const slow = context(files, { ...systemClock, now: () => (now += 1000) }, home);
    const result = await run({ pattern: '*' }, slow);
    expect(result.stopped).toBe('time');
    expect(result.note).toMatch(/stopped after 5 s/);
    expect(result.matches.length).toBeLessThan(6);
  });

  it('stops after reading its byte budget of text and says so', async () => {
    const big = 'x'.repeat(SEARCH_LIMITS.maxBytesPerFile);
    const count = SEARCH_LIMITS.maxBytes / SEARCH_LIMITS.maxBytesPerFile + 1;
    await mkdir(path.join(root, 'bulk'));
    for (let i = 0; i < count; i++) await writeFile(path.join(root, 'bulk', `f${i}.txt`), big);
    const wide = createFilesSandbox({ roots: () => [root], maxFileBytes: () => 1 << 30 });
    const result = await run(
      { pattern: '*', text: 'needle', path: 'bulk' },
      context(wide, undefined, home),
    );
    expect(result.stopped).toBe('bytes');
    expect(result.scanned.bytes).toBe(SEARCH_LIMITS.maxBytes);
  });

  it('refuses a folder outside, a file, and a missing folder', async () => {
    expect((await refusal(preview({ pattern: '*', path: '..' }))).code).toBe('path_outside_roots');
    expect((await refusal(preview({ pattern: '*', path: 'notes/shopping.txt' }))).code).toBe(
      'path_invalid',
    );
    expect((await refusal(run({ pattern: '*', path: 'nope' }, ctx))).message).toMatch(
      /does not exist/,
    );
  });
});
