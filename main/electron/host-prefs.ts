/**
 * The desktop host's own choices, kept apart from the core's settings (the terminal and browser
 * hosts have no tray). One small JSON file in Electron's userData, replaced atomically; a missing
 * or damaged file means the defaults.
 */
import { readFile } from 'node:fs/promises';
import { writeFileAtomic } from '../../app/settings/atomic.js';

export interface HostPrefs {
  /** Closing the window hides it to the tray instead of quitting. */
  keepInTray: boolean;
}

/**
 * Hiding to the tray is the default only where a tray icon is sure to be seen. On Linux `new
 * Tray()` never fails (Electron falls back, asynchronously, to nothing where the desktop has no
 * StatusNotifier host, as on GNOME without the AppIndicator extension), so hiding there is opt-in
 * from the tray menu itself: whoever can tick the box can see the icon that brings the window back.
 */
export function defaultHostPrefs(platform: NodeJS.Platform): HostPrefs {
  return { keepInTray: platform !== 'linux' };
}

export class HostPrefsFile {
  private queue: Promise<unknown> = Promise.resolve();

  private constructor(
    readonly file: string,
    private prefs: HostPrefs,
  ) {}

  static async open(file: string, platform: NodeJS.Platform): Promise<HostPrefsFile> {
    const prefs = defaultHostPrefs(platform);
    try {
      const saved = JSON.parse(await readFile(file, 'utf8')) as unknown;
      if (saved && typeof saved === 'object' && !Array.isArray(saved)) {
        const { keepInTray } = saved as Partial<HostPrefs>;
        if (typeof keepInTray === 'boolean') prefs.keepInTray = keepInTray;
      }
    } catch {
      // Absent or damaged: the defaults, written again on the next change.
    }
    return new HostPrefsFile(file, prefs);
  }

  get(): Readonly<HostPrefs> {
    return this.prefs;
  }

  /** Takes effect at once; the returned promise settles when the file holds it. */
  set(patch: Partial<HostPrefs>): Promise<void> {
    this.prefs = { ...this.prefs, ...patch };
    const body = `${JSON.stringify(this.prefs, null, 2)}\n`;
    const result = this.queue.then(() => writeFileAtomic(this.file, body));
    this.queue = result.catch(() => undefined);
    return result;
  }
}
