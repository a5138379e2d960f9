/**
 * Set one member two levels deep (`servers["advent-agent"]`) in a JSON or JSONC file's text by
 * splicing only the bytes that change, so everything else — other entries, unknown keys, key
 * order, comments, indentation, line endings — stays exactly as the user's app wrote it. The text
 * must already parse (parseJsonc): this only finds where things are, with one linear token pass
 * and no recursion.
 */

type TokenKind = '{' | '}' | '[' | ']' | ':' | ',' | 'string' | 'literal';

interface Token {
  kind: TokenKind;
  start: number;
  /** One past the last character. */
  end: number;
}

const PUNCT = new Set(['{', '}', '[', ']', ':', ',']);

/** Tokens of JSON text with comments and whitespace left out. */
function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (c === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      tokens.push({ kind: 'string', start: i, end: j + 1 });
      i = j + 1;
    } else if (c === '/' && text[i + 1] === '/') {
      while (i < text.length && text[i] !== '\n') i += 1;
    } else if (c === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2);
      i = end < 0 ? text.length : end + 2;
    } else if (PUNCT.has(c)) {
      tokens.push({ kind: c as TokenKind, start: i, end: i + 1 });
      i += 1;
    } else if (/\s/.test(c) || c === '\uFEFF') {
      i += 1;
    } else {
      let j = i;
      while (j < text.length && !PUNCT.has(text[j]!) && !/[\s"/]/.test(text[j]!)) j += 1;
      tokens.push({ kind: 'literal', start: i, end: j });
      i = j;
    }
  }
  return tokens;
}

interface Member {
  key: string;
  keyToken: number;
  valueFirst: number;
  valueLast: number;
  /** The comma after the value, if any. */
  comma?: number;
}

interface ObjectSpan {
  open: number;
  close: number;
  members: Member[];
}

/** The index of the token that ends the value starting at `i`. */
function valueEnd(tokens: Token[], i: number): number {
  const first = tokens[i]!.kind;
  if (first !== '{' && first !== '[') return i;
  let depth = 0;
  for (let j = i; j < tokens.length; j++) {
    const k = tokens[j]!.kind;
    if (k === '{' || k === '[') depth += 1;
    else if (k === '}' || k === ']') {
      depth -= 1;
      if (depth === 0) return j;
    }
  }
  throw new Error('unbalanced brackets');
}

function objectAt(text: string, tokens: Token[], open: number): ObjectSpan {
  const members: Member[] = [];
  let i = open + 1;
  while (tokens[i]?.kind !== '}') {
    const keyTok = tokens[i];
    if (keyTok?.kind !== 'string' || tokens[i + 1]?.kind !== ':')
      throw new Error('expected a member');
    const key = JSON.parse(text.slice(keyTok.start, keyTok.end)) as string;
    const valueFirst = i + 2;
    const valueLast = valueEnd(tokens, valueFirst);
    const member: Member = { key, keyToken: i, valueFirst, valueLast };
    members.push(member);
    i = valueLast + 1;
    if (tokens[i]?.kind === ',') {
      member.comma = i;
      i += 1;
    }
  }
  return { open, close: i, members };
}

/** Whitespace at the start of the line holding `pos`, when only whitespace precedes it there. */
function lineIndent(text: string, pos: number): string | undefined {
  const lineStart = text.lastIndexOf('\n', pos - 1) + 1;
  const before = text.slice(lineStart, pos);
  return /^[ \t]*$/.test(before) ? before : undefined;
}

export interface Style {
  unit: string;
  newline: string;
}

/** The file's indentation unit (its first indented line) and line ending; two spaces and LF else. */
export function styleOf(text: string): Style {
  const indent = /\n([ \t]+)\S/.exec(text)?.[1];
  return { unit: indent || '  ', newline: text.includes('\r\n') ? '\r\n' : '\n' };
}

function render(value: unknown, indent: string, style: Style): string {
  return JSON.stringify(value, null, style.unit).replace(/\n/g, style.newline + indent);
}

interface Splice {
  at: number;
  remove: number;
  insert: string;
}

/**
 * Add `key: value` at the end of the object (keeping its layout: one member per line, or all on
 * one line), or replace the value of its last member named `key` (the one JSON.parse keeps).
 */
