/**
 * What adding our entry to an app's config file means, as pure functions of the file's text: the
 * snippet for a fresh file, the state of our entry, and the new text with its diff. A file that is
 * not JSON (JSONC for VS Code) is refused, never overwritten; everything but our entry is kept.
 */
import {
  MCP_CLIENT_ENTRY_NAME,
  type DiffLine,
  type McpClientApp,
  type McpClientEntryState,
  type McpLaunch,
} from '../contract/mcp-clients.js';
import { jsonErrorText, parseJsonc } from '../services/mcp/jsonc.js';
import { CLIENT_APPS } from './apps.js';
import { lineDiff } from './diff.js';
import { setNestedMember, styleOf } from './json-edit.js';

/** The whole file for someone who has none yet: `{ "mcpServers": { "advent-agent": … } }`. */
export function snippetFor(app: McpClientApp, launch: McpLaunch): string {
  const spec = CLIENT_APPS[app];
  const doc = { [spec.serversKey]: { [MCP_CLIENT_ENTRY_NAME]: spec.entry(launch) } };
  return `${JSON.stringify(doc, null, 2)}\n`;
}

type Parsed =
  | { ok: true; root: Record<string, unknown>; servers?: Record<string, unknown> }
  | { ok: false; reason: string };

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

function parse(app: McpClientApp, text: string): Parsed {
  const spec = CLIENT_APPS[app];
  let json: unknown;
  const body = text.replace(/^\uFEFF/, '');
  try {
    // Claude and Cursor read strict JSON: a comment there is an error the user should see.
    json = spec.jsonc ? parseJsonc(body) : JSON.parse(body);
  } catch (err) {
    return {
      ok: false,
      reason: `it is not valid ${spec.jsonc ? 'JSON (with comments)' : 'JSON'}: ${jsonErrorText(err, body)}`,
    };
  }
  if (!isObject(json)) return { ok: false, reason: 'its top level is not a JSON object' };
  const servers = json[spec.serversKey];
  if (servers !== undefined && !isObject(servers))
    return { ok: false, reason: `its "${spec.serversKey}" is not an object` };
  return { ok: true, root: json, servers };
}

/** JSON values equal regardless of key order. */
export function sameJson(a: unknown, b: unknown): boolean {
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((v, i) => sameJson(v, b[i]));
  }
  if (isObject(a) && isObject(b)) {
    const ka = Object.keys(a);
    if (ka.length !== Object.keys(b).length) return false;
    return ka.every((k) => Object.hasOwn(b, k) && sameJson(a[k], b[k]));
  }
  return a === b;
}

/** Our entry in the file's text (undefined: there is no file). */
export function entryState(
  app: McpClientApp,
  text: string | undefined,
  launch: McpLaunch,
): McpClientEntryState {
  if (text === undefined || text.trim() === '') return 'absent';
  const parsed = parse(app, text);
  if (!parsed.ok) return 'unreadable';
  const existing = parsed.servers?.[MCP_CLIENT_ENTRY_NAME];
  if (existing === undefined) return 'absent';
  return sameJson(existing, CLIENT_APPS[app].entry(launch)) ? 'current' : 'different';
}

export type SetupPlan =
  | { ok: true; text: string; change: 'add' | 'replace' | 'none'; diff: DiffLine[] }
  | { ok: false; reason: string };

/**
 * The file with our entry added or brought up to date. `current` is the file's text, undefined
 * when there is no file. The edit is checked by parsing the result: it must equal the old content
 * with only our entry set, in the same key order, or nothing is proposed.
 */
export function planSetup(
  app: McpClientApp,
  current: string | undefined,
  launch: McpLaunch,
): SetupPlan {
  const spec = CLIENT_APPS[app];
  const entry = spec.entry(launch);
  if (current === undefined || current.trim() === '') {
    const text = snippetFor(app, launch);
    const fresh = current ? text.replace(/\n/g, styleOf(current).newline) : text;
    return { ok: true, text: fresh, change: 'add', diff: lineDiff(current ?? '', fresh) };
  }
  const parsed = parse(app, current);
  if (!parsed.ok) return parsed;
  const existing = parsed.servers?.[MCP_CLIENT_ENTRY_NAME];
  if (existing !== undefined && sameJson(existing, entry))
    return { ok: true, text: current, change: 'none', diff: [] };

  const edited = setNestedMember(current, spec.serversKey, MCP_CLIENT_ENTRY_NAME, entry);
  if (!edited.ok) return { ok: false, reason: edited.reason };
  const expected = {
    ...parsed.root,
    [spec.serversKey]: { ...parsed.servers, [MCP_CLIENT_ENTRY_NAME]: entry },
  };
  const check = parse(app, edited.text);
  if (!check.ok || JSON.stringify(check.root) !== JSON.stringify(expected))
    return { ok: false, reason: 'its layout could not be edited safely; add the snippet by hand' };
  return {
    ok: true,
    text: edited.text,
    change: existing === undefined ? 'add' : 'replace',
    diff: lineDiff(current, edited.text),
  };
}
