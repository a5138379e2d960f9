import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDirs } from '../services/helpers.js';

const SANDBOX = pathToFileURL(
  path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../app/services/files/sandbox.ts'),
).href;

// A real process writing a large new file through the sandbox; the test kills it with SIGKILL
// while the bytes are going to disk.
const WRITER = `
import { createFilesSandbox } from ${JSON.stringify(SANDBOX)};
const [root, size] = [process.argv[1], Number(process.argv[2])];
const files = createFilesSandbox({ roots: () => [root], maxFileBytes: () => size });
const target = await files.resolve('big/new.bin');
await files.writeNew(target, new Uint8Array(size).fill(65));
process.stdout.write('done');
`;

const SIZE = 128 * 1024 * 1024;
const ATTEMPTS = 4;

const dirs = tempDirs();
const children: ChildProcess[] = [];
afterEach(async () => {
  for (const child of children.splice(0)) child.kill('SIGKILL');
  await dirs.cleanup();
});

/**
 * A file of the folder (whatever its name) once it holds some bytes but not all, or undefined if
 * the write finished first.
 */
async function waitForPartial(folder: string, child: ChildProcess): Promise<string | undefined> {
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline && child.exitCode === null) {
    const names = await readdir(folder).catch(() => [] as string[]);
    for (const name of names) {
      const size = await stat(path.join(folder, name)).then(
        (s) => s.size,
        () => 0,
      );
      if (size > 0 && size < SIZE) return name;
    }
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  return undefined;
}

describe('a new file written by a process killed with SIGKILL', () => {
  it('is never left half-written under its name', async () => {
    let killedMidWrite = 0;
    for (let attempt = 0; attempt < ATTEMPTS && killedMidWrite === 0; attempt++) {
      const root = await dirs.make('advent-kill-');
      const folder = path.join(root, 'big');
      await mkdir(folder);
      const child = spawn(
        process.execPath,
        ['--import', 'tsx', '--input-type=module', '-e', WRITER, root, String(SIZE)],
        { stdio: ['ignore', 'pipe', 'pipe'] },
      );
      children.push(child);
      const exited = new Promise((resolve) => child.once('exit', resolve));
      const partial = await waitForPartial(folder, child);
      child.kill('SIGKILL');
      await exited;

      const final = await stat(path.join(folder, 'new.bin')).catch(() => undefined);
      // Either nothing has the name, or (the write won the race) all of it does.
      if (final) expect(final.size).toBe(SIZE);
      if (partial && !final) killedMidWrite++;
    }
    // Not vacuous: at least once the kill landed while the bytes were being written.
    expect(killedMidWrite).toBeGreaterThan(0);
  });
});
