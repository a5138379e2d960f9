import { clipboardOf } from '../platform/clipboard.js';
import type { Desktop } from '../platform/desktop.js';
import type { Service } from '../service.js';

/** What a result carries at most; the rest is cut with a note (results are capped anyway). */
export const MAX_CLIPBOARD_CHARS = 8000;

/** How far run() reads: MAX_CLIPBOARD_CHARS code points take at most two UTF-16 units each. */
const SCAN_UNITS = 2 * MAX_CLIPBOARD_CHARS;

interface Walk {
  /** Where the first MAX_CLIPBOARD_CHARS code points end (text.length when there are no more). */
  cut: number;
  /** Code points in text.slice(0, scanned). */
  counted: number;
  scanned: number;
}

function pairAt(text: string, i: number): boolean {
  const high = text.charCodeAt(i);
  const low = text.charCodeAt(i + 1);
  return high >= 0xd800 && high <= 0xdbff && low >= 0xdc00 && low <= 0xdfff;
}

/**
 * Code points from the start, never past SCAN_UNITS: the same work for a word and for a 100 MiB
 * log (Array.from over the whole blocked the event loop for seconds, and threw past 128 MiB).
 */
function walk(text: string): Walk {
  let cut = text.length;
  let counted = 0;
  let i = 0;
  while (i < text.length && i < SCAN_UNITS) {
    i += pairAt(text, i) ? 2 : 1;
    counted += 1;
    if (counted === MAX_CLIPBOARD_CHARS) cut = i;
  }
  return { cut, counted, scanned: i };
}

export function readClipboardService(desktop: Desktop): Service<Record<string, never>> {
  return {
    name: 'read_clipboard',
    title: 'Read the clipboard',
    summary: 'Sends the text you copied to the server that asks (you are asked first).',
    group: 'clipboard',
    description:
      "Read the text on the user's clipboard (what they last copied). The user is asked first, " +
      'because it leaves their computer.',
    parameters: { type: 'object', properties: {}, additionalProperties: false },
    risk: 'private',
    timeoutMs: 8000,
    preview(_params, ctx) {
      return {
        summary: `Send the text on your clipboard to ${ctx.connection.name}`,
        resolvedPaths: [],
      };
    },
    async run() {
      const text = await clipboardOf(desktop).readText();
      if (!text) return { text: '', message: 'the clipboard has no text' };
      const { cut, counted, scanned } = walk(text);
      if (cut === text.length) return { text };
      // Past the scan only a lower bound is known: at least one code point per two units.
      const total =
        scanned === text.length
          ? `${counted}`
          : `at least ${counted + Math.ceil((text.length - scanned) / 2)}`;
      return {
        // A copy: a slice would keep the whole clipboard string alive as long as the result lives.
        text: Buffer.from(text.slice(0, cut), 'utf16le').toString('utf16le'),
        message: `only the first ${MAX_CLIPBOARD_CHARS} of ${total} characters are included`,
      };
    },
  };
}
