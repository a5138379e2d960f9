/**
 * What the desktop app gives the desktop services that the platform commands cannot: Electron's
 * own clipboard (works on every platform without xclip & co.) and screen capture through
 * desktopCapturer; and a desktop notification when a reminder rings. The Electron objects are
 * passed in, so everything here runs in tests with stand-ins.
 */
import { Notification, clipboard, desktopCapturer, screen } from 'electron';
import type { CoreApi } from '../../app/api.js';
import type { ReminderFired } from '../../app/contract/reminders.js';
import type {
  ClipboardStore,
  Desktop,
  ScreenImage,
  ScreenSource,
} from '../../app/services/platform/desktop.js';
import { MAX_CLIPBOARD_READ_BYTES } from '../../app/services/platform/clipboard.js';
import { ServiceFailure } from '../../app/services/service.js';
import { oneLine } from '../../app/unsafe-chars.js';
import { notificationBody } from './notify.js';

/** Wide enough to read a screen, small enough to send: vision models scale down further anyway. */
export const MAX_CAPTURE_WIDTH = 1600;
const JPEG_QUALITY = 80;

export interface ThumbnailLike {
  isEmpty(): boolean;
  getSize(): { width: number; height: number };
  toJPEG(quality: number): Buffer;
}

export interface CapturerLike {
  getSources(options: {
    types: ['screen'];
    thumbnailSize: { width: number; height: number };
  }): Promise<{ display_id: string; thumbnail: ThumbnailLike }[]>;
}

export interface ScreensLike {
  getPrimaryDisplay(): { id: number; size: { width: number; height: number }; scaleFactor: number };
}

/** Electron's clipboard (its typings have turned these async; await works either way). */
export interface ClipboardLike {
  readText(): string | Promise<string>;
  writeText(text: string): void | Promise<void>;
}

/** The primary screen as a JPEG, at most MAX_CAPTURE_WIDTH wide. */
export function screenSource(capturer: CapturerLike, screens: ScreensLike): ScreenSource {
  return async (): Promise<ScreenImage> => {
    const display = screens.getPrimaryDisplay();
    const width = Math.round(display.size.width * display.scaleFactor);
    const height = Math.round(display.size.height * display.scaleFactor);
    const scale = Math.min(1, MAX_CAPTURE_WIDTH / Math.max(1, width));
    const sources = await capturer.getSources({
      types: ['screen'],
      thumbnailSize: { width: Math.round(width * scale), height: Math.round(height * scale) },
    });
    const source = sources.find((s) => s.display_id === String(display.id)) ?? sources[0];
    // macOS gives an empty picture until the user allows Screen Recording for the app.
    if (!source || source.thumbnail.isEmpty())
      throw new ServiceFailure(
        'denied',
        'the system did not let the app capture the screen (on macOS the user must allow it in System Settings → Privacy & Security → Screen Recording)',
      );
    const size = source.thumbnail.getSize();
    return {
      data: source.thumbnail.toJPEG(JPEG_QUALITY),
      mimeType: 'image/jpeg',
      width: size.width,
      height: size.height,
    };
  };
}

/** The start of `text`, at most `units` long, never ending on half a surrogate pair. */
function head(text: string, units: number): string {
  if (text.length <= units) return text;
  const high = text.charCodeAt(units - 1);
  const end = high >= 0xd800 && high <= 0xdbff ? units - 1 : units;
  // A copy: a slice would keep the whole clipboard string alive as long as the part lives.
  return Buffer.from(text.slice(0, end), 'utf16le').toString('utf16le');
}

/**
 * At most MAX_CLIPBOARD_READ_BYTES UTF-16 units of Electron's clipboard text reach the services
 * (the bound the xclip / pbpaste path has in bytes). Electron hands over whatever was copied, a
 * 100 MiB log too; the services see only its start, and read_clipboard says that there is more.
 */
export function clipboardStore(cb: ClipboardLike): ClipboardStore {
  return {
    readText: async () => head(await cb.readText(), MAX_CLIPBOARD_READ_BYTES),
    writeText: async (text) => {
      await cb.writeText(text);
    },
  };
}

/** The desktop app's additions to the services' view of this computer. */
export function desktopOptions(): Partial<Desktop> {
  return {
    clipboard: clipboardStore(clipboard),
    screen: screenSource(desktopCapturer as unknown as CapturerLike, screen),
  };
}

const WORDS = {
  en: { reminder: 'Reminder', timer: "Time's up", missed: 'Missed reminder' },
  'zh-CN': { reminder: '提醒', timer: '时间到', missed: '错过的提醒' },
} as const;

/**
 * The notification's words. On Linux the notification server reads the body as markup: a server's
 * `<a href>` would render as a link, and broken markup can blank the reminder. There it is escaped.
 */
export function reminderNotice(
  { reminder }: ReminderFired,
  language: string,
  platform: NodeJS.Platform = process.platform,
): { title: string; body: string } {
  const words = language === 'zh-CN' ? WORDS['zh-CN'] : WORDS.en;
  const title = reminder.kind === 'timer' ? words.timer : words.reminder;
  // One line without control/bidi characters, as the prompt showed it (a stored text is cleaned
  // already; this keeps the notification honest whatever put the text there).
  const text = oneLine(reminder.text) || title;
  return { title, body: notificationBody(text, platform) };
}

export interface ReminderNotifyOptions {
  api: Pick<CoreApi, 'events'>;
  language: () => string;
  showWindow: () => void;
  iconPath?: string;
}

/** A desktop notification for every reminder that rings; clicking it shows the window. */
export function notifyReminders({
  api,
  language,
  showWindow,
  iconPath,
}: ReminderNotifyOptions): () => void {
  const shown = new Set<Notification>();
  const off = api.events.on('reminder', (fired) => {
    if (!Notification.isSupported()) return;
    const { title, body } = reminderNotice(fired, language());
    const note = new Notification({ title, body, ...(iconPath ? { icon: iconPath } : {}) });
    note.on('click', () => showWindow());
    note.on('close', () => shown.delete(note));
    shown.add(note);
    note.show();
  });
  return () => {
    off();
    for (const note of shown) note.close();
    shown.clear();
  };
}
