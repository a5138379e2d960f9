import { opendir, realpath } from 'node:fs/promises';
import path from 'node:path';
import { relativeInside } from '../files/contain.js';
import { displayPath } from '../files/display.js';
import { type InstalledApp, listInstalledApps } from '../platform/apps.js';
import type { Command } from '../platform/commands.js';
import type { Desktop } from '../platform/desktop.js';
import { asFailure } from '../platform/fallback.js';
import { resolveCommand } from '../mcp/launcher.js';
import { clipped, escapedUnsafe } from '../../unsafe-chars.js';
import { type CallPreview, ServiceFailure, type Service, type ServiceContext } from '../service.js';

export type OpenAppParams = { id: string };

/**
 * The installed app with this id (or, liberal in, this exact name when only one has it); a
 * refusal otherwise. Only what list_apps lists can be opened.
 */
async function find(desktop: Desktop, id: string): Promise<InstalledApp> {
  const apps = await listInstalledApps(desktop);
  const want = id.trim();
  const byId = apps.find((a) => a.id === want);
  if (byId) return byId;
  const byName = apps.filter((a) => a.name.toLowerCase() === want.toLowerCase());
  if (byName.length === 1) return byName[0]!;
  throw new ServiceFailure(
    'not_found',
    `no installed app has the id '${want.slice(0, 100)}'; call list_apps to see the ids`,
  );
}

/** The longest command line a prompt shows; a longer one is cut with an ellipsis. */
const MAX_SHOWN_COMMAND = 300;

/**
 * The command as a person would type it: arguments with spaces or quotes in double quotes, and
 * characters that could reorder or hide what the prompt shows written out as escapes.
 */
