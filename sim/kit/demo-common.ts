/**
 * What the canned demos of the Advent and robot simulators share, so both understand "write a note"
 * the same way and file notes under the same names. (Their time questions differ on purpose: each
 * demo's own pattern.)
 */

/** A turn asking for a note. */
export const NOTE = /write a note|note:|记/i;
const NOTE_BODY = /(?:write a note|note:)\s*:?\s*([\s\S]*)$/i;

/** What to write: the text after "write a note:", or the whole turn when nothing follows it. */
export function noteBody(text: string): string {
  return NOTE_BODY.exec(text)?.[1]?.trim() || text;
}

/** `notes/note-yyyymmdd-hhmmss.txt` in local time, as a person would read it in a file list. */
export function noteFilename(at: number): string {
  const d = new Date(at);
  const p = (n: number) => String(n).padStart(2, '0');
  return (
    `notes/note-${d.getFullYear()}${p(d.getMonth() + 1)}${p(d.getDate())}-` +
    `${p(d.getHours())}${p(d.getMinutes())}${p(d.getSeconds())}.txt`
  );
}

/** A tool's data in a sentence: a string as is, anything else as JSON. */
export function show(data: unknown): string {
  return typeof data === 'string' ? data : JSON.stringify(data);
}
