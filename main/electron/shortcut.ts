/**
 * The global push-to-talk shortcut (Electron only). Electron's globalShortcut reports key-down
 * only, never key-up, so the shortcut is a toggle: the first press starts a turn, the next ends
 * it. The renderer chooses the accelerator (Settings → Voice) and sends it over the guarded
 * `agent:setShortcut` channel; every press is sent to our window on `agent:shortcut`.
 */
import { globalShortcut } from 'electron';
import { checkAccelerator } from '../../app/contract/accelerator.js';

export {
  DEFAULT_SHORTCUT,
  MAX_ACCELERATOR_LENGTH,
  checkAccelerator,
} from '../../app/contract/accelerator.js';

export type ShortcutResult =
  | { ok: true; accelerator: string | null }
  | { ok: false; code: 'invalid_args' | 'failed'; error: string };

/** Owns at most one registered accelerator. */
export class PushToTalkShortcut {
  private current: string | null = null;

  constructor(private readonly onPress: () => void) {}

  get accelerator(): string | null {
    return this.current;
  }

  /**
   * Register `value` (null turns the shortcut off). The new one is registered before the old one
   * is released, so a shortcut taken by another app leaves the previous one working.
   */
  set(value: unknown): ShortcutResult {
    if (value === null) {
      this.clear();
      return { ok: true, accelerator: null };
    }
    const checked = checkAccelerator(value);
    if (!checked.ok) return { ok: false, code: 'invalid_args', error: checked.reason };
    const next = checked.accelerator;
    if (next === this.current) return { ok: true, accelerator: next };
    let registered: boolean;
    try {
      registered = globalShortcut.register(next, () => this.onPress());
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
    return { ok: true, accelerator: next };
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
