import os from 'node:os';
import path from 'node:path';
import { relativeInside } from './contain.js';

/** A path as the user and the model should see it: the home folder shortened to `~`. */
export function displayPath(abs: string, home: string = os.homedir()): string {
  if (!home) return abs;
  const rel = relativeInside(home, abs);
  if (rel === undefined) return abs;
  return rel === '' ? '~' : `~${path.sep}${rel}`;
}

// Characters that would make an echoed name lie about itself on screen (control, bidi, invisible).
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]/g;

/**
 * Echo untrusted input inside a message: quoted, invisible characters made visible as \uXXXX, and
 * cut short, so a hostile name cannot reorder or flood the prompt the user reads.
 */
export function quoteInput(input: string, max = 80): string {
  const cut = input.length > max ? `${input.slice(0, max)}…` : input;
  const safe = cut.replace(UNSAFE, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`);
  return `'${safe}'`;
}
