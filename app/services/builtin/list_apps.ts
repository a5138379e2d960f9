import { listInstalledApps } from '../platform/apps.js';
import type { Desktop } from '../platform/desktop.js';
import type { Service } from '../service.js';

export type ListAppsParams = { query?: string; limit?: number };

const DEFAULT_LIMIT = 50;

export function listAppsService(desktop: Desktop): Service<ListAppsParams> {
  return {
    name: 'list_apps',
    title: 'List apps',
    summary: 'Tells which applications are installed, so one can be opened.',
    group: 'apps',
    description:
      "List the applications installed on the user's computer, with the id open_app needs. " +
      "query keeps only apps whose name or id contains it (e.g. 'calc'); limit caps how many are returned (default 50).",
    parameters: {
      type: 'object',
      properties: {
        query: { type: 'string', maxLength: 100, description: 'Part of the app name, e.g. "calc"' },
        limit: {
          type: 'integer',
          minimum: 1,
          maximum: 200,
          description: 'At most this many (default 50)',
        },
      },
      additionalProperties: false,
    },
    risk: 'read',
    timeoutMs: 10_000,
    preview(params) {
      const q = params.query?.trim();
      return {
        summary: q ? `List the installed apps matching “${q}”` : 'List the installed apps',
        resolvedPaths: [],
      };
    },
    async run(params) {
      const q = params.query?.trim().toLowerCase() ?? '';
      const all = await listInstalledApps(desktop);
      const matching = q
        ? all.filter((a) => a.name.toLowerCase().includes(q) || a.id.toLowerCase().includes(q))
        : all;
      const limit = params.limit ?? DEFAULT_LIMIT;
      return {
        apps: matching.slice(0, limit).map(({ id, name }) => ({ id, name })),
        total: matching.length,
        ...(matching.length > limit
          ? { message: `${matching.length - limit} more; narrow with query` }
          : {}),
        ...(matching.length === 0
          ? { message: q ? `no installed app matches '${q}'` : 'no installed apps were found' }
          : {}),
      };
    },
  };
}
