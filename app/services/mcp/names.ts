/**
 * Service names for imported tools: `<server>_<tool>`, sanitised to the registry's rule
 * (`[a-z][a-z0-9_]*`, at most 64 characters). Assignment is a pure function of the servers in
 * settings order and their tools sorted by name, so the same configuration always gives the same
 * names, whichever server happened to answer first.
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

/**
 * Names for every tool of every server. `reserved` (built-in and other services) are never
 * taken. A name already taken gets `_2`, `_3`…; servers are taken in the order given (settings
 * order), each server's tools in code-point order of their names.
 */
export function assignServiceNames(
  servers: readonly NamingServer[],
  reserved: ReadonlySet<string>,
): Map<string, Map<string, string>> {
  const taken = new Set(reserved);
  const out = new Map<string, Map<string, string>>();
  for (const server of servers) {
    const prefix = serverPrefix(server.name);
    const names = new Map<string, string>();
    for (const tool of [...new Set(server.tools)].sort()) {
      const whole = `${server.name}\u0000${tool}`;
      const base = fit(`${prefix}_${sanitise(tool)}`, '', whole);
      let name = base;
      for (let n = 2; taken.has(name); n += 1) name = fit(base, `_${n}`, whole);
      taken.add(name);
      names.set(tool, name);
    }
    out.set(server.id, names);
  }
  return out;
}
