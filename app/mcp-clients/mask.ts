/**
 * Lines of another app's config file, as a setup preview shows them (Settings, `mcp-setup`). The
 * diff of a setup change carries unchanged lines around it, and those belong to the user's other
 * MCP servers: their `env` tokens, `Authorization` headers, `--api-key=…` arguments. A shared
 * screen, a screenshot, a terminal's scrollback or a script's log keep what is shown; so values
 * whose name says credential are shown as `***`. The preview is only shown: what is written is
 * the file as planned, so wrongly hiding one only hides it on screen.
 *
 * A line alone does not say enough: pretty-printed, `"--api-key",` and its value are two lines,
 * and a folded run of unchanged lines can hide the flag while its value shows. So the values the
 * parsed file holds under credential names (`configSecrets`) are hidden wherever they show, and
 * each line is also masked by what it says itself (a line cut short, a file that did not parse).
 */
import { maskUrlPasswords } from '../audit/redact.js';
import { isSecretHeaderName } from '../services/mcp/config.js';
import { parseJsonc } from '../services/mcp/jsonc.js';

export const MASK = '***';

/** A JSON string; at the end of a line also one cut short there (diff lines are cut to a bound). */
const STRING = /"((?:[^"\\]|\\[\s\S])*)(?:"|\\?$)/g;
/** What follows a member's name (matched in place: a line of many strings is read once). */
const COLON = /\s*:/y;
/** `--token` or `-k`: a flag whose value is the next argument. */
const FLAG = /^-{1,2}([A-Za-z0-9_.-]+)$/;
/**
 * `--api-key=value`, `?token=value`, `API_KEY=value` inside a string. A name starts only where
 * no name character is before it, so a long run without `=` is tried once, not from each place.
 */
const ASSIGNMENT = /(?<![A-Za-z0-9_.-])([A-Za-z0-9_.-]+)=/g;
/** An assigned value runs to the next parameter, quote or space. */
const ASSIGNED = /[^\s"&\\]+/y;
/** `Authorization: Bearer value` given as an argument. */
const BEARER = /(\b(?:Bearer|Basic)\s+)([^\s"\\]+)/gi;
/** `X-API-Key: value`: a header given as one argument (`mcp-remote --header …`). */
const HEADER = /^(\s*([A-Za-z0-9_.-]+)\s*:\s*)(?=\S)(?!\/\/)[\s\S]+$/;

/**
 * The strings `text` (a config file, JSON with comments) holds under credential names, and those
 * that follow a credential-named flag in an array (`"--api-key", "value"`), however it is laid
 * out. Empty when it does not parse: the lines are then masked by what each says.
 */
export function configSecrets(...texts: (string | undefined)[]): Set<string> {
  const found = new Set<string>();
  for (const text of texts) {
    if (text === undefined) continue;
    let json: unknown;
    try {
      json = parseJsonc(text);
    } catch {
      continue;
    }
    // A stack, not recursion: the file is the user's (up to 1 MB) and may nest deeper than a stack.
    const stack: unknown[] = [json];
    while (stack.length > 0) {
      const value = stack.pop();
      if (Array.isArray(value)) {
        value.forEach((item, i) => {
          const flag = typeof item === 'string' ? FLAG.exec(item) : null;
          const next: unknown = value[i + 1];
          if (flag && isSecretHeaderName(flag[1]!) && typeof next === 'string' && next !== '')
            found.add(next);
          stack.push(item);
        });
      } else if (typeof value === 'object' && value !== null) {
        for (const [key, item] of Object.entries(value)) {
          if (typeof item === 'string' && item !== '' && isSecretHeaderName(key)) found.add(item);
          else stack.push(item);
        }
      }
    }
  }
  return found;
}

/** A string's value from its text inside the quotes; one cut short loses its broken last escape. */
function decoded(inner: string): string | undefined {
  for (const text of [inner, inner.replace(/\\(?:u[0-9A-Fa-f]{0,3})?$/, '')]) {
    try {
      return JSON.parse(`"${text}"`) as string;
    } catch {
      // Try the text without a cut escape, then give up.
    }
  }
  return undefined;
}

function isSecretValue(inner: string, closed: boolean, secrets: ReadonlySet<string>): boolean {
  if (secrets.size === 0) return false;
  const value = decoded(inner);
  if (value === undefined || value === '') return false;
  if (closed) return secrets.has(value);
  // The line was cut inside this string: its start is still part of a secret.
  for (const secret of secrets) if (secret.startsWith(value)) return true;
  return false;
}

/** Free text (inside a string, or a comment between them): assignments, bearer tokens, URLs. */
function maskText(text: string): string {
  return maskUrlPasswords(
    maskAssignments(text).replace(BEARER, (all, head: string, value: string) =>
      value === MASK ? all : `${head}${MASK}`,
    ),
  );
}

/**
 * Only a credential's value is passed over: `?x=1#token=…` has a second assignment inside what
 * would otherwise be the value of `x`.
 */
function maskAssignments(text: string): string {
  let out = '';
  let at = 0;
  for (const m of text.matchAll(ASSIGNMENT)) {
    const end = m.index + m[0].length;
    if (end <= at || !isSecretHeaderName(m[1]!)) continue;
    ASSIGNED.lastIndex = end;
    const value = ASSIGNED.exec(text);
    if (!value) continue;
    out += `${text.slice(at, end)}${MASK}`;
    at = end + value[0].length;
  }
  return out + text.slice(at);
}

/**
 * One line as shown. `secrets` are the file's credential values (`configSecrets`): any string
 * equal to one is hidden, wherever the line puts it.
 */
export function maskSecrets(
  line: string,
  secrets: ReadonlySet<string> = new Set(),
): { text: string; masked: boolean } {
  let out = '';
  let at = 0;
  // The string before this one and what stands between them: `"NAME": ` or `"--flag", `.
  let previous: string | undefined;
  for (const m of line.matchAll(STRING)) {
    const gap = line.slice(at, m.index);
    out += maskText(gap);
    const inner = m[1]!;
    const closed = m[0].length > inner.length + 1 && m[0].endsWith('"');
    const end = m.index + m[0].length;
    COLON.lastIndex = end;
    const isKey = closed && COLON.test(line);
    const name =
      previous === undefined
        ? undefined
        : /^\s*:\s*$/.test(gap)
          ? previous
          : /^\s*,\s*$/.test(gap)
            ? FLAG.exec(previous)?.[1]
            : undefined;
    const close = closed ? '"' : '';
    if (
      (!isKey && name !== undefined && isSecretHeaderName(name)) ||
      (!isKey && isSecretValue(inner, closed, secrets))
    ) {
      out += `"${MASK}${close}`;
    } else {
      const header = HEADER.exec(inner);
      const shown =
        header && isSecretHeaderName(header[2]!) ? `${header[1]}${MASK}` : maskText(inner);
      out += `"${shown}${m[0].slice(1 + inner.length)}`;
    }
    previous = inner;
    at = end;
  }
  out += maskText(line.slice(at));
  return { text: out, masked: out !== line };
}
