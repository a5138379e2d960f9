import { clipboardOf } from '../platform/clipboard.js';
import type { Desktop } from '../platform/desktop.js';
import type { Service } from '../service.js';
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
        summary: `Replace your clipboard with ${quoted(params.text, 60)} (${n} character${n === 1 ? '' : 's'})`,
        resolvedPaths: [],
      };
    },
    async run(params) {
      await clipboardOf(desktop).writeText(params.text);
      return { message: `Copied ${Array.from(params.text).length} characters to the clipboard` };
    },
  };
}
