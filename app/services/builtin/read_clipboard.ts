import { clipboardOf } from '../platform/clipboard.js';
import type { Desktop } from '../platform/desktop.js';
import type { Service } from '../service.js';

/** What a result carries at most; the rest is cut with a note (results are capped anyway). */
export const MAX_CLIPBOARD_CHARS = 8000;

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
      const chars = Array.from(text);
      if (chars.length <= MAX_CLIPBOARD_CHARS) return { text };
      return {
        text: chars.slice(0, MAX_CLIPBOARD_CHARS).join(''),
        message: `only the first ${MAX_CLIPBOARD_CHARS} of ${chars.length} characters are included`,
      };
    },
  };
}
