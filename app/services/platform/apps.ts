/**
 * The installed applications, found where each platform lists them: Linux `.desktop` entries in
 * the XDG data folders, macOS `.app` bundles in the Applications folders, Windows Start Menu
 * shortcuts. An app is opened only by an id from this list, with the command its own entry names
 * — never a command line a server wrote.
 */
import type { Dirent } from 'node:fs';
import { readFile, readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { shortLine } from '../../unsafe-chars.js';
import type { Command } from './commands.js';
import type { Desktop } from './desktop.js';

export interface InstalledApp {
  /** Stable across runs: the desktop file id, the bundle name, the shortcut's Start Menu path. */
  id: string;
  name: string;
  /** How to start it; never shown to a server (the user sees it in the prompt). */
  launch: Command;
  /** The file the launch command was read from: the desktop entry, bundle or shortcut. */
  source: string;
}

/** Bounds on what a folder full of entries can make us read. */
export const MAX_APPS = 1000;
const MAX_ENTRY_BYTES = 64 * 1024;
const MAX_DEPTH = 4;
const MAX_DIR_ENTRIES = 5000;

export async function listInstalledApps(desktop: Desktop): Promise<InstalledApp[]> {
  const found = new Map<string, InstalledApp>();
  switch (desktop.platform) {
    case 'linux': {
      const hidden = new Set<string>();
      for (const dir of desktop.appDirs ?? xdgApplicationDirs(desktop))
        await scanDesktopEntries(dir, found, hidden);
      break;
    }
    case 'darwin':
      for (const dir of desktop.appDirs ?? macApplicationDirs(desktop.homedir))
        await scanBundles(dir, found);
      break;
    case 'win32':
      for (const dir of desktop.appDirs ?? startMenuDirs(desktop.env))
        await scanShortcuts(dir, dir, 0, found);
      break;
  }
  return [...found.values()].sort((a, b) =>
    a.name.localeCompare(b.name, 'en', { sensitivity: 'base' }),
  );
}

/** The longest app name shown (to the model and in the prompt). */
const MAX_NAME_CHARS = 100;

/**
 * A name from a file anyone with write access to a launcher folder wrote: control, bidi and
 * zero-width characters go (they could make the prompt say something else), then it is cut.
 */
export function displayName(raw: string): string {
  return shortLine(raw, MAX_NAME_CHARS);
}

// --- Linux -------------------------------------------------------------------------------------

/** `$XDG_DATA_HOME/applications` first (the user's own entries win), then `$XDG_DATA_DIRS`. */
export function xdgApplicationDirs(desktop: Pick<Desktop, 'env' | 'homedir'>): string[] {
  const home = desktop.env.XDG_DATA_HOME?.trim() || path.join(desktop.homedir, '.local', 'share');
  const dirs = (desktop.env.XDG_DATA_DIRS?.trim() || '/usr/local/share:/usr/share')
    .split(':')
    .filter((d) => path.isAbsolute(d));
  return [home, ...dirs].map((d) => path.join(d, 'applications'));
}

/**
 * The same id in a later folder is shadowed by an earlier one, even when the earlier one says
 * `Hidden=true` (that is how a user removes a system entry from their menus): `hidden` keeps those.
 */
async function scanDesktopEntries(
  root: string,
  found: Map<string, InstalledApp>,
  hidden: Set<string>,
): Promise<void> {
  for (const file of await filesUnder(root, '.desktop')) {
    if (found.size >= MAX_APPS) return;
    const id = path.relative(root, file).slice(0, -'.desktop'.length).split(path.sep).join('-');
    if (found.has(id) || hidden.has(id)) continue;
    const entry = await readDesktopEntry(file);
    if (!entry) continue;
    if (entry.hidden) hidden.add(id);
    else found.set(id, { id, name: entry.name, launch: entry.launch, source: file });
  }
}

interface DesktopEntry {
  name: string;
  launch: Command;
  hidden: boolean;
}

/** The `[Desktop Entry]` group of a file, if it describes an application a person can open. */
export async function readDesktopEntry(file: string): Promise<DesktopEntry | undefined> {
  let text: string;
  try {
    const info = await stat(file);
    if (!info.isFile() || info.size > MAX_ENTRY_BYTES) return undefined;
    text = await readFile(file, 'utf8');
  } catch {
    return undefined;
  }
  return parseDesktopEntry(text);
}

export function parseDesktopEntry(text: string): DesktopEntry | undefined {
  const keys = new Map<string, string>();
  let inMain = false;
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (!line || line.startsWith('#')) continue;
    if (line.startsWith('[')) {
      inMain = line === '[Desktop Entry]';
      continue;
    }
    if (!inMain) continue;
    const eq = line.indexOf('=');
    if (eq < 0) continue;
    const key = line.slice(0, eq).trim();
    if (!keys.has(key)) keys.set(key, line.slice(eq + 1).trim());
  }
  if (keys.get('Type') !== 'Application') return undefined;
  // Removed by the user, not shown in menus, or needing a terminal we do not have: not something
  // to "open" — and it still shadows the same id in later folders.
  if (['Hidden', 'NoDisplay', 'Terminal'].some((k) => keys.get(k) === 'true'))
    return { name: '', launch: { cmd: '', args: [] }, hidden: true };
  const name = displayName(unescapeValue(keys.get('Name') ?? ''));
  const exec = keys.get('Exec');
  if (!name || !exec) return undefined;
  const argv = execArgs(unescapeValue(exec));
  if (!argv || argv.length === 0) return undefined;
  return { name, launch: { cmd: argv[0]!, args: argv.slice(1) }, hidden: false };
}

