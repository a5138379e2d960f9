import * as crypto from 'node:crypto';
import { createHash } from 'node:crypto';

/**
 * What the audit log keeps of a call's params. The log is read by people and exported to files,
 * so it must not become a second copy of the user's secrets or of a 5 MB file body; the sha256 of
 * the full params (see `paramsSha256`) still ties a record to exactly what the server sent.
 */
export const MAX_STRING = 200;
export const MAX_ITEMS = 50;
export const MAX_KEYS = 100;
export const MAX_DEPTH = 8;
/** Total values kept: 50 items at 8 levels would otherwise still be billions of values. */
export const MAX_NODES = 2000;
export const MASK = '***';

/** Key names that hold a secret wherever they appear in the name (`userPassword`, `x-api-key`). */
const SECRET_KEY =
  /token|secret|passw|passphrase|pwd|api[_-]?key|access[_-]?key|auth(?!or(?!i[sz]))|cookie|credential|private[_-]?key|session[_-]?(?:id|key)/i;
/** Short ones that are secrets only as a whole word: `pin`, not `mapping`; `pat`, not `path`. */
const SECRET_WORD = /(?:^|[_-])(?:pin|pat|otp|totp|cvv|cvc)$/i;

export function isSecretKey(key: string): boolean {
  return SECRET_KEY.test(key) || SECRET_WORD.test(key);
}

/** A password inside a URL (`postgres://me:S3cret@db/x`): the user name stays, the password goes. */
// The scheme starts where no scheme character is before it (not at every `\b`): otherwise each
// position inside "a.a.a.…" tries the whole run again, and 100 000 characters took 4 s.
// The password runs to the LAST `@` before the path, as URL parsers read it (`u:p@ss@host` has
// the password `p@ss`): stopping at the first `@` left the rest of the password in the record.
const URL_PASSWORD = /(?<![a-z0-9+.-])([a-z][a-z0-9+.-]*:\/\/[^\s/:@]*):[^\s/]*@/gi;

export function maskUrlPasswords(s: string): string {
  return s.includes('://') ? s.replace(URL_PASSWORD, `$1:${MASK}@`) : s;
}

/**
 * Secret values shorter than this are not looked for in free text: "1234" or "admin" would mask
 * ordinary words and numbers of the message, and say which param held them.
 */
export const MIN_SECRET_IN_TEXT = 6;
/** At most this many secret values are looked for in one text (each costs one pass over it). */
export const MAX_SECRETS_IN_TEXT = 32;

/**
 * The values `redactParams` masks in `params` (under secret-looking keys, and URL passwords),
 * longest first, so a service's error text that echoes its input can be masked too
 * (`maskSecretsIn`). Walks within redactParams' own bounds; never throws.
 */
export function secretValues(params: unknown): string[] {
  const found = new Set<string>();
  let nodes = 0;
  const add = (s: string): void => {
    if (s.length >= MIN_SECRET_IN_TEXT && found.size < MAX_SECRETS_IN_TEXT) found.add(s);
  };
  const visit = (value: unknown, depth: number, secret: boolean): void => {
    nodes += 1;
    if (nodes > MAX_NODES || found.size >= MAX_SECRETS_IN_TEXT) return;
    if (typeof value === 'string') {
      if (secret) add(value);
      else if (value.includes('://')) {
        for (const m of value.matchAll(URL_PASSWORD)) add(m[0].slice((m[1] ?? '').length + 1, -1));
      }
      return;
    }
    if (typeof value === 'number' || typeof value === 'bigint') {
      if (secret) add(String(value));
      return;
    }
    if (typeof value !== 'object' || value === null || depth >= MAX_DEPTH) return;
    if (ArrayBuffer.isView(value) || value instanceof ArrayBuffer) return;
    if (Array.isArray(value)) {
      const n = Math.min(value.length, MAX_ITEMS);
      for (let i = 0; i < n; i++) visit(readSafely(value, i), depth + 1, secret);
      return;
    }
    const keys = Object.keys(value);
    const n = Math.min(keys.length, MAX_KEYS);
    for (let i = 0; i < n; i++) {
      const key = keys[i] as string;
      visit(readSafely(value, key), depth + 1, secret || isSecretKey(key));
    }
  };
  try {
    visit(params, 0, false);
  } catch {
    // A proxy whose traps throw: what was found so far is still masked.
  }
  return [...found].sort((a, b) => b.length - a.length);
}

