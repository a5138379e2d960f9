/**
 * Service names for imported tools: `<server>_<tool>`, sanitised to the registry's rule
 * (`[a-z][a-z0-9_]*`, at most 64 characters). A name carries what the user decided about the tool
 * (its policy), so it must not move to another server's tool: assignment is a pure function of
 * the servers in settings order, their tools sorted by name, and the names given before (kept by
 * their tool, held for it while it is away), whichever server happened to answer first.
 */
import { createHash } from 'node:crypto';

export const MAX_SERVICE_NAME = 64;

/** `My Files!` → `my_files`; empty or starting with a digit gets a letter in front. */
export function sanitise(text: string): string {
  const out = text
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '');
  if (out === '') return 'x';
  return /^[a-z]/.test(out) ? out : `x${out}`;
}

function shortHash(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 6);
}

/** Fit `base` into `max` characters with `suffix`; a cut base keeps a hash of the whole name. */
function fit(base: string, suffix: string, whole: string): string {
  if (base.length + suffix.length <= MAX_SERVICE_NAME) return base + suffix;
  const tag = `_${shortHash(whole)}`;
  const room = MAX_SERVICE_NAME - suffix.length - tag.length;
  return base.slice(0, room).replace(/_+$/, '') + tag + suffix;
}

/** The part every service of a server starts with, e.g. `files` for a server named "Files". */
export function serverPrefix(serverName: string): string {
  // Room for at least a few characters of tool name after it.
  return fit(sanitise(serverName), '', serverName).slice(0, 40).replace(/_+$/, '');
}

export interface NamingServer {
  /** The server's stable id (its settings entry). */
  id: string;
  name: string;
  tools: readonly string[];
}

/** The names given so far, by server id and tool: each is kept by its tool (assignServiceNames). */
export type GivenNames = ReadonlyMap<string, ReadonlyMap<string, string>>;

/**
 * Names for every tool of every server. `reserved` (built-in and other services) are never
 * taken. A name given before to a tool of a server in `servers` stays that tool's, and no other
 * tool gets it, even while its server is restarting or its tool is not listed: a server that
 * lists a new tool never takes over the name (and with it the "allow") of another server's tool.
 *
 * A new tool gets `<server>_<tool>` unless that is taken; when several new tools want the same
 * name, the one whose server's part of it is longest has it (the user named the server; the
 * server named its tool: `github_enterprise` + `search` before `github` + `enterprise_search`),
 * then settings order, then tools by name. The others get `_2`, `_3`… in that order too.
 */
export function assignServiceNames(
  servers: readonly NamingServer[],
  reserved: ReadonlySet<string>,
  given: GivenNames = new Map(),
): Map<string, Map<string, string>> {
  const taken = new Set(reserved);
  const out = new Map<string, Map<string, string>>();
  const wanting: { order: number; prefix: string; tool: string; base: string; whole: string }[] =
    [];
  for (const server of servers) {
    const before = given.get(server.id);
    // Held even for tools not listed now: their names stay theirs (not reserved ones, though).
    for (const name of before?.values() ?? []) if (!reserved.has(name)) taken.add(name);
  }
  servers.forEach((server, order) => {
    const prefix = serverPrefix(server.name);
    const names = new Map<string, string>();
    out.set(server.id, names);
    const before = given.get(server.id);
    for (const tool of [...new Set(server.tools)].sort()) {
      const kept = before?.get(tool);
      if (kept !== undefined && !reserved.has(kept)) {
        names.set(tool, kept);
        continue;
      }
      const whole = `${server.name}\u0000${tool}`;
      wanting.push({
        order,
        prefix,
        tool,
        base: fit(`${prefix}_${sanitise(tool)}`, '', whole),
        whole,
      });
    }
  });
  const byClaim = [...wanting].sort(
    (a, b) => b.prefix.length - a.prefix.length || a.order - b.order,
  );
  const named = new Set<(typeof wanting)[number]>();
  for (const w of byClaim) {
    if (taken.has(w.base)) continue;
    taken.add(w.base);
    out.get(servers[w.order]!.id)!.set(w.tool, w.base);
    named.add(w);
  }
  for (const w of wanting) {
    if (named.has(w)) continue;
    let name = w.base;
    for (let n = 2; taken.has(name); n += 1) name = fit(w.base, `_${n}`, w.whole);
    taken.add(name);
    out.get(servers[w.order]!.id)!.set(w.tool, name);
  }
  return out;
}
