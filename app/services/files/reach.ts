import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { relativeInside } from './contain.js';
import { displayPath, quoteInput } from './display.js';
import { FolderChanged, HeldFolder, type HoldMode } from './folder.js';
import { locate } from './locate.js';
import {
  changed,
  type Doing,
  invalid,
  locateFailure,
  mapFsError,
  outside,
  ownData,
} from './refusals.js';

/**
 * From a checked path to a held folder: where the path really lands is computed again at the
 * moment of the operation (the prompt may have waited a minute), then reached by a walk from the
 * root that follows no link (folder.ts). Every refusal says what changed.
 */

/**
 * Where an operation runs: its root (still a configured root), how folders are held, and the real
 * paths no operation may touch (the agent's own data folder, which an allowed folder such as home
 * may contain). `offLimits` is asked about the very real path the link-free walk then reaches, so a
 * link inside the root (`~/config → ~/.config`) cannot lead a read, a write or a walk into it.
 */
export interface Where {
  root: string;
  mode: HoldMode;
  offLimits?: (real: string) => boolean;
}

/** The root's real location; a root that does not exist yet is fine (created on first write). */
export async function realRoot(root: string): Promise<{ real: string; found: boolean }> {
  const loc = await locate(root);
  if (!loc.ok || (loc.found && !loc.stats.isDirectory())) {
    throw invalid(
      `the allowed folder ${displayPath(root)} cannot be used (it is not a reachable folder); ask the user to fix it in Settings`,
    );
  }
  return { real: loc.real, found: loc.found };
}

/**
 * Hold the folder `absFolder` inside `root`, creating missing folders (and the root itself, the
 * user's own choice) when `create`.
 */
export async function reach(
  { root, mode, offLimits }: Where,
  absFolder: string,
  shown: string,
  create: boolean,
  doing: Doing,
): Promise<HeldFolder> {
  let rootReal = await realRoot(root);
  if (!rootReal.found && create) {
    await mkdir(rootReal.real, { recursive: true }).catch((err: unknown) => {
      throw mapFsError(err, shown, doing);
    });
    rootReal = await realRoot(root);
  }
  const loc = await locate(absFolder);
  if (!loc.ok) throw locateFailure(loc, shown, root);
  if (loc.found && !loc.stats.isDirectory()) {
    throw invalid(`the folder for ${quoteInput(shown)} is a file; choose another path`);
  }
  const rel = relativeInside(rootReal.real, loc.real);
  if (rel === undefined) throw outside(shown, [root], 'now leads through a link');
  if (offLimits?.(loc.real)) throw ownData(shown);
  if (!loc.found && !create) throw changed(new FolderChanged('missing', shown), shown, root, doing);
  let folder: HeldFolder;
  try {
    folder = await HeldFolder.openRoot(rootReal.real, mode);
  } catch (err) {
    if (err instanceof FolderChanged) throw changed(err, shown, root, doing);
    throw mapFsError(err, shown, doing);
  }
  try {
    for (const part of rel === '' ? [] : rel.split(path.sep)) {
      const next = await folder.child(part, create);
      await folder.close();
      folder = next;
    }
    return folder;
  } catch (err) {
    await folder.close();
    if (err instanceof FolderChanged) throw changed(err, shown, root, doing);
    throw mapFsError(err, shown, doing);
  }
}

/**
 * Where an existing entry is now: the held folder that contains it and its name there ('.' for
 * the root). The real location is used, so a link inside the root to another place inside it
 * still works, and a link swapped in since is never followed.
 */
export async function reachEntry(
  where: Where,
  entry: { relative: string; absolute: string },
): Promise<{ folder: HeldFolder; name: string }> {
  const { root } = where;
  const shown = entry.relative || '.';
  const loc = await locate(entry.absolute);
  if (!loc.ok) throw locateFailure(loc, shown, root);
  if (!loc.found) throw changed(new FolderChanged('missing', shown), shown, root, 'read');
  const rootReal = await realRoot(root);
  const rel = relativeInside(rootReal.real, loc.real);
  if (rel === undefined) throw outside(shown, [root], 'now leads through a link');
  if (where.offLimits?.(loc.real)) throw ownData(shown);
  if (rel === '') {
    return { folder: await reach(where, loc.real, shown, false, 'read'), name: '.' };
  }
  const folder = await reach(where, path.dirname(loc.real), shown, false, 'read');
  return { folder, name: path.basename(loc.real) };
}

/** Hold an existing folder; undefined for a root not made yet (an empty folder, as it were). */
export async function reachFolder(
  where: Where,
  entry: { relative: string; absolute: string },
): Promise<HeldFolder | undefined> {
  const { root } = where;
  if (entry.relative === '' && !(await realRoot(root)).found) return undefined;
  const { folder, name } = await reachEntry(where, entry);
  if (name === '.') return folder;
  try {
    return await folder.child(name, false);
  } catch (err) {
    if (err instanceof FolderChanged) throw changed(err, entry.relative, root, 'read');
    throw mapFsError(err, entry.relative, 'read');
  } finally {
    await folder.close();
  }
}
