/**
 * What `ui --open` hands the browser: a page in the data folder (readable by the user alone) that
 * sends the browser on to the address with its token. The browser is started with this file's
 * address on its command line, which other local users can read for the browser's whole life
 * (`ps`, /proc/<pid>/cmdline), so the token itself never goes there (Jupyter does the same).
 * The page lives as long as the run: removed when `ui` ends, and at the next start when a hard kill
 * left it behind.
 */
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { writeFileAtomic } from '../../app/settings/atomic.js';
import { escapeHtml } from './html.js';

export const LAUNCH_PAGE = 'open-ui.html';

/** Writes the page for `url` (written anew on each start: the token changes) and returns its address. */
export async function writeLaunchPage(dataDir: string, url: string): Promise<string> {
  const file = path.join(dataDir, LAUNCH_PAGE);
  const href = escapeHtml(url);
  await writeFileAtomic(
    file,
    '<!doctype html>\n<meta charset="utf-8">\n<meta name="referrer" content="no-referrer">\n' +
      `<meta http-equiv="refresh" content="0;url=${href}">\n<title>Advent Agent</title>\n` +
      `<p><a href="${href}">Open Advent Agent</a></p>\n`,
  );
  // Percent-encoded like the rest of the path (the same file to a browser): on Windows the address
  // goes through cmd's `start`, where these characters would end or redirect the command.
  return pathToFileURL(file).href.replace(
    /[&^|<>()!]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
}

/**
 * Removes the page, best effort (none there is fine). Its token dies with the run that made it, but
 * a link carrying a token has no business lying in the folder once nothing answers it any more.
 */
export async function removeLaunchPage(dataDir: string): Promise<void> {
  await rm(path.join(dataDir, LAUNCH_PAGE), { force: true }).catch(() => undefined);
}
