/**
 * The `mcpServers` format users already have, read liberally: Claude Desktop's and Cursor's
 * `{"mcpServers": {name: entry}}`, VS Code's `{"servers": …}` (and `"mcp": {"servers": …}` in its
 * settings), a bare `{name: entry}` map, one entry alone, or `"name": {…}` copied out of a README.
 * JSON with comments and trailing commas is accepted. Each entry is checked on its own: a bad one
 * is a problem in the list, the others still import.
 */
import { maskUrlPasswords } from '../../audit/redact.js';
import type { McpTransport } from '../../contract/mcp.js';
import { hasUnsafeChars, oneLine } from '../../unsafe-chars.js';
import { jsonErrorText, parseJsonc } from './jsonc.js';
import { MCP_LIMITS } from './limits.js';

export interface ParsedServer {
  name: string;
  transport: McpTransport;
  /** The entry said `type`: no fallback from Streamable HTTP to SSE. */
  fixedTransport: boolean;
  command?: string;
  args: string[];
  cwd?: string;
  url?: string;
  env: Record<string, string>;
  headers: Record<string, string>;
  secretEnv: string[];
  secretHeaders: string[];
  disabled: boolean;
  /**
   * Never read from the text: trust lets a server's tools that claim to only read run unasked, so
   * only the user gives it, in the app, to a server whose tools they have seen. A `"trusted": true`
   * in the text is a note instead.
   */
  trusted: false;
  timeoutSec?: number;
  notes: string[];
}

export interface ParsedServers {
  servers: ParsedServer[];
  problems: string[];
}

// Names that usually hold a credential. Wrongly marking one secret only hides its value in the UI.
const SECRET_NAME =
  /(token|secret|passw(or)?d|pwd|api[_-]?key|apikey|access[_-]?key|private[_-]?key|auth|credential|cookie|session|bearer|signature|\bkey\b|_key$|^key_)/i;

/** Whether an environment variable's value should go to the SecretStore. */
export function isSecretEnvName(name: string): boolean {
  return SECRET_NAME.test(name);
}

/** Whether a header's value should go to the SecretStore (Authorization, Cookie, X-API-Key…). */
export function isSecretHeaderName(name: string): boolean {
  return /^(authorization|proxy-authorization|cookie)$/i.test(name) || SECRET_NAME.test(name);
}