/**
 * `text` with URL passwords masked and every one of `secrets` (from `secretValues`) replaced by
 * the mask: a service's error message often echoes the params it was given.
 */
export function maskSecretsIn(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) if (out.includes(secret)) out = out.split(secret).join(MASK);
  return maskUrlPasswords(out);
}

/** Param keys: code units kept (what is cut carries the sha256 of the whole key). */
export const MAX_KEY = 128;

function cutKey(key: string): string {
  if (key.length <= MAX_KEY) return key;
  let keep = MAX_KEY;
  const last = key.charCodeAt(keep - 1);
  if (last >= 0xd800 && last <= 0xdbff) keep -= 1;
  return `${key.slice(0, keep)}…(+${key.length - keep} chars, sha256 ${sha256Hex(key)})`;
}

/** Cuts a string to MAX_STRING code units without splitting a surrogate pair. */
export function cutString(s: string, max = MAX_STRING): string {
  if (s.length <= max) return s;
  let keep = max;
  const last = s.charCodeAt(keep - 1);
  if (last >= 0xd800 && last <= 0xdbff) keep -= 1;
  return `${s.slice(0, keep)}…(+${s.length - keep} chars)`;
}

/**
 * A redacted deep copy of `params` made only of JSON values (so it survives the JSONL round trip
 * unchanged and hashes the same on verify). Never throws: params come from remote servers, and a
 * failure here must not stop the call from being recorded.
 */
export function redactParams(params: unknown): unknown {
  let nodes = 0;
  const ancestors = new Set<object>();

  const visit = (value: unknown, depth: number): unknown => {
    nodes += 1;
    if (nodes > MAX_NODES) return '…(truncated)';
    if (value === null || typeof value === 'boolean') return value;
    if (typeof value === 'string') return cutString(maskUrlPasswords(value));
    // -0 becomes 0 and non-finite becomes null, as they would in the JSONL line anyway.
    if (typeof value === 'number') return Number.isFinite(value) ? value + 0 : null;
    if (typeof value === 'bigint') return cutString(value.toString());
    // undefined, function, symbol: dropped from objects and null in arrays, as in JSON.stringify.
    if (typeof value !== 'object') return undefined;
    if (ancestors.has(value)) return '[Circular]';
    if (ArrayBuffer.isView(value) || value instanceof ArrayBuffer) {
      return `[binary ${value.byteLength} bytes]`;
    }
    const json = safely(() => toJsonValue(value));
    if (json !== value) return visit(json, depth);
    if (depth >= MAX_DEPTH) return Array.isArray(value) ? '[…array]' : '[…object]';

    ancestors.add(value);
    try {
      if (Array.isArray(value)) {
        const out: unknown[] = [];
        const n = Math.min(value.length, MAX_ITEMS);
        for (let i = 0; i < n; i++) {
          if (nodes >= MAX_NODES) {
            out.push(`…(+${value.length - i} items)`);
            return out;
          }
          out.push(
            visit(
              safely(() => value[i]),
              depth + 1,
            ) ?? null,
          );
        }
        if (value.length > n) out.push(`…(+${value.length - n} items)`);
        return out;
      }
      const out: Record<string, unknown> = {};
      const keys = Object.keys(value);
      const n = Math.min(keys.length, MAX_KEYS);
      for (let i = 0; i < n; i++) {
        if (nodes >= MAX_NODES) {
          define(out, '…', `(+${keys.length - i} keys)`);
          return out;
        }
        const key = keys[i] as string;
        const child = safely(() => (value as Record<string, unknown>)[key]);
        const v = isSecretKey(key) ? MASK : visit(child, depth + 1);
        // defineProperty, not `out[key] =`: a `__proto__` key from JSON.parse must stay data.
        // A key is a name like any other: cut, with the sha256 of the whole (two long keys that
        // share their first MAX_KEY chars stay two keys).
        if (v !== undefined) define(out, cutKey(key), v);
      }
      if (keys.length > n) define(out, '…', `(+${keys.length - n} keys)`);
      return out;
    } finally {
      ancestors.delete(value);
    }
  };

  try {
    return visit(params, 0) ?? null;
  } catch {
    // A proxy whose traps throw: record that params existed rather than lose the record.
    return '[unreadable params]';
  }
}

/** A throwing getter or toJSON yields a marker instead of an exception. */
function safely(read: () => unknown): unknown {
  try {
    return read();
  } catch {
    return '[unreadable]';
  }
}

function readSafely(obj: object, key: string | number): unknown {
  try {
    return (obj as Record<string | number, unknown>)[key];
  } catch {
    return '[unreadable]';
  }
}

