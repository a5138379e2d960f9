import { mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFilesSandbox, type FilesSandbox } from '../../../app/services/files/sandbox.js';
import { ServiceFailure } from '../../../app/services/service.js';
import { tempDirs } from '../helpers.js';

const dirs = tempDirs();
let root: string;
let sandbox: FilesSandbox;

beforeAll(async () => {
  root = path.join(await dirs.make(), 'root');
  const outside = await dirs.make('advent-outside-');
  // Some furniture for random paths to stumble on: a folder, a file, links in and out.
  await mkdir(path.join(root, 'a', 'b'), { recursive: true });
  await writeFile(path.join(root, 'a', 'f.txt'), 'x');
  await symlink(outside, path.join(root, 'out'), 'dir');
  await symlink(path.join(root, 'a'), path.join(root, 'in'), 'dir');
  sandbox = createFilesSandbox({ roots: () => [root], maxFileBytes: () => 1024 });
});

afterAll(() => dirs.cleanup());

// Pieces that matter to path handling, so random inputs hit the interesting cases often.
// A function: the root's absolute path is only known once beforeAll has run.
const hostilePaths = () => {
  const piece = fc.constantFrom(
    '..',
    '.',
    '/',
    '\\',
    'a',
    'b',
    'f.txt',
    'out',
    'in',
    '~',
    ':',
    'C:',
    'CON',
    ' ',
    '\u0000',
    '\u202e',
    'file://',
    '//',
    '%2e%2e',
    'é',
    '😀',
    root,
  );
  return fc.oneof(
    fc.string({ unit: 'binary', maxLength: 40 }),
    fc.array(piece, { maxLength: 12 }).map((parts) => parts.join('')),
    fc
      .array(fc.oneof(piece, fc.string({ maxLength: 4 })), { maxLength: 8 })
      .map((p) => p.join('/')),
  );
};

describe('resolve (property)', () => {
  it('either refuses with a path code or lands strictly inside the root', async () => {
    let accepted = 0;
    await fc.assert(
      fc.asyncProperty(hostilePaths(), async (input) => {
        try {
          const target = await sandbox.resolve(input);
          const rel = path.relative(root, target.absolute);
          expect(path.isAbsolute(target.absolute)).toBe(true);
          // '..name' is a legal file name: only '..' as a whole segment escapes.
          const escapes = rel === '..' || rel.startsWith(`..${path.sep}`) || path.isAbsolute(rel);
          expect(rel === '' || escapes).toBe(false);
          // And the real location too: no accepted path leads through the outward link.
          expect(target.relative.split(path.sep)[0]).not.toBe('out');
          accepted += 1;
        } catch (err) {
          expect(err).toBeInstanceOf(ServiceFailure);
          expect(['path_invalid', 'path_outside_roots']).toContain((err as ServiceFailure).code);
        }
      }),
      { numRuns: 500 },
    );
    // Not vacuous: a good share of the random paths are ordinary names that must get through.
    expect(accepted).toBeGreaterThan(20);
  });
});
