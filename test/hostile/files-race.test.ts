import { lstat, mkdir, readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createFileService } from '../../app/services/builtin/create_file.js';
import { createFilesSandbox } from '../../app/services/files/sandbox.js';
import { ServiceFailure } from '../../app/services/service.js';
import { context, tempDirs } from '../services/helpers.js';

// A local process swapping ROOT/sub between a real folder and a link to a folder outside, as fast
// as it can, on another thread: the gap between "checked" and "opened" is real, not simulated.
const FLIPPER = `
const { workerData } = require('node:worker_threads');
const fs = require('node:fs');
const path = require('node:path');
const { root, sub, keep, outside, stop } = workerData;
const flag = new Int32Array(stop);
let flips = 0, strays = 0;
const exists = (p) => { try { fs.lstatSync(p); return true; } catch { return false; } };
// Whatever the writer left at 'sub' (a folder it created while the name was free) moves aside,
// still inside the root, so the loop never jams and no file it wrote is lost.
const clear = () => { if (exists(sub)) { try { fs.renameSync(sub, path.join(root, 'stray' + strays++)); } catch {} } };
while (Atomics.load(flag, 0) === 0) {
  try { fs.renameSync(sub, keep); } catch {}
  clear();
  try { fs.symlinkSync(outside, sub, 'dir'); } catch {}
  try { fs.unlinkSync(sub); } catch {}
  clear();
  try { fs.renameSync(keep, sub); } catch { try { fs.mkdirSync(keep); } catch {} }
  flips++;
}
// Leave the real folder in place for the checks.
try { if (fs.lstatSync(sub).isSymbolicLink()) fs.unlinkSync(sub); } catch {}
require('node:worker_threads').parentPort.postMessage({ flips, strays });
`;

interface Flipper {
  stop(): Promise<{ flips: number; strays: number }>;
}

function startFlipper(root: string, outside: string): Flipper {
  const stop = new SharedArrayBuffer(4);
  const worker = new Worker(FLIPPER, {
    eval: true,
    workerData: {
      root,
      sub: path.join(root, 'sub'),
      keep: path.join(root, 'keep'),
      outside,
      stop,
    },
  });
  const done = new Promise<{ flips: number; strays: number }>((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
  });
  let stopped: Promise<{ flips: number; strays: number }> | undefined;
  return {
    stop() {
      stopped ??= (async () => {
        Atomics.store(new Int32Array(stop), 0, 1);
        const result = await done;
        await worker.terminate();
        return result;
      })();
      return stopped;
    },
  };
}

/** Every entry under `dir`, links not followed: what really exists there. */
async function walk(dir: string, out = new Map<string, string>()): Promise<Map<string, string>> {
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      out.set(full, 'folder');
      await walk(full, out);
    } else out.set(full, entry.isSymbolicLink() ? 'link' : 'file');
  }
  return out;
}

const dirs = tempDirs();
let root: string;
let outside: string;

beforeEach(async () => {
  const base = await dirs.make('advent-race-');
  root = path.join(base, 'root');
  outside = path.join(base, 'outside');
  await mkdir(path.join(root, 'sub'), { recursive: true });
  await mkdir(outside);
});
afterEach(() => dirs.cleanup());

async function pool<T>(count: number, width: number, task: (i: number) => Promise<T>) {
  const results: T[] = new Array<T>(count);
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < count) {
        const i = next++;
        results[i] = await task(i);
      }
    }),
  );
  return results;
}

type Answer = { ok: true } | { ok: false; code: string };

async function answer(run: () => Promise<unknown>): Promise<Answer> {
  try {
    await run();
    return { ok: true };
  } catch (err) {
    if (err instanceof ServiceFailure) return { ok: false, code: err.code };
    // The gate would answer service_error with a raw system message: not a clear refusal.
    return { ok: false, code: `unexpected ${String((err as { code?: string }).code ?? err)}` };
  }
}

const RACE_CODES = ['path_outside_roots', 'path_invalid', 'file_exists'];

describe('create_file while a local process swaps a folder for a link out', () => {
  it('creates nothing outside the root and answers every call truthfully', async () => {
    const files = createFilesSandbox({ roots: () => [root], maxFileBytes: () => 1024 });
    const ctx = context(files);
    const N = 3000;
    const flipper = startFlipper(root, outside);
    const answers = await pool(N, 4, (i) =>
      answer(() => createFileService.run({ filename: `sub/x${i}`, content: `body ${i}` }, ctx)),
    ).finally(() => flipper.stop());
    const { flips } = await flipper.stop();

    const escaped = [...(await walk(outside)).keys()];
    const inside = await walk(root);
    const byName = new Map<string, string>();
    for (const [full, kind] of inside) if (kind === 'file') byName.set(path.basename(full), full);
    const ok = answers.filter((a) => a.ok).length;
    const codes: Record<string, number> = {};
    for (const a of answers) if (!a.ok) codes[a.code] = (codes[a.code] ?? 0) + 1;
    const lies = answers.filter((a, i) => a.ok !== byName.has(`x${i}`)).length;
    console.log(`flips ${flips}, ok ${ok}/${N}, escaped ${escaped.length}, lies ${lies}`, codes);

    expect(escaped).toEqual([]);
    for (const [i, a] of answers.entries()) {
      const where = byName.get(`x${i}`);
      if (a.ok) {
        expect(where, `x${i} answered as created`).toBeDefined();
        expect(await readFile(where!, 'utf8')).toBe(`body ${i}`);
      } else {
        expect(RACE_CODES).toContain(a.code);
        expect(where, `x${i} answered as refused`).toBeUndefined();
      }
    }
    // Not vacuous: the swap really happened during the run and most calls still got through.
    expect(flips).toBeGreaterThan(100);
    expect(ok).toBeGreaterThan(50);
    await lstat(root);
  });
});
