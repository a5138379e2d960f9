/**
 * Text from a server (or a profile) made safe to write to a terminal. A terminal obeys control
 * characters: ESC starts sequences that clear the screen, move the cursor over the permission
 * question or retitle the window; a carriage return or backspace overwrites what was printed; bidi
 * controls reorder what the user reads (Trojan Source). Each such character is shown escaped
 * (`\x1B`, `\u202E`), one character at a time, so a sequence split across streamed pieces is just
 * as harmless, and the user still sees that something odd was sent.
 */

/**
 * C0 controls, DEL and C1 controls; the bidi embeddings, overrides and isolates with the marks
 * (ALM, LRM, RLM); the line and paragraph separators. Zero-width joiners stay: emoji need them.
 */
const UNSAFE =
  // eslint-disable-next-line no-control-regex -- finding control characters is the point
  /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/** The same set less newline and tab, which a reply may use to be readable. */
const UNSAFE_IN_BLOCK =
  // eslint-disable-next-line no-control-regex -- finding control characters is the point
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

function escape(ch: string): string {
  const code = ch.charCodeAt(0);
  return code < 0x100
    ? `\\x${code.toString(16).toUpperCase().padStart(2, '0')}`
    : `\\u${code.toString(16).toUpperCase().padStart(4, '0')}`;
}

/** One line: every control character escaped, newlines included (a name or a path is one line). */
export function oneLine(text: string): string {
  return text.replace(UNSAFE, escape);
}

/**
 * Streamed reply text: newlines and tabs kept; carriage returns dropped (CRLF reads as a newline,
 * and a lone CR could only send the cursor back over the line); everything else escaped.
 */
export function replyText(text: string): string {
  return text.replace(/\r/g, '').replace(UNSAFE_IN_BLOCK, escape);
}

/**
 * JSON for people to read on a terminal: the same value (JSON may escape any character as
 * `\uXXXX`, and does so for C0 itself), with DEL, C1 and the bidi controls escaped as well.
 */
export function safeJson(value: unknown): string {
  const json = JSON.stringify(value) ?? 'undefined';
  return json.replace(
    UNSAFE,
    (ch) => `\\u${ch.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`,
  );
}
