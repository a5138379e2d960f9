/**
 * The global push-to-talk shortcut (Electron only). Electron's globalShortcut reports key-down
 * only, never key-up, so the shortcut is a toggle: the first press starts a turn, the next ends
 * it. The renderer chooses the accelerator (Settings → Voice) and sends it over the guarded
 * `agent:setShortcut` channel; every press is sent to our window on `agent:shortcut`.
 *
 * On Wayland the desktop owns global shortcuts: Chromium hands them to the XDG GlobalShortcuts
 * portal, and Electron's register() then returns true whatever the desktop decides (it needs a
 * valid desktop-file identity and, on GNOME, the user's approval). There a "registered" answer
 * is unconfirmed, and the user is told so instead.
 */
import { globalShortcut } from 'electron';
import { checkAccelerator } from '../../app/contract/accelerator.js';
import type { AgentNotice } from '../../app/contract/notice.js';

export {
  DEFAULT_SHORTCUT,
  MAX_ACCELERATOR_LENGTH,
  checkAccelerator,
} from '../../app/contract/accelerator.js';

/** `system`: the OS answers register() truthfully (X11, Windows, macOS); `portal`: Wayland. */
export type ShortcutBackend = 'system' | 'portal';

/**
 * Which backend globalShortcut uses in this process. Electron ≥ 38 is a native Wayland client when
 * XDG_SESSION_TYPE is `wayland` (unless `--ozone-platform` says otherwise), and Chromium's
 * GlobalShortcutsPortal feature is on by default there.
 */
export function shortcutBackend(
  platform: NodeJS.Platform = process.platform,
  env: NodeJS.ProcessEnv = process.env,
  ozonePlatform = '',
): ShortcutBackend {
  if (platform !== 'linux') return 'system';
  if (ozonePlatform === 'x11') return 'system';
  if (ozonePlatform === 'wayland') return 'portal';
  return env.XDG_SESSION_TYPE === 'wayland' ? 'portal' : 'system';
}

/** What the user reads when the desktop may or may not have taken the shortcut. */
export function unconfirmedShortcutNotice(accelerator: string): AgentNotice {
  return {
    message:
      `Push-to-talk: your desktop (Wayland) decides about global shortcuts and does not tell apps ` +
      `whether it took ${accelerator}. If pressing it does nothing, approve or set the shortcut for ` +
      `Advent Agent in your desktop's keyboard settings (GNOME 48+ or KDE Plasma), or use the talk ` +
      `button in the window.`,
    words: { key: 'notice.shortcutUnconfirmed', params: { shortcut: accelerator } },
  };
}

export type ShortcutResult =
  | { ok: true; accelerator: string | null; confirmed: boolean }
  | { ok: false; code: 'invalid_args' | 'failed'; error: string };

/** Owns at most one registered accelerator. */
export class PushToTalkShortcut {
  private current: string | null = null;

  constructor(
    private readonly onPress: () => void,
    private readonly backend: ShortcutBackend = 'system',
  ) {}

  get accelerator(): string | null {
    return this.current;
  }

  /**
   * Register `value` (null turns the shortcut off). The new one is registered before the old one
   * is released, so a shortcut taken by another app leaves the previous one working.
   */
  set(value: unknown): ShortcutResult {
    const confirmed = this.backend === 'system';
    if (value === null) {
      this.clear();
      return { ok: true, accelerator: null, confirmed: true };
    }
    const checked = checkAccelerator(value);
    if (!checked.ok) return { ok: false, code: 'invalid_args', error: checked.reason };
    const next = checked.accelerator;
    if (next === this.current) return { ok: true, accelerator: next, confirmed };
    let registered: boolean;
    try {
      // A portal binding outlives unregister() (Electron cannot remove it), so a press counts
      // only while its accelerator is the current one.
      registered = globalShortcut.register(next, () => {
        if (this.current === next) this.onPress();
      });
    } catch (err) {
      return {
        ok: false,
        code: 'invalid_args',
        error: `Electron refused the shortcut ${next}: ${err instanceof Error ? err.message : String(err)}`,
      };
    }
    if (!registered)
      return {
        ok: false,
        code: 'failed',
        error: `the shortcut ${next} could not be registered: another app or the system uses it`,
      };
    this.clear();
    this.current = next;
    return { ok: true, accelerator: next, confirmed };
  }

  clear(): void {
    if (this.current === null) return;
    try {
      globalShortcut.unregister(this.current);
    } finally {
      this.current = null;
    }
  }
}