/** The string escapes of the Desktop Entry spec (`\s \n \t \r \\`). */
function unescapeValue(value: string): string {
  return value.replace(/\\([sntr\\])/g, (_m, c: string) =>
    c === 's' ? ' ' : c === 'n' ? '\n' : c === 't' ? '\t' : c === 'r' ? '\r' : '\\',
  );
}

/**
 * The Exec key as an argument array (Desktop Entry spec, "The Exec key"): double-quoted arguments
 * with `\"`, `` \` ``, `\$`, `\\` escaped inside; field codes removed (we open the app with no
 * files or URLs); `%%` is a literal percent. Undefined for an unterminated quote.
 */
export function execArgs(exec: string): string[] | undefined {
  const args: string[] = [];
  let current = '';
  let started = false;
  let quoted = false;
  for (let i = 0; i < exec.length; i++) {
    const c = exec[i]!;
    if (quoted) {
      if (c === '\\' && i + 1 < exec.length && '"`$\\'.includes(exec[i + 1]!)) {
        current += exec[++i];
      } else if (c === '"') {
        quoted = false;
      } else {
        current += c;
      }
      continue;
    }
    if (c === '"') {
      quoted = true;
      started = true;
    } else if (c === ' ' || c === '\t') {
      if (started) args.push(current);
      current = '';
      started = false;
    } else {
      current += c;
      started = true;
    }
  }
  if (quoted) return undefined;
  if (started) args.push(current);
  return args
    .filter((a) => !/^%[fFuUdDnNickvm]$/.test(a))
    .map((a) => a.replace(/%([%fFuUdDnNickvm])/g, (_m, c: string) => (c === '%' ? '%' : '')));
}

// --- macOS -------------------------------------------------------------------------------------

export function macApplicationDirs(homedir: string): string[] {
  return [
    '/Applications',
    '/Applications/Utilities',
    '/System/Applications',
    '/System/Applications/Utilities',
    path.join(homedir, 'Applications'),
  ];
}

async function scanBundles(dir: string, found: Map<string, InstalledApp>): Promise<void> {
  for (const entry of await entriesOf(dir)) {
    if (found.size >= MAX_APPS) return;
    if (!entry.isDirectory() || !entry.name.endsWith('.app')) continue;
    const id = entry.name.slice(0, -'.app'.length);
    const name = displayName(id);
    if (!name || found.has(id)) continue;
    found.set(id, {
      id,
      name,
      launch: { cmd: 'open', args: ['-a', path.join(dir, entry.name)] },
      source: path.join(dir, entry.name),
    });
  }
}

// --- Windows -----------------------------------------------------------------------------------

/** The machine's Start Menu programs, then the user's. */
export function startMenuDirs(env: Readonly<Record<string, string | undefined>>): string[] {
  const out: string[] = [];
  const programs = ['Microsoft', 'Windows', 'Start Menu', 'Programs'];
  if (env.ProgramData) out.push(path.join(env.ProgramData, ...programs));
  if (env.APPDATA) out.push(path.join(env.APPDATA, ...programs));
  return out;
}

async function scanShortcuts(
  root: string,
  dir: string,
  depth: number,
  found: Map<string, InstalledApp>,
): Promise<void> {
  for (const entry of await entriesOf(dir)) {
    if (found.size >= MAX_APPS) return;
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (depth < MAX_DEPTH) await scanShortcuts(root, full, depth + 1, found);
      continue;
    }
    if (!entry.isFile() || !entry.name.toLowerCase().endsWith('.lnk')) continue;
    const name = displayName(entry.name.slice(0, -'.lnk'.length));
    // Uninstallers sit next to the programs in the Start Menu; nobody asks a voice to run them.
    if (!name || /^uninstall\b/i.test(name)) continue;
    const id = path.relative(root, full).slice(0, -'.lnk'.length).split(path.sep).join('/');
    if (found.has(id)) continue;
    // Explorer opens a shortcut as a double-click does (cmd's `start` would parse the path).
    found.set(id, { id, name, launch: { cmd: 'explorer.exe', args: [full] }, source: full });
  }
}

// --- helpers -----------------------------------------------------------------------------------

async function entriesOf(dir: string): Promise<Dirent[]> {
  try {
    const entries = await readdir(dir, { withFileTypes: true });
    return entries.slice(0, MAX_DIR_ENTRIES).sort((a, b) => (a.name < b.name ? -1 : 1));
  } catch {
    return [];
  }
}

/** Files with `ext` under `root` (subfolders too, bounded), in a stable order. */
async function filesUnder(root: string, ext: string, depth = 0): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await entriesOf(root)) {
    const full = path.join(root, entry.name);
    if (entry.isDirectory() && depth < MAX_DEPTH)
      out.push(...(await filesUnder(full, ext, depth + 1)));
    else if ((entry.isFile() || entry.isSymbolicLink()) && entry.name.endsWith(ext)) out.push(full);
    if (out.length >= MAX_APPS) break;
  }
  return out;
}
