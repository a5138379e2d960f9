/**
 * Characters that let text from someone else (an MCP client's name, an imported tool's title or
 * description) read as something other than what it is: C0/C1 controls (line breaks included),
 * bidi embeddings, overrides and isolates (U+202E turns "exe.txt" into "txt.exe"), zero-width
 * characters and the invisible tag characters (U+E0000–U+E007F) that can hide words from a person
 * while a model still reads them.
 */
const UNSAFE =
  // eslint-disable-next-line no-control-regex
  /[\u0000-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff\u{e0000}-\u{e007f}]/u;

/** Every unsafe character (global: for `replace`, never `test`, whose `lastIndex` it would keep). */
export const UNSAFE_CHARS = new RegExp(UNSAFE.source, 'gu');

/** Whether `text` has any unsafe character. */
export function hasUnsafeChars(text: string): boolean {
  return UNSAFE.test(text);
}

/** Text for one line that a person reads: unsafe characters gone, whitespace runs one space. */
export function oneLine(text: string): string {
  // Line breaks become spaces first, so "Read\nfile" does not turn into "Readfile".
  return text.replace(/\s+/g, ' ').replace(UNSAFE_CHARS, '').replace(/\s+/g, ' ').trim();
}

/** Longer text (a description the model reads): unsafe characters gone, but its lines and tabs kept. */
export function withoutUnsafeChars(text: string): string {
  return text
    .replace(/\r\n?/g, '\n')
    .replace(UNSAFE_CHARS, (c) => (c === '\n' || c === '\t' ? c : ''));
}

/** `text` cut to at most `max` characters, the last one an ellipsis when it was longer. */
export function clipped(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** One line for a person (`oneLine`) of at most `max` characters: a name, a quote in a prompt. */
export function shortLine(text: string, max: number): string {
  return clipped(oneLine(text), max);
}

/**
 * Unsafe characters written out as escapes (`\u202E`) instead of dropped: for text a person must
 * see exactly as it will be used (a command line), where a dropped character would hide a
 * difference and a kept one could reorder what they read.
 */
export function escapedUnsafe(text: string): string {
  return text.replace(UNSAFE_CHARS, (c) => {
    const code = c.codePointAt(0)!.toString(16).toUpperCase();
    return code.length > 4 ? `\\u{${code}}` : `\\u${code.padStart(4, '0')}`;
  });
}
