import { open, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readUpTo } from '../../../app/services/files/read.js';
import { tempDirs } from '../helpers.js';

const dirs = tempDirs();
afterEach(() => dirs.cleanup());

async function withFile(
  bytes: Buffer,
  use: (h: Awaited<ReturnType<typeof open>>) => Promise<void>,
) {
  const file = path.join(await dirs.make(), 'f.bin');
  await writeFile(file, bytes);
  const handle = await open(file, 'r');
  try {
    await use(handle);
  } finally {
    await handle.close();
  }
}

describe('readUpTo', () => {
  const data = Buffer.from(Array.from({ length: 20_000 }, (_, i) => i % 251));

  it('reads a file that grew past the size it had when opened', async () => {
    await withFile(data, async (handle) => {
      const { bytes, more } = await readUpTo(handle, 1 << 20, 0);
      expect(more).toBe(false);
      expect(bytes.equals(data)).toBe(true);
    });
  });

  it('stops one byte past the cap and says there is more', async () => {
    await withFile(data, async (handle) => {
      const { bytes, more } = await readUpTo(handle, 5000, data.length);
      expect(more).toBe(true);
      expect(bytes.equals(data.subarray(0, 5000))).toBe(true);
    });
  });

  it('reads exactly the cap without calling it more', async () => {
    await withFile(data, async (handle) => {
      const { bytes, more } = await readUpTo(handle, data.length, 10);
      expect(more).toBe(false);
      expect(bytes.length).toBe(data.length);
    });
  });
});
