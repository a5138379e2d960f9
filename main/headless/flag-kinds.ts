/**
 * The terminal flags that add servers for one run, generated from the connection kinds' specs
 * (app/contract/profiles): each kind with `flags` gets `--<name> VALUE`, its secret flag (and a
 * `-file` twin that reads it from a file) and one flag per field that names one. Parsing is pure:
 * it returns the values or an Error whose message names the flag, never a secret.
 */
import type { TSchema } from '@sinclair/typebox';
import {
  type FieldSpec,
  PROFILE_PATTERNS,
  type ProfileKindSpec,
  fieldAccepts,
  urlHasToken,
} from '../../app/contract/profiles/index.js';

/** One server given on the command line. */
export interface KindFlags {
  kind: string;
  /** The kind's fields from the flag value (`url`, or `host` + `port`) and the field flags. */
  fields: Record<string, unknown>;
  /** The secret given inline (`--token`) or the file to read it from (`--token-file`). */
  secret?: string;
  secretFile?: string;
}

type Option = { type: 'string' } | { type: 'boolean' };

/** Every flag the kinds add, as node:util parseArgs options. */
export function kindOptions(kinds: readonly ProfileKindSpec[]): Record<string, Option> {
  const out: Record<string, Option> = {};
  for (const spec of kinds) {
    if (!spec.flags) continue;
    out[spec.flags.name] = { type: 'string' };
    if (spec.secret?.flag) {
      out[spec.secret.flag] = { type: 'string' };
      out[`${spec.secret.flag}-file`] = { type: 'string' };
    }
    for (const f of flagFields(spec))
      out[f.flag] = f.input === 'check' ? { type: 'boolean' } : { type: 'string' };
  }
  return out;
}

function flagFields(spec: ProfileKindSpec): (FieldSpec & { flag: string })[] {
  return spec.form.filter((f): f is FieldSpec & { flag: string } => f.flag !== undefined);
}

/** The servers the flags name, checked; an Error for the first problem. */
export function parseKindFlags(
  kinds: readonly ProfileKindSpec[],
  values: Record<string, string | boolean | string[] | undefined>,
): KindFlags[] | Error {
  const out: KindFlags[] = [];
  for (const spec of kinds) {
    const flags = spec.flags;
    if (!flags) continue;
    const own = [
      ...(spec.secret?.flag ? [spec.secret.flag, `${spec.secret.flag}-file`] : []),
      ...flagFields(spec).map((f) => f.flag),
    ];
    const raw = values[flags.name];
    if (typeof raw !== 'string') {
      // Without the server there is nothing for these to apply to: say so rather than ignore them.
      const orphan = own.find((name) => values[name] !== undefined);
      if (orphan)
        return new Error(`--${orphan} applies only with --${flags.name} ${metavarOf(flags.value)}`);
      continue;
    }
    const parsed =
      flags.value === 'host-port' ? parseHostPort(flags.name, raw) : parseWsUrl(flags.name, raw);
    if (parsed instanceof Error) return parsed;
    const fields: Record<string, unknown> = { ...parsed };
    if (spec.secret?.mode === 'url' && !urlHasToken(raw))
      return new Error(`--${flags.name} needs the whole address with its token (…?token=…)`);
    for (const f of flagFields(spec)) {
      const given = values[f.flag];
      if (given === undefined) continue;
      const value = f.input === 'check' ? given : fieldValue(spec.fields[f.key]!, String(given));
      if (!fieldAccepts(spec.fields[f.key]!, value))
        return new Error(flagProblem(f, spec.fields[f.key]!, String(given)));
      fields[f.key] = value;
    }
    const kindFlags: KindFlags = { kind: spec.kind, fields };
    if (spec.secret?.flag) {
      const name = spec.secret.flag;
      const inline = values[name];
      const file = values[`${name}-file`];
      if (inline !== undefined && file !== undefined)
        return new Error(`give --${name} or --${name}-file, not both`);
      if (typeof inline === 'string') {
        if (!inline.trim()) return new Error(`--${name} is empty`);
        kindFlags.secret = inline.trim();
      }
      if (typeof file === 'string') kindFlags.secretFile = file;
      if (spec.secret.mode === 'required' && inline === undefined && file === undefined)
        return new Error(`--${flags.name} needs --${name} or --${name}-file`);
    }
    out.push(kindFlags);
  }
  return out;
}

