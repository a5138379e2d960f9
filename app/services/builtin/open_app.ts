import { realpath } from 'node:fs/promises';
import { relativeInside } from '../files/contain.js';
import { displayPath } from '../files/display.js';
import { type InstalledApp, listInstalledApps } from '../platform/apps.js';
import type { Command } from '../platform/commands.js';
import type { Desktop } from '../platform/desktop.js';
import { asFailure } from '../platform/fallback.js';
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

const real = (p: string): Promise<string> => realpath(p).catch(() => p);

/**
 * Whether the app's launcher lies in an allowed folder, where a server can write files (a
 * server that creates a desktop entry there could give a familiar id its own command).
 */
async function writableLauncher(app: InstalledApp, ctx: ServiceContext): Promise<boolean> {
  const source = await real(app.source);
  for (const root of ctx.files.roots())
    if (relativeInside(await real(root), source) !== undefined) return true;
  return false;
}

/**
 * The prompt's sentence: the app, the exact command that will run, and a warning when its
 * launcher sits where a server could have written it. Run compares it with what was approved.
 */
async function describe(app: InstalledApp, ctx: ServiceContext): Promise<string> {
  const warning = (await writableLauncher(app, ctx))
    ? `; careful: its launcher ${displayPath(app.source)} is in a folder the servers can write to`
    : '';
  return `Open the app “${app.name}” (${app.id}): runs ${commandText(app.launch)}${warning}`;
}

/** What the user approved: the sentence, and the whole command (the sentence may cut it). */
interface OpenAppPlan extends CallPreview {
  command: string;
}

async function planFor(app: InstalledApp, ctx: ServiceContext): Promise<OpenAppPlan> {
  return {
    summary: await describe(app, ctx),
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
      return planFor(await find(desktop, params.id), ctx);
    },
    async run(params, ctx, approved) {
      const app = await find(desktop, params.id);
      // Only what the prompt showed: a launcher changed while the prompt waited is not run.
      const now = await planFor(app, ctx);
      const shown = approved as OpenAppPlan | undefined;
      if (shown && (shown.summary !== now.summary || shown.command !== now.command))
        throw new ServiceFailure(
          'denied',
          `the app '${app.id}' changed while the user was asked (its launcher now runs something else); it was not opened — call open_app again`,
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
