import { escapedUnsafe, UNSAFE_CHARS } from '../../unsafe-chars.js';
import { ServiceFailure } from '../service.js';
import { quoteInput } from './display.js';

/**
 * The lexical half of the sandbox (DESIGN §5): everything that can be refused from the text of a
 * path alone, before the file system is touched. The rules are the union of what POSIX, macOS and
 * Windows treat specially, applied on every platform, so a name that is safe here is safe
 * everywhere the agent runs and a model gets the same answer whatever machine it talks to.
 */

export const MAX_PATH_CHARS = 1024;
export const MAX_SEGMENT_BYTES = 255;

const EXAMPLE = "such as 'notes/todo.txt'";

// eslint-disable-next-line no-control-regex -- finding control characters is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
// Direction marks and overrides: they make 'txt.exe' display as 'exe.txt' (Trojan Source).
const BIDI = /[\u200e\u200f\u061c\u202a-\u202e\u2066-\u2069]/;
// Some names are spelled with invisible characters and still read as what they are: an emoji
// joins its parts with U+200D (woman, U+200D, laptop is one 'technologist'), and the flag of
// Scotland is U+1F3F4 followed by tag characters. Only the fixed list of emoji Unicode recommends
// (RGI) counts, so tags cannot carry free text. Built from a string because the types target
// ES2023, which predates the `v` flag that every Node and Electron this runs on supports.
const EMOJI = new RegExp('\\p{RGI_Emoji}', 'gv');
// Persian is typed with U+200C between letters of one word (the plural suffix in 'ketab-ha'); in
// Arabic script it changes how the letters connect, so the name reads differently without it.
const ARABIC_NON_JOINER = /(?<=\p{Script=Arabic}\p{M}*)\u200c(?=\p{Script=Arabic})/gu;
const SCHEME = /^[a-z][a-z0-9+.-]*:\/\//i;
const DRIVE = /^[a-z]:/i;
const DRIVE_ABSOLUTE = /^[a-z]:[\\/]/i;
// Two leading separators: UNC shares (\\server\share) and device paths (\\?\, \\.\).
const UNC = /^[\\/]{2}/;
// Windows opens the device for these names whatever the extension: 'nul.txt' is NUL.
const RESERVED = /^(con|prn|aux|nul|conin\$|conout\$|com[1-9¹²³]|lpt[1-9¹²³]) *(\..*)?$/i;

export interface ParsedPath {
  absolute: boolean;
  /** The input with `\` turned into `/` (both are separators on Windows; treating them alike here catches `..\..\x`). */
  path: string;
}

function invalid(message: string): ServiceFailure {
  return new ServiceFailure('path_invalid', message);
}

/**
 * The first character in `input` that makes a name read as another (zero-width, line and word
 * separators, byte-order marks, tag characters: app/unsafe-chars.ts), past those that spell an
 * emoji or a Persian word. `at` counts characters from 1, as a person would.
 */
function firstHidden(input: string): { code: string; at: number } | undefined {
  const masked = input
    .replace(EMOJI, (emoji) => '_'.repeat(emoji.length))
    .replace(ARABIC_NON_JOINER, '_');
  const index = masked.search(UNSAFE_CHARS);
  if (index === -1) return undefined;
  const point = input.codePointAt(index) as number;
  const code = `U+${point.toString(16).toUpperCase().padStart(4, '0')}`;
  return { code, at: [...input.slice(0, index)].length + 1 };
}

/** Echoes untrusted text in a message with every unsafe character written out, tags included. */
function quoted(text: string): string {
  return escapedUnsafe(quoteInput(text));
}

function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value}`;
}

export interface ParseOptions {
  /** A folder may be named too: '', '.', and a trailing '/' are accepted ('' = the root). */
  folder?: boolean;
}

export function parseUntrustedPath(
  input: unknown,
  platform: NodeJS.Platform = process.platform,
  options: ParseOptions = {},
): ParsedPath {
  const noun = options.folder ? 'path' : 'file name';
  if (typeof input !== 'string') {
    throw invalid(`the ${noun} must be a string ${EXAMPLE}, not ${typeName(input)}`);
  }
  if (input.length === 0) {
    if (options.folder) return { absolute: false, path: '.' };
    throw invalid(`the file name is empty; give one ${EXAMPLE}`);
  }
  if (input.length > MAX_PATH_CHARS) {
    throw invalid(`the ${noun} is ${input.length} characters long; use at most ${MAX_PATH_CHARS}`);
  }
  const q = quoted(input);
  if (input.includes('\u0000')) throw invalid(`${q} contains a NUL character; remove it`);
  if (CONTROL.test(input)) throw invalid(`${q} contains a control character; remove it`);
  if (BIDI.test(input)) {
    throw invalid(`${q} contains an invisible text-direction character; remove it`);
  }
  // A look-alike name: the prompt would read 'notes.txt' while another file is written.
  const hidden = firstHidden(input);
  if (hidden) {
    throw invalid(
      `${q} contains an invisible character (${hidden.code}, character ${hidden.at} of the ${noun}); remove it`,
    );
  }
  if (SCHEME.test(input)) throw invalid(`${q} is a URL; give a plain file path ${EXAMPLE}`);
  if (UNC.test(input)) {
    throw invalid(`${q} is a network or device path; give a path inside the allowed folder`);
  }

  let absolute = false;
  let skipFirst = false;
  if (DRIVE.test(input)) {
    // On Windows a full drive path may still name a place inside a root; containment decides.
    // 'C:x' (relative to the drive's current folder) is never meaningful here.
    if (platform === 'win32' && DRIVE_ABSOLUTE.test(input)) {
      absolute = true;
      skipFirst = true;
    } else {
      throw invalid(
        `${q} is a Windows drive path; give a path relative to the allowed folder ${EXAMPLE}`,
      );
    }
  }
  if (input.startsWith('~')) {
    throw invalid(
      `${q} starts with '~', which is not expanded; give a path relative to the allowed folder ${EXAMPLE}`,
    );
  }

  const slashed = input.replace(/\\/g, '/');
  if (slashed.startsWith('/')) absolute = true;

  const segments = slashed.split('/');
  const last = segments[segments.length - 1];
  if (!options.folder && (last === '' || last === '.' || last === '..')) {
    throw invalid(`${q} names a folder, not a file; add a file name ${EXAMPLE}`);
  }
  for (const [i, segment] of segments.entries()) {
    if (skipFirst && i === 0) continue;
    if (segment === '' || segment === '.' || segment === '..') continue;
    const part = quoted(segment);
    if (Buffer.byteLength(segment, 'utf8') > MAX_SEGMENT_BYTES) {
      throw invalid(`${part} is longer than ${MAX_SEGMENT_BYTES} bytes; use a shorter name`);
    }
    if (segment.includes(':')) {
      throw invalid(`${part} contains ':', which Windows reads as a hidden data stream; remove it`);
    }
    if (RESERVED.test(segment)) {
      throw invalid(`${part} is a reserved device name on Windows; choose another name`);
    }
    if (segment.endsWith('.') || segment.endsWith(' ')) {
      throw invalid(`${part} ends with a dot or a space, which Windows drops silently; remove it`);
    }
  }
  return { absolute, path: slashed };
}
