import { type InstalledApp, listInstalledApps } from '../platform/apps.js';
import type { Desktop } from '../platform/desktop.js';
import { asFailure } from '../platform/fallback.js';
import { ServiceFailure, type Service } from '../service.js';

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
    async preview(params) {
      const app = await find(desktop, params.id);
      return { summary: `Open the app “${app.name}” (${app.id})`, resolvedPaths: [] };
    },
    async run(params) {
      const app = await find(desktop, params.id);
      try {
        await desktop.runner.launch(app.launch.cmd, app.launch.args);
      } catch (err) {
        throw asFailure(err, `opening ${app.name}`);
      }
      return { message: `Opened ${app.name}` };
    },
  };
}