/** `HOST:PORT` or `[v6]:PORT`. */
export function parseHostPort(flag: string, text: string): { host: string; port: number } | Error {
  const m = /^\[([^\]]+)\]:(\d+)$/.exec(text) ?? /^([^:\s]+):(\d+)$/.exec(text);
  if (!m) return new Error(`--${flag} must be HOST:PORT (got '${text}')`);
  const port = Number(m[2]);
  if (!Number.isInteger(port) || port < 1 || port > 65535)
    return new Error(`--${flag} port must be 1-65535 (got '${m[2]}')`);
  return { host: m[1]!, port };
}

/** A ws:// or wss:// address; the message never repeats a token the address may carry. */
function parseWsUrl(flag: string, text: string): { url: string } | Error {
  let u: URL;
  try {
    u = new URL(text);
  } catch {
    return new Error(`--${flag} must be a ws:// or wss:// address`);
  }
  if (u.protocol !== 'ws:' && u.protocol !== 'wss:')
    return new Error(`--${flag} must be a ws:// or wss:// address (got ${u.protocol}//…)`);
  return { url: text };
}

/** The literal values a schema allows (a union of constants), if that is what it is. */
function literals(schema: TSchema): (string | number)[] | undefined {
  const s = schema as { anyOf?: { const?: unknown }[] };
  if (!Array.isArray(s.anyOf)) return undefined;
  const values = s.anyOf.map((sub) => sub.const);
  return values.every((v) => typeof v === 'string' || typeof v === 'number')
    ? (values as (string | number)[])
    : undefined;
}

/** A flag's text as the field keeps it: a number where the schema wants one. */
function fieldValue(schema: TSchema, text: string): unknown {
  const s = schema as { type?: unknown };
  const numeric =
    s.type === 'integer' ||
    s.type === 'number' ||
    (literals(schema)?.some((v) => typeof v === 'number') ?? false);
  return numeric && /^-?\d+(\.\d+)?$/.test(text) ? Number(text) : text;
}

function flagProblem(f: FieldSpec & { flag: string }, schema: TSchema, given: string): string {
  const allowed = literals(schema);
  if (allowed) return `--${f.flag} must be one of: ${allowed.join(', ')} (got '${given}')`;
  return `--${f.flag}: ${f.invalid?.en ?? 'this value cannot be used'} (got '${given}')`;
}

function metavarOf(value: 'url' | 'host-port'): string {
  return value === 'url' ? 'WS_URL' : 'HOST:PORT';
}

/** What a field's flag takes, for the usage text. */
function fieldMetavar(f: FieldSpec, schema: TSchema): string {
  const allowed = literals(schema);
  if (allowed) return allowed.join('|');
  const pattern = (schema as { pattern?: string }).pattern;
  if (pattern === PROFILE_PATTERNS.mac) return 'MAC';
  if (pattern === PROFILE_PATTERNS.uuid) return 'UUID';
  return f.input === 'number' ? 'N' : 'VALUE';
}

/** The usage lines of the kinds' flags: the synopsis part and one line per flag. */
export function kindUsage(kinds: readonly ProfileKindSpec[]): {
  synopsis: string[];
  lines: string[];
} {
  const synopsis: string[] = [];
  const lines: string[] = [];
  const line = (flag: string, text: string) =>
    lines.push(
      flag.length < 26 ? `  ${flag.padEnd(26)}${text}` : `  ${flag}\n  ${''.padEnd(26)}${text}`,
    );
  for (const spec of kinds) {
    const flags = spec.flags;
    if (!flags) continue;
    const head = `--${flags.name} ${metavarOf(flags.value)}`;
    const parts = [head];
    const secretFlag = spec.secret?.flag;
    if (secretFlag) {
      const secret = `--${secretFlag} TOKEN | --${secretFlag}-file FILE`;
      parts.push(spec.secret?.mode === 'required' ? `(${secret})` : `[${secret}]`);
    }
    for (const f of flagFields(spec))
      parts.push(`[--${f.flag} ${fieldMetavar(f, spec.fields[f.key]!)}]`);
    synopsis.push(`[${parts.join(' ')}]`);
    line(head, flags.help);
    if (secretFlag) {
      line(
        `--${secretFlag} TOKEN`,
        `its token${spec.secret?.mode === 'required' ? '' : ', if it needs one'}; prefer`,
      );
      line(`--${secretFlag}-file FILE`, 'the file form, which keeps it out of your shell history');
    }
    for (const f of flagFields(spec))
      line(
        `--${f.flag} ${fieldMetavar(f, spec.fields[f.key]!)}`,
        `${f.label.en}${f.generated ? ' (default: generated once and kept in the data folder)' : ''}`,
      );
  }
  return { synopsis, lines };
}
