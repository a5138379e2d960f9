import type { ChildProcess, SpawnOptions } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import {
  noDisplayReason,
  openInBrowser,
  openerCommand,
} from '../../../main/headless/open-browser.js';

const URL = 'http://127.0.0.1:4000/?token=abc';

class FakeOpener extends EventEmitter {
  unrefd = false;
  unref(): void {
    this.unrefd = true;
  }
}

function fakeSpawn(act: (child: FakeOpener) => void) {
  const calls: { command: string; args: string[]; options: SpawnOptions }[] = [];
  const spawn = (command: string, args: string[], options: SpawnOptions): ChildProcess => {
    calls.push({ command, args, options });
    const child = new FakeOpener();
    setTimeout(() => act(child), 1);
    return child as unknown as ChildProcess;
  };
  return { calls, spawn };
}

describe('opening the browser', () => {
  it('needs DISPLAY or WAYLAND_DISPLAY on Linux, nothing on macOS and Windows', () => {
    expect(noDisplayReason('linux', {})).toMatch(/no display/);
    expect(noDisplayReason('linux', { DISPLAY: '' })).toMatch(/no display/);
    expect(noDisplayReason('linux', { DISPLAY: ':1' })).toBeUndefined();
    expect(noDisplayReason('freebsd', { WAYLAND_DISPLAY: 'wayland-0' })).toBeUndefined();
    expect(noDisplayReason('darwin', {})).toBeUndefined();
    expect(noDisplayReason('win32', {})).toBeUndefined();
  });

  it('uses xdg-open, open or start', () => {
    expect(openerCommand('linux', URL)).toEqual(['xdg-open', [URL]]);
    expect(openerCommand('darwin', URL)).toEqual(['open', [URL]]);
    expect(openerCommand('win32', URL)).toEqual(['cmd', ['/d', '/s', '/c', 'start', '""', URL]]);
  });

  it('does not try without a display', async () => {
    const f = fakeSpawn(() => {});
    await expect(
      openInBrowser(URL, { platform: 'linux', env: {}, spawn: f.spawn }),
    ).rejects.toThrow(/no display/);
    expect(f.calls).toEqual([]);
  });

  it('resolves when the opener exits 0, or is still running after a moment', async () => {
    const ok = fakeSpawn((c) => c.emit('exit', 0, null));
    await openInBrowser(URL, { platform: 'linux', env: { DISPLAY: ':0' }, spawn: ok.spawn });
    expect(ok.calls[0]).toMatchObject({ command: 'xdg-open', args: [URL] });

    let child: FakeOpener | undefined;
    const stays = fakeSpawn((c) => (child = c));
    await openInBrowser(URL, { platform: 'darwin', spawn: stays.spawn, settleMs: 20 });
    expect(child?.unrefd).toBe(true);
  });

  it('rejects with a reason when the opener is missing or fails', async () => {
    const missing = fakeSpawn((c) =>
      c.emit('error', Object.assign(new Error('spawn xdg-open ENOENT'), { code: 'ENOENT' })),
    );
    await expect(
      openInBrowser(URL, { platform: 'linux', env: { DISPLAY: ':0' }, spawn: missing.spawn }),
    ).rejects.toThrow('xdg-open is not installed');
    const fails = fakeSpawn((c) => c.emit('exit', 3, null));
    await expect(
      openInBrowser(URL, { platform: 'linux', env: { DISPLAY: ':0' }, spawn: fails.spawn }),
    ).rejects.toThrow('xdg-open exited with code 3');
  });
});