/** A query parameter that usually carries a credential (`?api_key=…`, `&token=…`). */
const SECRET_QUERY =
  /[?&#;][\w.-]*(token|secret|passw(or)?d|pwd|api[_-]?key|apikey|access[_-]?key|auth|signature|sig)[\w.-]*=[^&#\s]/i;

/** Whether a value carries a credential in itself: a URL password or a secret query parameter. */
export function carriesCredential(value: string): boolean {
  return maskUrlPasswords(value) !== value || SECRET_QUERY.test(value);
}

/**
 * Whether a command line carries a credential: in a URL, after a credential-named flag
 * (`--api-key KEY`, `--token=KEY`). Such arguments stay in settings.json as written, so the
 * import says so and suggests an environment variable, which can be kept as a secret.
 */
function argsCarryCredential(args: readonly string[]): boolean {
  return args.some((a, i) => {
    if (carriesCredential(a)) return true;
    const flag = /^--?([\w.-]+)(=.+)?$/.exec(a);
    if (!flag || !SECRET_NAME.test(flag[1] as string)) return false;
    return flag[2] !== undefined || (i + 1 < args.length && !args[i + 1]!.startsWith('-'));
  });
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function looksLikeEntry(v: unknown): v is Record<string, unknown> {
  return (
    isRecord(v) &&
    (typeof v.command === 'string' || typeof v.url === 'string' || typeof v.serverUrl === 'string')
  );
}

/** Parse pasted text or a file's contents. Throws only for text that is not JSON at all. */
export function parseServersJson(text: string): ParsedServers {
  if (text.length > MCP_LIMITS.importFileBytes)
    throw new Error(
      `the text is ${text.length} characters; at most ${MCP_LIMITS.importFileBytes} are read`,
    );
  let json: unknown;
  try {
    json = parseJsonc(text);
  } catch (first) {
    // `"name": { … }` copied out of a README is an object without its braces.
    try {
      json = parseJsonc(`{${text.trim().replace(/,\s*$/, '')}}`);
    } catch {
      throw new Error(`this is not JSON (${jsonErrorText(first, text.replace(/^\uFEFF/, ''))})`);
    }
  }
  return parseServersValue(json);
}

export function parseServersValue(json: unknown): ParsedServers {
  if (!isRecord(json))
    return { servers: [], problems: ['expected a JSON object with "mcpServers" or "servers"'] };
  let map: unknown;
  if ('mcpServers' in json) map = json.mcpServers;
  else if ('servers' in json) map = json.servers;
  else if (isRecord(json.mcp) && 'servers' in json.mcp) map = json.mcp.servers;
  else if (looksLikeEntry(json))
    map = { [typeof json.name === 'string' ? json.name : guessName(json)]: json };
  else if (Object.values(json).some(looksLikeEntry)) map = json;
  else
    return {
      servers: [],
      problems: ['no servers found: expected "mcpServers" (Claude, Cursor) or "servers" (VS Code)'],
    };
  if (!isRecord(map)) return { servers: [], problems: ['the server list is not a JSON object'] };

  const servers: ParsedServer[] = [];
  const problems: string[] = [];
  const entries = Object.entries(map);
  if (entries.length > MCP_LIMITS.importServers)
    problems.push(
      `${entries.length} servers listed; only the first ${MCP_LIMITS.importServers} are read`,
    );
  for (const [name, entry] of entries.slice(0, MCP_LIMITS.importServers)) {
    const parsed = parseEntry(name, entry);
    // The name as shown in the list of problems: one line, nothing that reorders the reason after it.
    if (typeof parsed === 'string') problems.push(`"${oneLine(name).slice(0, 64)}": ${parsed}`);
    else servers.push(parsed);
  }
  return { servers, problems };
}

/** A name for a lone entry: the package it runs (`@scope/server-x` → `server-x`) or its host. */
function guessName(entry: Record<string, unknown>): string {
  if (typeof entry.url === 'string') {
    try {
      return new URL(entry.url).hostname.split('.')[0] || 'server';
    } catch {
      return 'server';
    }
  }
  const args = Array.isArray(entry.args) ? entry.args.filter((a) => typeof a === 'string') : [];
  const pkg = (args as string[]).find((a) => !a.startsWith('-'));
  const from = pkg ?? String(entry.command);
  return (from.split(/[\\/]/).pop() ?? 'server').replace(/@[^@]*$/, '') || 'server';
}

function stringMap(value: unknown, what: string, notes: string[]): Record<string, string> | string {
  if (value === undefined || value === null) return {};
  if (!isRecord(value)) return `"${what}" is not an object`;
  const out: Record<string, string> = {};
  const entries = Object.entries(value);
  if (entries.length > 100) return `"${what}" has ${entries.length} entries; at most 100`;
  for (const [k, v] of entries) {
    if (typeof v === 'string') out[k] = v;
    else if (typeof v === 'number' || typeof v === 'boolean') out[k] = String(v);
    else notes.push(`${what} "${k}" is not a string and was left out`);
  }
  return out;
}

const PLACEHOLDER = /\$\{[^}]*\}/;

function parseEntry(name: string, entry: unknown): ParsedServer | string {
  if (name.trim() === '' || name.length > 64) return 'the name must be 1 to 64 characters';
  // The name is shown in every prompt for the server's tools: nothing that reorders or hides text.
  if (hasUnsafeChars(name)) return 'the name contains control, bidi or invisible characters';
  if (!isRecord(entry)) return 'not an object';
  const notes: string[] = [];
  const type = typeof entry.type === 'string' ? entry.type.toLowerCase() : undefined;
  const url =
    typeof entry.url === 'string'
      ? entry.url
      : typeof entry.serverUrl === 'string'
        ? entry.serverUrl
        : undefined;
  const command = typeof entry.command === 'string' ? entry.command.trim() : undefined;

  let transport: McpTransport;
  let fixedTransport = false;
  if (command !== undefined && url === undefined) {
    if (type !== undefined && type !== 'stdio')
      return `it runs a command but says "type": "${String(entry.type)}"`;
    transport = 'stdio';
  } else if (url !== undefined && command === undefined) {
    if (type === 'sse') {
      transport = 'sse';
      fixedTransport = true;
    } else if (
      type === 'http' ||
      type === 'streamable-http' ||
      type === 'streamablehttp' ||
      type === 'streamable_http'
    ) {
      transport = 'http';
      fixedTransport = true;
    } else if (type === undefined) {
      transport = 'http';
    } else return `unknown "type": "${String(entry.type)}" (expected stdio, http or sse)`;
    if (!/^https?:\/\//i.test(url)) return `"url" must be an http:// or https:// address`;
    if (url.length > 2048) return '"url" is longer than 2048 characters';
  } else if (command !== undefined) {
    return 'it has both "command" and "url"; keep one';
  } else return 'it has neither "command" (a program to run) nor "url" (a server address)';

  if (command !== undefined && (command === '' || command.length > 4096))
    return '"command" must be 1 to 4096 characters';
  let args: string[] = [];
  if (entry.args !== undefined) {
    if (!Array.isArray(entry.args)) return '"args" is not a list';
    if (entry.args.length > 100) return `"args" has ${entry.args.length} items; at most 100`;
    args = entry.args.map((a) => (typeof a === 'string' ? a : (JSON.stringify(a) ?? '')));
    if (args.some((a) => a.length > 4096)) return 'an argument is longer than 4096 characters';
  }
  const env = stringMap(entry.env, 'env', notes);
  if (typeof env === 'string') return env;
  const headers = stringMap(entry.headers, 'headers', notes);
  if (typeof headers === 'string') return headers;
  if (transport === 'stdio' && Object.keys(headers).length)
    notes.push('"headers" only apply to servers at an address; ignored');
  if (transport !== 'stdio' && Object.keys(env).length)
    notes.push('"env" only applies to servers the agent runs; ignored');
  for (const h of Object.keys(headers)) {
    if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(h)) return `header "${h}" is not a valid name`;
  }
  for (const e of Object.keys(env)) {
    if (e === '' || e.includes('=') || e.includes('\u0000'))
      return `env "${e}" is not a valid name`;
  }
  const cwd = typeof entry.cwd === 'string' && entry.cwd.trim() ? entry.cwd : undefined;
  if (entry.trusted === true)
    notes.push(
      '"trusted" is not imported: trust the server on its row once you have seen its tools',
    );
  if (entry.envFile !== undefined) notes.push('"envFile" is not read; add its variables under env');
  const placeholders = [
    command ?? '',
    url ?? '',
    ...args,
    ...Object.values(env),
    ...Object.values(headers),
  ].some((v) => PLACEHOLDER.test(v));
  if (placeholders)
    notes.push(
      'it uses ${…} placeholders (filled in by the app it came from); edit them after importing',
    );
  if ((url !== undefined && carriesCredential(url)) || argsCarryCredential(args))
    notes.push(
      'its address or an argument seems to hold a credential, which is kept in settings.json as written; a value under "env" marked secret is kept in the secret store instead',
    );
  let timeoutSec: number | undefined;
  if (typeof entry.timeout === 'number' && entry.timeout >= 1 && entry.timeout <= 3600)
    timeoutSec = Math.round(entry.timeout);

  const stdio = transport === 'stdio';
  const keptEnv = stdio ? env : {};
  const keptHeaders = stdio ? {} : headers;
  return {
    name: name.trim(),
    transport,
    fixedTransport,
    command,
    args: stdio ? args : [],
    cwd: stdio ? cwd : undefined,
    url,
    env: keptEnv,
    headers: keptHeaders,
    // A value that carries a credential in itself (DATABASE_URL=postgres://user:pw@…) is a
    // secret whatever its name.
    secretEnv: Object.keys(keptEnv).filter(
      (k) => isSecretEnvName(k) || carriesCredential(keptEnv[k] as string),
    ),
    secretHeaders: Object.keys(keptHeaders).filter(
      (k) => isSecretHeaderName(k) || carriesCredential(keptHeaders[k] as string),
    ),
    disabled: entry.disabled === true || entry.enabled === false,
    trusted: false,
    timeoutSec,
    notes,
  };
}
