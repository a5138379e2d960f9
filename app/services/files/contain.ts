import path from 'node:path';

/**
 * `child` relative to `parent` when it lies inside it ('' when equal), else undefined.
 * path.relative, never string prefixes: '/root-evil' must not pass for '/root', and on Windows
 * path.win32 compares case-insensitively the way the file system does.
 */
export function relativeInside(parent: string, child: string): string | undefined {
  const rel = path.relative(parent, child);
  if (rel === '') return '';
  if (path.isAbsolute(rel)) return undefined; // another drive on Windows
  if (rel === '..' || rel.startsWith(`..${path.sep}`)) return undefined;
  return rel;
}

/** Strictly inside: the folder itself does not count. */
export function isStrictlyInside(parent: string, child: string): boolean {
  const rel = relativeInside(parent, child);
  return rel !== undefined && rel !== '';
}
