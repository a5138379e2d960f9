/**
 * The global push-to-talk shortcut, the page's side (Electron only: window.agent.setShortcut).
 * Electron reports key-down only, so the shortcut is a toggle: the first press starts a turn,
 * the next one ends it. The choice is kept in this browser's storage and registered by main at
 * start. Pure (no DOM types): the checks are unit-tested under Node. Main checks again
 * (main/electron/shortcut.ts): this copy only lets the settings say what is wrong before asking.
 */

export const DEFAULT_SHORTCUT = 'CommandOrControl+Shift+Space';
export const MAX_ACCELERATOR_LENGTH = 64;
const SHORTCUT_KEY = 'advent-agent.voice.shortcut';
const OFF = 'off';

const MODIFIERS: ReadonlySet<string> = new Set(
  [
    'Command',
    'Cmd',
    'Control',
    'Ctrl',
    'CommandOrControl',
    'CmdOrCtrl',
    'Alt',
    'Option',
    'AltGr',
    'Shift',
    'Super',
    'Meta',
  ].map((m) => m.toLowerCase()),
);

const NAMED_KEYS: ReadonlySet<string> = new Set(
  [
    'Plus',
    'Space',
    'Tab',
    'Capslock',
    'Numlock',
    'Scrolllock',
    'Backspace',
    'Delete',
    'Insert',
    'Return',
    'Enter',
    'Up',
    'Down',
    'Left',
    'Right',
    'Home',
    'End',
    'PageUp',
    'PageDown',
    'Escape',
    'Esc',
    'VolumeUp',
    'VolumeDown',
    'VolumeMute',
    'MediaNextTrack',
    'MediaPreviousTrack',
    'MediaStop',
    'MediaPlayPause',
    'PrintScreen',
    'numdec',
    'numadd',
    'numsub',
    'nummult',
    'numdiv',
  ].map((k) => k.toLowerCase()),
);

const ALLOWED = /^[A-Za-z0-9+)!@#$%^&*(:;=<,_\->.?/~`{\]}[|\\'"]+$/;
const FKEY = /^f([1-9]|1[0-9]|2[0-4])$/;

function isKey(token: string): boolean {
  const t = token.toLowerCase();
  if (NAMED_KEYS.has(t) || FKEY.test(t) || /^num[0-9]$/.test(t)) return true;
  return token.length === 1 && token !== '+';
}

function standsAlone(token: string): boolean {
  const t = token.toLowerCase();
  return FKEY.test(t) || t.startsWith('media') || t.startsWith('volume');
}

/** The same rule as main: bounded, allowed characters, modifiers + one key, a modifier unless F-key. */
export function checkAccelerator(
  value: unknown,
): { ok: true; accelerator: string } | { ok: false; reason: string } {
  if (typeof value !== 'string') return { ok: false, reason: 'a shortcut must be a string' };
  if (value.length === 0) return { ok: false, reason: 'the shortcut is empty' };
  if (value.length > MAX_ACCELERATOR_LENGTH)
    return { ok: false, reason: `a shortcut has at most ${MAX_ACCELERATOR_LENGTH} characters` };
  if (!ALLOWED.test(value))
    return { ok: false, reason: 'the shortcut contains characters a shortcut cannot have' };
  const tokens = value.split('+');
  const key = tokens.pop() ?? '';
  if (!isKey(key)) return { ok: false, reason: `'${key}' is not a key a shortcut can end with` };
  const seen = new Set<string>();
  for (const mod of tokens) {
    const m = mod.toLowerCase();
    if (!MODIFIERS.has(m)) return { ok: false, reason: `'${mod}' is not a modifier` };
    if (seen.has(m)) return { ok: false, reason: `'${mod}' appears twice` };
    seen.add(m);
  }
  if (tokens.length === 0 && !standsAlone(key))
    return { ok: false, reason: 'a shortcut needs a modifier such as Ctrl, Alt or Shift' };
  return { ok: true, accelerator: value };
}

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
