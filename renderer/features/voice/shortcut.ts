/**
 * The global push-to-talk shortcut, the page's side (Electron only: window.agent.setShortcut).
 * Electron reports key-down only, so the shortcut is a toggle: the first press starts a turn,
 * the next one ends it. The choice is kept in this browser's storage and registered by main at
 * start. Pure (no DOM types): the checks are unit-tested under Node. The rule itself
 * is app/contract/accelerator.ts, the one main enforces.
 */

import { DEFAULT_SHORTCUT, checkAccelerator } from '../../../app/contract/accelerator.js';

export {
  DEFAULT_SHORTCUT,
  MAX_ACCELERATOR_LENGTH,
  checkAccelerator,
} from '../../../app/contract/accelerator.js';

const SHORTCUT_KEY = 'advent-agent.voice.shortcut';
const OFF = 'off';

interface KeyValueStore {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
  removeItem(key: string): void;
}

function storage(): KeyValueStore | undefined {
  try {
    return (globalThis as unknown as { localStorage?: KeyValueStore }).localStorage;
  } catch {
    return undefined;
  }
}

/** The remembered choice: an accelerator, or null when the user turned the shortcut off. */
export const shortcutPref = {
  get(): string | null {
    let stored: string | null | undefined;
    try {
      stored = storage()?.getItem(SHORTCUT_KEY);
    } catch {
      stored = undefined;
    }
    if (stored === OFF) return null;
    return stored && checkAccelerator(stored).ok ? stored : DEFAULT_SHORTCUT;
  },
  set(accelerator: string | null): void {
    try {
      if (accelerator === DEFAULT_SHORTCUT) storage()?.removeItem(SHORTCUT_KEY);
      else storage()?.setItem(SHORTCUT_KEY, accelerator ?? OFF);
    } catch {
      // Storage may be disabled: the choice lasts until the app restarts.
    }
  },
};

/** What the page needs from window.agent for the shortcut (Electron's preload has it). */
export interface ShortcutHost {
  setShortcut(accelerator: string | null): Promise<string | null | undefined>;
  onShortcut(cb: () => void): () => void;
}

export function shortcutHost(): ShortcutHost | undefined {
  const agent = (globalThis as { agent?: Partial<ShortcutHost> }).agent;
  return typeof agent?.setShortcut === 'function' && typeof agent.onShortcut === 'function'
    ? (agent as ShortcutHost)
    : undefined;
}

/**
 * Register `accelerator` (null: off) with main, and remember it only once main took it. Rejects
 * with main's reason (taken by another app, or invalid) and keeps the previous choice then.
 */
export async function applyShortcut(
  host: ShortcutHost,
  accelerator: string | null,
): Promise<string | null> {
  if (accelerator !== null) {
    const checked = checkAccelerator(accelerator);
    if (!checked.ok) throw new Error(checked.reason);
  }
  const registered = (await host.setShortcut(accelerator)) ?? null;
  shortcutPref.set(registered);
  return registered;
}

/**
 * At start: register the remembered shortcut and toggle talk on every press. Returns the
 * unsubscribe. A shortcut that cannot be registered (taken since) is only logged: Settings → Voice
 * says so when the user looks.
 */
export function startShortcut(host: ShortcutHost, toggle: () => void): () => void {
  const off = host.onShortcut(toggle);
  startProblem = undefined;
  void host.setShortcut(shortcutPref.get()).catch((err: unknown) => {
    startProblem = errorText(err);
    console.warn('[voice] the push-to-talk shortcut is not set:', err);
  });
  return off;
}

let startProblem: string | undefined;

/** Why the remembered shortcut could not be registered at start, if it could not. */
export function shortcutStartProblem(): string | undefined {
  return startProblem;
}

export function errorText(err: unknown): string {
  if (err && typeof err === 'object' && typeof (err as { message?: unknown }).message === 'string')
    return (err as { message: string }).message;
  return String(err);
}
