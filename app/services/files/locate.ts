import { lstat, realpath, stat } from 'node:fs/promises';
import type { Stats } from 'node:fs';
import path from 'node:path';

/**
 * Where a path really lands on disk: the realpath of its nearest existing ancestor, plus the parts
 * that do not exist yet. Lexical containment alone is not enough: a symlink inside a root can point
 * anywhere, so the sandbox re-checks containment on this real location.
 */
export type Located =
  | {
      ok: true;
      /** Real path of the nearest existing ancestor joined with the missing parts. */
      real: string;
      /** The nearest existing ancestor, as given (not resolved). */
      existing: string;
      /** The path itself exists (then `stats` describes it, links followed). */
      found: boolean;
      stats: Stats;
    }
  | { ok: false; reason: 'dangling' | 'loop' | 'not_folder' | 'unreadable'; at: string };

export function errorCode(err: unknown): string | undefined {
  if (typeof err === 'object' && err !== null && 'code' in err) {
    const code = (err as { code: unknown }).code;
    return typeof code === 'string' ? code : undefined;
  }
  return undefined;
}

export async function locate(abs: string): Promise<Located> {
  const missing: string[] = [];
  let at = abs;
  for (;;) {
    try {
      await lstat(at);
      break;
    } catch (err) {
      const code = errorCode(err);
      if (code === 'ELOOP') return { ok: false, reason: 'loop', at };
      // ENOTDIR: an ancestor is a file; climbing finds it and reports 'not_folder' below.
      if (code !== 'ENOENT' && code !== 'ENOTDIR') return { ok: false, reason: 'unreadable', at };
      const parent = path.dirname(at);
      if (parent === at) return { ok: false, reason: 'unreadable', at };
      missing.unshift(path.basename(at));
      at = parent;
    }
  }
  let real: string;
  let stats: Stats;
  try {
    real = await realpath(at);
    stats = await stat(real);
  } catch (err) {
    // lstat saw an entry that realpath cannot follow: a link to nowhere or a loop. Fail closed.
    const code = errorCode(err);
    const reason = code === 'ENOENT' ? 'dangling' : code === 'ELOOP' ? 'loop' : 'unreadable';
    return { ok: false, reason, at };
  }
  if (missing.length > 0 && !stats.isDirectory()) return { ok: false, reason: 'not_folder', at };
  return {
    ok: true,
    real: path.join(real, ...missing),
    existing: at,
    found: missing.length === 0,
    stats,
  };
}