export function commandText({ cmd, args }: Command): string {
  const text = [cmd, ...args]
    .map((a) => (a === '' || /[\s"'\\$`]/.test(a) ? JSON.stringify(a) : a))
    .join(' ');
  return clipped(escapedUnsafe(text), MAX_SHOWN_COMMAND);
}

/** The longest path a warning shows; a longer one is cut with an ellipsis. */
const MAX_SHOWN_PATH = 200;

/** A path in the prompt: home as `~`, characters that could reorder or hide it written out. */
const shownPath = (p: string): string => clipped(escapedUnsafe(displayPath(p)), MAX_SHOWN_PATH);

const real = (p: string): Promise<string> => realpath(p).catch(() => p);

/**
 * The real path of an existing file; undefined for a missing one, which holds nothing a server
 * wrote (one that writes it later changes the sentence, and run re-checks that).
 */
const existing = (p: string): Promise<string | undefined> => realpath(p).catch(() => undefined);

/**
 * At most this many of the files a launch names are looked up, so a launcher with a long argument
 * list (or a bundle with a crowded Contents/MacOS) cannot make a prompt slow.
 */
const MAX_CHECKED_FILES = 8;

/** What a launch runs (the program) or hands to it (an argument that is a path). */
interface Named {
  role: 'program' | 'argument';
  path: string;
}

/**
 * The programs in a macOS bundle's Contents/MacOS: `open -a` starts the one Info.plist names, and
 * it lives there whatever it is called (read as a folder, no plist parser: Info.plist is often
 * binary). Bounded: the folder is read entry by entry.
 */
async function bundlePrograms(bundle: string, max: number): Promise<string[]> {
  const dir = path.join(bundle, 'Contents', 'MacOS');
  const out: string[] = [];
  try {
    const entries = await opendir(dir);
    for await (const entry of entries) {
      out.push(path.join(dir, entry.name));
      if (out.length >= max) break; // leaving the loop closes the handle
    }
  } catch {
    // No such folder (not a bundle): nothing of it to check.
  }
  return out.sort();
}

/**
 * The files the launch runs or is given, in order: its program (a bare name found through the
 * desktop's PATH, the environment the runner starts programs with), a bundle's own programs,
 * then each argument that is an absolute path. A Windows shortcut's target is not read (the .lnk
 * format is not parsed): only the shortcut itself, which the launcher check covers.
 */
async function namedFiles(app: InstalledApp, desktop: Desktop): Promise<Named[]> {
  const { cmd, args } = app.launch;
  const env = Object.fromEntries(
    Object.entries(desktop.env).filter((e): e is [string, string] => e[1] !== undefined),
  );
  const program = cmd ? resolveCommand(cmd, env, undefined, desktop.platform) : undefined;
  const named: Named[] = program ? [{ role: 'program', path: program }] : [];
  if (desktop.platform === 'darwin' && app.source.endsWith('.app'))
    for (const file of await bundlePrograms(app.source, MAX_CHECKED_FILES))
      named.push({ role: 'program', path: file });
  for (const arg of args)
    if (path.isAbsolute(arg) && arg !== app.source) named.push({ role: 'argument', path: arg });
  return named.slice(0, MAX_CHECKED_FILES);
}

const WRITABLE = ' is in a folder the servers can write to';

/**
 * Where a server could have put what this app runs, as the prompt's warnings: its launcher in an
 * allowed folder (a server that creates a desktop entry there could give a familiar id its own
 * command), or a program or file it runs there (a server that replaces that file keeps the
 * launcher as it was, and runs its own code under a familiar name). Real paths on both sides, so
 * a symlink into an allowed folder counts. The first such file is named; '' when none is.
 */
async function warnings(app: InstalledApp, desktop: Desktop, ctx: ServiceContext): Promise<string> {
  const roots = await Promise.all(ctx.files.roots().map(real));
  const writable = (file: string): boolean =>
    roots.some((root) => relativeInside(root, file) !== undefined);
  const source = await real(app.source);
  let out = writable(source) ? `; careful: its launcher ${shownPath(app.source)}${WRITABLE}` : '';
  for (const { role, path: named } of await namedFiles(app, desktop)) {
    const file = await existing(named);
    // A bundle's own program lies inside the bundle: the launcher's warning (or its absence) says it.
    if (!file || relativeInside(source, file) !== undefined || !writable(file)) continue;
    out += `; careful: its ${role} ${shownPath(file)}${WRITABLE}`;
    break;
  }
  return out;
}

/**
 * The prompt's sentence: the app, the exact command that will run, and a warning when its
 * launcher, or what that runs, sits where a server could have written it. Run compares it with
 * what was approved, so the check is made again when the app is opened.
 */
async function describe(app: InstalledApp, desktop: Desktop, ctx: ServiceContext): Promise<string> {
  const warning = await warnings(app, desktop, ctx);
  return `Open the app “${app.name}” (${app.id}): runs ${commandText(app.launch)}${warning}`;
}

/** What the user approved: the sentence, and the whole command (the sentence may cut it). */
interface OpenAppPlan extends CallPreview {
  command: string;
}

async function planFor(
  app: InstalledApp,
  desktop: Desktop,
  ctx: ServiceContext,
): Promise<OpenAppPlan> {
  return {
    summary: await describe(app, desktop, ctx),
    resolvedPaths: [app.source],
    command: JSON.stringify(app.launch),
  };
}

export function openAppService(desktop: Desktop): Service<OpenAppParams> {
  return {
    name: 'open_app',
    title: 'Open an app',
    summary: 'Opens one of your installed applications.',
    group: 'apps',
    description:
      "Open an application installed on the user's computer, by the id list_apps gave " +
      "(e.g. 'org.gnome.Calculator'). Only installed applications can be opened.",
    parameters: {
      type: 'object',
      properties: {
        id: {
          type: 'string',
          minLength: 1,
          maxLength: 256,
          description: 'The app id from list_apps',
        },
      },
      required: ['id'],
      additionalProperties: false,
    },
    risk: 'system',
    timeoutMs: 15_000,
    async preview(params, ctx) {
      return planFor(await find(desktop, params.id), desktop, ctx);
    },
    async run(params, ctx, approved) {
      const app = await find(desktop, params.id);
      // Only what the prompt showed: a launcher changed while the prompt waited is not run.
      const now = await planFor(app, desktop, ctx);
      const shown = approved as OpenAppPlan | undefined;
      if (shown && (shown.summary !== now.summary || shown.command !== now.command))
        throw new ServiceFailure(
          'denied',
          `the app '${app.id}' changed while the user was asked (its launcher, or a file it runs, is not as the prompt showed it); it was not opened — call open_app again`,
        );
      try {
        await desktop.runner.launch(app.launch.cmd, app.launch.args);
      } catch (err) {
        throw asFailure(err, `opening ${app.name}`);
      }
      return { message: `Opened ${app.name}` };
    },
  };
}