/**
 * JSON with object keys sorted (by UTF-16 code units, as RFC 8785) at every level, so equal
 * values always give the same text and the same hash whatever order their keys were built in.
 * Follows JSON.stringify's rules for non-JSON values; cycles become "[Circular]" instead of throwing.
 *
 * Iterative, with its own stack: params nested 100 000 levels deep (a hostile server's) are hashed
 * like any others instead of overflowing the call stack. verify() runs it once per record on disk,
 * so it builds one string and no closure per value.
 */
export function canonicalJson(value: unknown): string {
  const ancestors = new Set<object>();
  const stack: Frame[] = [];
  let out = '';

  /** Opens `obj` (a frame on the stack) or writes its cycle marker. */
  const open = (obj: object): void => {
    if (ancestors.has(obj)) {
      out += '"[Circular]"';
      return;
    }
    ancestors.add(obj);
    if (Array.isArray(obj)) {
      stack.push({ obj, keys: undefined, i: 0, first: true });
      out += '[';
    } else {
      stack.push({ obj, keys: Object.keys(obj).sort(), i: 0, first: true });
      out += '{';
    }
  };

  const root = jsonView(value);
  if (isObject(root)) open(root);
  else out += scalarJson(root, false) ?? 'null';

  while (stack.length > 0) {
    const frame = stack[stack.length - 1] as Frame;
    const { obj, keys } = frame;
    if (keys === undefined) {
      const arr = obj as unknown[];
      if (frame.i >= arr.length) {
        out += ']';
        ancestors.delete(obj);
        stack.pop();
        continue;
      }
      if (frame.i > 0) out += ',';
      const child = jsonView(readSafely(obj, frame.i));
      frame.i += 1;
      if (isObject(child)) open(child);
      else out += scalarJson(child, true) ?? 'null';
      continue;
    }
    if (frame.i >= keys.length) {
      out += '}';
      ancestors.delete(obj);
      stack.pop();
      continue;
    }
    const key = keys[frame.i] as string;
    frame.i += 1;
    const child = jsonView(readSafely(obj, key));
    const text = isObject(child) ? undefined : scalarJson(child, false);
    if (!isObject(child) && text === undefined) continue; // undefined, functions: left out
    if (!frame.first) out += ',';
    frame.first = false;
    out += `${JSON.stringify(key)}:`;
    if (isObject(child)) open(child);
    else out += text;
  }
  return out;
}

interface Frame {
  obj: object;
  /** Sorted keys of an object; undefined for an array. */
  keys: string[] | undefined;
  i: number;
  first: boolean;
}

function isObject(v: unknown): v is object {
  return typeof v === 'object' && v !== null;
}

/** What JSON.stringify would see: toJSON applied (a few times at most: each may return another). */
function jsonView(v: unknown): unknown {
  for (let n = 0; n < 8 && isObject(v); n++) {
    const toJSON = safely(() => (v as { toJSON?: unknown }).toJSON);
    if (typeof toJSON !== 'function') return v;
    const obj = v;
    v = safely(() => toJsonValue(obj));
  }
  return v;
}

/** A non-object value's JSON text; undefined where JSON.stringify leaves the value out. */
function scalarJson(v: unknown, inArray: boolean): string | undefined {
  if (v === null) return 'null';
  switch (typeof v) {
    case 'string':
      return JSON.stringify(v);
    case 'number':
      return Number.isFinite(v) ? String(v + 0) : 'null';
    case 'boolean':
      return v ? 'true' : 'false';
    case 'bigint':
      return JSON.stringify(v.toString());
    default:
      return inArray ? 'null' : undefined;
  }
}

/** One-shot `hash` where Node has it (20.12+, Electron's 22): a third of createHash's cost. */
const oneShot = (crypto as { hash?: (algorithm: string, data: string, encoding: 'hex') => string })
  .hash;

export function sha256Hex(text: string): string {
  return oneShot
    ? oneShot('sha256', text, 'hex')
    : createHash('sha256').update(text, 'utf8').digest('hex');
}

/** Honours toJSON (Date and friends) the way JSON.stringify does. */
function toJsonValue(value: object): unknown {
  const toJSON = (value as { toJSON?: unknown }).toJSON;
  return typeof toJSON === 'function' ? (toJSON as () => unknown).call(value) : value;
}

function define(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, {
    value,
    enumerable: true,
    writable: true,
    configurable: true,
  });
}
