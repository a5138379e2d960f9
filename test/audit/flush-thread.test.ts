import { spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { FlushThread } from '../../app/audit/flush-thread.js';
import { useTempDirs } from './helpers.js';

/** A descriptor no process here has open (far above the kernel's limit on open files). */
const NOT_OPEN = 2 ** 30;

async function running(thread = new FlushThread()): Promise<FlushThread> {
  thread.start();
  onTestFinished(() => thread.stop());
  await vi.waitFor(() => expect(thread.ready).toBe(true));
  return thread;
}

describe('the audit flush thread', () => {
  const tempDir = useTempDirs();

  async function openFile(): Promise<{ fd: number; path: string }> {
    const path = join(await tempDir(), 'log');
    const fd = openSync(path, 'a+', 0o600);
    onTestFinished(() => closeSync(fd));
    return { fd, path };
  }

  it('flushes a file, one request after another, and the data is there', async () => {
    const thread = await running();
    const { fd, path } = await openFile();
    for (let i = 0; i < 50; i++) {
      writeSync(fd, `line ${i}\n`);
      await thread.flush(fd);
    }
    expect(readFileSync(path, 'utf8').split('\n')).toHaveLength(51);
    expect(thread.ready).toBe(true);
  });

  it('takes flushes asked for at once one at a time, and answers every one', async () => {
    const thread = await running();
    const files = await Promise.all(Array.from({ length: 5 }, () => openFile()));
    const asked = files.flatMap(({ fd }) => Array.from({ length: 20 }, () => thread.flush(fd)));
    await expect(Promise.all(asked)).resolves.toHaveLength(100);
  });

  it("rejects with the system's error for a descriptor that cannot be flushed, and goes on", async () => {
    const thread = await running();
    const { fd } = await openFile();
    await expect(thread.flush(NOT_OPEN)).rejects.toMatchObject({
      code: 'EBADF',
      syscall: 'fdatasync',
    });
    // The thread still answers the next one.
    await expect(thread.flush(fd)).resolves.toBeUndefined();
    expect(thread.ready).toBe(true);
  });

  it('still flushes, in the thread pool, before it has started and after it has ended', async () => {
    const thread = new FlushThread();
    const { fd } = await openFile();
    expect(thread.ready).toBe(false);
    await expect(thread.flush(fd)).resolves.toBeUndefined();
    await running(thread);
    await thread.stop();
    expect(thread.ready).toBe(false);
    await expect(thread.flush(fd)).resolves.toBeUndefined();
    await expect(thread.flush(NOT_OPEN)).rejects.toMatchObject({ code: 'EBADF' });
  });

  it('answers a flush that was waiting when the thread ended, through the pool', async () => {
    // No polling, so the flush waits asleep at once; the thread is ended under it.
    const thread = await running(new FlushThread({ pollMs: 0, idleSpinMs: 0 }));
    const { fd } = await openFile();
    const asked = [thread.flush(fd), thread.flush(fd), thread.flush(fd)];
    const stopped = thread.stop();
    await expect(Promise.all(asked)).resolves.toHaveLength(3);
    await stopped;
  });

  it('keeps a process alive until its flushes are made, when nothing else would', async () => {
    // A script whose only work is the flushes: waiting for the thread's answer must hold the
    // process open (Atomics.waitAsync alone does not), or it ends with records not yet durable.
    // Run as an ES module from -e with a loader: the thread must not take the process's flags.
    const module = pathToFileURL(join(import.meta.dirname, '../../app/audit/flush-thread.ts')).href;
    const script = `
      import { openSync, writeSync } from 'node:fs';
      import { FlushThread } from ${JSON.stringify(module)};
      const thread = new FlushThread({ pollMs: 0, idleSpinMs: 0 });
      thread.start();
      for (let i = 0; !thread.ready; i++) {
        if (i === 1000) throw new Error('the flush thread did not start');
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      const fd = openSync(process.argv[1], 'a');
      for (let i = 0; i < 20; i++) {
        writeSync(fd, 'x\\n');
        await thread.flush(fd);
      }
      process.stdout.write('flushed 20');
    `;
    const path = join(await tempDir(), 'log');
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', '--input-type=module', '-e', script, path],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const code = await new Promise((resolve) => child.once('exit', resolve));
    expect({ code, out, err }).toEqual({ code: 0, out: 'flushed 20', err: '' });
    expect(readFileSync(path, 'utf8')).toBe('x\n'.repeat(20));
  });
});
