import { ServiceFailure } from '../service.js';
import { readClipboardCommands, writeClipboardCommands } from './commands.js';
import type { ClipboardStore, Desktop } from './desktop.js';
import { runFirst } from './fallback.js';

/** Longest clipboard text read (a clipboard can hold a whole book; a result cannot). */
export const MAX_CLIPBOARD_READ_BYTES = 1024 * 1024;

/** The host's clipboard where it injected one (Electron), else the platform's commands. */
export function clipboardOf(desktop: Desktop): ClipboardStore {
  return desktop.clipboard ?? platformClipboard(desktop);
}

function noDisplay(desktop: Desktop): ServiceFailure | undefined {
  if (desktop.platform !== 'linux' || desktop.env.DISPLAY || desktop.env.WAYLAND_DISPLAY)
    return undefined;
  return new ServiceFailure(
    'unsupported',
    'this computer has no graphical session (no DISPLAY or WAYLAND_DISPLAY), so there is no clipboard to use',
  );
}

export function platformClipboard(desktop: Desktop): ClipboardStore {
  return {
    async readText() {
      const missing = noDisplay(desktop);
      if (missing) throw missing;
      const { output } = await runFirst(
        desktop.runner,
        readClipboardCommands(desktop.platform, desktop.env),
        'reading the clipboard',
        { timeoutMs: 5000, maxBytes: MAX_CLIPBOARD_READ_BYTES },
      );
      return output.stdout;
    },
    async writeText(text) {
      const missing = noDisplay(desktop);
      if (missing) throw missing;
      await runFirst(
        desktop.runner,
        writeClipboardCommands(desktop.platform, desktop.env, text),
        'writing the clipboard',
        { timeoutMs: 5000, output: 'ignore' },
      );
    },
  };
}
