/**
 * The push-to-talk accelerator rule (Electron's globalShortcut syntax), shared by main, which
 * registers it, and the renderer, which says what is wrong while the user types. Pure TS.
 */

export const DEFAULT_SHORTCUT = 'CommandOrControl+Shift+Space';
export const MAX_ACCELERATOR_LENGTH = 64;

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

/** Only these characters may appear at all (letters, digits, '+' and US-keyboard punctuation). */
const ALLOWED = /^[A-Za-z0-9+)!@#$%^&*(:;=<,_\->.?/~`{\]}[|\\'"]+$/;

function isKey(token: string): boolean {
  const t = token.toLowerCase();
  if (NAMED_KEYS.has(t)) return true;
  if (/^f([1-9]|1[0-9]|2[0-4])$/.test(t)) return true;
  if (/^num[0-9]$/.test(t)) return true;
  return token.length === 1 && token !== '+';
}

/** F-keys and media keys may stand alone; any other key needs a modifier (no typing hijacked). */
function standsAlone(token: string): boolean {
  const t = token.toLowerCase();
  return /^f([1-9]|1[0-9]|2[0-4])$/.test(t) || t.startsWith('media') || t.startsWith('volume');
}

/**
 * The accelerator as Electron takes it, or why it is refused: a bounded string of allowed
 * characters, modifiers joined by '+', exactly one key at the end, no modifier twice.
 */
export function checkAccelerator(
  value: unknown,
): { ok: true; accelerator: string } | { ok: false; reason: string } {
  if (typeof value !== 'string') return { ok: false, reason: 'a shortcut must be a string' };
  const accel = value;
  if (accel.length === 0) return { ok: false, reason: 'the shortcut is empty' };
  if (accel.length > MAX_ACCELERATOR_LENGTH)
    return { ok: false, reason: `a shortcut has at most ${MAX_ACCELERATOR_LENGTH} characters` };
  if (!ALLOWED.test(accel))
    return { ok: false, reason: 'the shortcut contains characters a shortcut cannot have' };
  const tokens = accel.split('+');
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
  return { ok: true, accelerator: accel };
}
