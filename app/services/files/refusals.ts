import { ServiceFailure } from '../service.js';
import { formatBytes } from '../size.js';
import { relativeInside } from './contain.js';
import { displayPath, quoteInput } from './display.js';
import type { FolderChanged } from './folder.js';
import { errorCode, type Located } from './locate.js';

/**
 * The sandbox's refusals, written for the AI model: what went wrong with which path, whether
 * anything happened, and what to do instead. Codes are the gate's stable ones (DESIGN §3).
 */

/** What the refused operation was doing, for "nothing was written" / "nothing was read". */
export type Doing = 'written' | 'read';

export const invalid = (message: string): ServiceFailure =>
  new ServiceFailure('path_invalid', message);

export const rootsText = (roots: readonly string[]): string =>
  roots.map((r) => displayPath(r)).join(' or ');

export function outside(input: string, roots: readonly string[], how = 'points'): ServiceFailure {
  return new ServiceFailure(
    'path_outside_roots',
    `${quoteInput(input)} ${how} outside the allowed folders; use a path inside ${rootsText(roots)}`,
  );
}

/** A path into the agent's own data folder, which no service reaches. */
export function ownData(input: string): ServiceFailure {
  return new ServiceFailure(
    'path_outside_roots',
    `${quoteInput(input)} is in the agent's own data folder (its settings, audit log and keys), which no service reads or writes; use another path`,
  );
}

export function locateFailure(
  loc: Exclude<Located, { ok: true }>,
  input: string,
  root: string,
): ServiceFailure {
  const q = quoteInput(input);
  switch (loc.reason) {
    case 'dangling':
      return invalid(`${q} goes through a link that points nowhere; use another name`);
    case 'loop':
      return invalid(`${q} goes through a link that loops back on itself; use another name`);
    case 'not_folder': {
      const rel = relativeInside(root, loc.at);
      const where = rel ? quoteInput(rel) : displayPath(loc.at);
      return invalid(`${where} is a file, not a folder; choose another path for ${q}`);
    }
    case 'unreadable':
      return invalid(
        `${q} cannot be checked (a folder on the way is not readable); use another path`,
      );
  }
}

/** A walk stopped because the disk changed under it: what changed, with nothing done. */
export function changed(
  err: FolderChanged,
  shown: string,
  root: string,
  doing: Doing,
): ServiceFailure {
  const q = quoteInput(shown);
  const part = quoteInput(err.at);
  const nothing = `nothing was ${doing}`;
  switch (err.reason) {
    case 'link':
      return new ServiceFailure(
        'path_outside_roots',
        `${q} now leads through a link (${part} was replaced by one) and links are not followed here; ${nothing}. Use a path inside ${rootsText([root])}`,
      );
    case 'moved':
      return new ServiceFailure(
        'path_outside_roots',
        `${q} changed while it was being ${doing} (a folder on the way was moved or replaced); ${nothing}. Try again or use another path`,
      );
    case 'not_folder':
      return invalid(`${part} on the way to ${q} is not a folder; ${nothing}`);
    case 'not_file':
      return invalid(`${q} is not a regular file; ${nothing}`);
    case 'missing':
      return invalid(
        `${q} does not exist (any more); ${nothing}. Call list_directory to see what is there`,
      );
  }
}

/** The refusal for content above the size cap; shared with services that check before asking. */
export function fileTooLarge(name: string, bytes: number, max: number): ServiceFailure {
  return new ServiceFailure(
    'file_too_large',
    `${quoteInput(name)} would be ${formatBytes(bytes)} but files are limited to ${formatBytes(max)}; write less content or split it into several files`,
  );
}

/** The refusal for a file above a read cap. */
export function fileTooLargeToRead(name: string, bytes: number, max: number): ServiceFailure {
  return new ServiceFailure(
    'file_too_large',
    `${quoteInput(name)} is ${formatBytes(bytes)}, more than the ${formatBytes(max)} that can be read at once; it was not read`,
  );
}

/** A system error as a refusal the model can act on; anything unforeseen stays an error. */
export function mapFsError(err: unknown, shown: string, doing: Doing): Error {
  if (err instanceof ServiceFailure) return err;
  const where = quoteInput(shown);
  if ((err as { name?: string } | null)?.name === 'AbortError') {
    return new ServiceFailure('cancelled', `reading ${where} was cancelled before it finished`);
  }
  const code = errorCode(err);
  const verb = doing === 'written' ? 'write' : 'read';
  switch (code) {
    case 'EEXIST':
      return new ServiceFailure('file_exists', `${where} already exists; nothing was written`);
    case 'ENOSPC':
    case 'EDQUOT':
      return new ServiceFailure(
        'disk_full',
        `there is not enough disk space to write ${where}; nothing was written. Free some space or ask the user to choose another folder`,
      );
    case 'EACCES':
    case 'EPERM':
    case 'EROFS':
      return new ServiceFailure(
        'service_error',
        `cannot ${verb} ${where}: permission denied (${code}); ask the user to check the folder's permissions`,
      );
    case 'ENOENT':
      return invalid(
        `${where} does not exist (any more); nothing was ${doing}. Call list_directory to see what is there`,
      );
    case 'ELOOP':
      return new ServiceFailure(
        'path_outside_roots',
        `${where} now leads through a link, and links are not followed here; nothing was ${doing}`,
      );
    case 'EISDIR':
    case 'ENOTDIR':
    case 'ENAMETOOLONG':
    case 'EINVAL':
      return invalid(`${where} cannot be ${doing} (${code}); choose another name`);
    default:
      return err instanceof Error ? err : new Error(String(err));
  }
}
