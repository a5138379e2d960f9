import { clipboardOf } from '../platform/clipboard.js';
import type { Desktop } from '../platform/desktop.js';
import type { Service } from '../service.js';
import { UNSAFE_CHARS } from '../../unsafe-chars.js';
import { quoted } from './reminder_common.js';

export type WriteClipboardParams = { text: string };

export const MAX_WRITE_CHARS = 100_000;

export function writeClipboardService(desktop: Desktop): Service<WriteClipboardParams> {
  return {
    name: 'write_clipboard',
    title: 'Copy to the clipboard',
    summary: 'Puts text on your clipboard, replacing what you copied before.',
    group: 'clipboard',
    description: "Put text on the user's clipboard so they can paste it (replaces what is there).",
    parameters: {
      type: 'object',
      properties: {
        text: {
          type: 'string',
          minLength: 1,
          maxLength: MAX_WRITE_CHARS,
          description: 'The text to copy',
        },
      },
      required: ['text'],
      additionalProperties: false,
    },
    risk: 'write',
    timeoutMs: 8000,
    preview(params) {
      const n = Array.from(params.text).length;
      return {
        summary: `Replace your clipboard with ${quoted(params.text, 60)} (${n} character${n === 1 ? '' : 's'}${hidden(params.text)})`,
        resolvedPaths: [],
      };
    },
    async run(params) {
      await clipboardOf(desktop).writeText(params.text);
      return { message: `Copied ${Array.from(params.text).length} characters to the clipboard` };
    },
  };
}

/**
 * What the one quoted line cannot show: how many lines the text has (pasted into a terminal, each
 * one runs) and its invisible or direction-changing characters (which can push a second line out
 * of the quote's 60 characters, or make it read backwards).
 */
function hidden(text: string): string {
  const lines = text.split(/\r\n|\r|\n/).length;
  const invisible = [...text.matchAll(UNSAFE_CHARS)].filter((m) => !/[\r\n\t]/.test(m[0])).length;
  return (
    (lines > 1 ? `, ${lines} lines` : '') +
    (invisible > 0
      ? `; careful: ${invisible} invisible or direction-changing character${invisible === 1 ? '' : 's'}`
      : '')
  );
}