function setInObject(
  text: string,
  tokens: Token[],
  obj: ObjectSpan,
  key: string,
  value: unknown,
  style: Style,
): Splice[] {
  const existing = obj.members.findLast((m) => m.key === key);
  const openTok = tokens[obj.open]!;
  const closeTok = tokens[obj.close]!;
  const closeIndent = lineIndent(text, closeTok.start);
  const objIndent = lineIndent(text, tokens[obj.open - 2]?.start ?? openTok.start) ?? '';
  const first = obj.members[0];
  const memberIndent =
    (first && lineIndent(text, tokens[first.keyToken]!.start)) ??
    (closeIndent ?? objIndent) + style.unit;

  if (existing) {
    const from = tokens[existing.valueFirst]!.start;
    const to = tokens[existing.valueLast]!.end;
    const indent = lineIndent(text, tokens[existing.keyToken]!.start) ?? memberIndent;
    return [{ at: from, remove: to - from, insert: render(value, indent, style) }];
  }

  const member = (indent: string) => `${JSON.stringify(key)}: ${render(value, indent, style)}`;
  const inner = text.slice(openTok.end, closeTok.start);
  if (inner.trim() === '') {
    // `{}`: laid out afresh, one member per line.
    const body = `{${style.newline}${objIndent}${style.unit}${member(objIndent + style.unit)}${style.newline}${objIndent}}`;
    return [{ at: openTok.start, remove: closeTok.end - openTok.start, insert: body }];
  }
  const last = obj.members.at(-1);
  const splices: Splice[] = [];
  // A comma after the last value, right after it, so a comment that follows it stays its own.
  if (last && last.comma === undefined)
    splices.push({ at: tokens[last.valueLast]!.end, remove: 0, insert: ',' });
  const trailing = last?.comma !== undefined ? ',' : '';
  if (closeIndent !== undefined && inner.includes('\n')) {
    const lineStart = text.lastIndexOf('\n', closeTok.start - 1) + 1;
    splices.push({
      at: lineStart,
      remove: 0,
      insert: `${memberIndent}${member(memberIndent)}${trailing}${style.newline}`,
    });
  } else {
    // All on one line: ours joins it on that line.
    const compact = `${JSON.stringify(key)}: ${JSON.stringify(value)}`;
    const at = last ? tokens[last.comma ?? last.valueLast]!.end : openTok.end;
    splices.push({ at, remove: 0, insert: `${last ? ' ' : ''}${compact}${trailing}` });
  }
  return splices;
}

export type EditResult = { ok: true; text: string } | { ok: false; reason: string };

/**
 * `text` with `root[outer][inner] = value`: the outer object is added when missing. Refused (never
 * guessed) when the top level or `outer` is not an object.
 */
export function setNestedMember(
  text: string,
  outer: string,
  inner: string,
  value: unknown,
): EditResult {
  let tokens: Token[];
  let root: ObjectSpan;
  try {
    tokens = tokenize(text);
    if (tokens[0]?.kind !== '{') return { ok: false, reason: 'the file is not a JSON object' };
    root = objectAt(text, tokens, 0);
  } catch (err) {
    return { ok: false, reason: (err as Error).message };
  }
  const style = styleOf(text);
  const servers = root.members.findLast((m) => m.key === outer);
  let splices: Splice[];
  if (!servers) {
    splices = setInObject(text, tokens, root, outer, { [inner]: value }, style);
  } else {
    if (tokens[servers.valueFirst]!.kind !== '{')
      return { ok: false, reason: `"${outer}" is not an object` };
    splices = setInObject(
      text,
      tokens,
      objectAt(text, tokens, servers.valueFirst),
      inner,
      value,
      style,
    );
  }
  // In text order; splices at the same place go in the order they were made (comma, then member).
  const ordered = [...splices].sort((a, b) => a.at - b.at);
  const parts: string[] = [];
  let from = 0;
  for (const s of ordered) {
    parts.push(text.slice(from, s.at), s.insert);
    from = s.at + s.remove;
  }
  parts.push(text.slice(from));
  return { ok: true, text: parts.join('') };
}
