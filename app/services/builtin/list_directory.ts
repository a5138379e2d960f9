import type { EntryKind, ListedEntry, ResolvedEntry } from '../files/sandbox.js';
import { folderLabel, modelPath, plural, recipient, sendVerb } from '../files/words.js';
import type { CallPreview, Service, ServiceContext } from '../service.js';

export type ListDirectoryParams = {
  path?: string;
  offset?: number;
  limit?: number;
};

export interface ListedItem {
  name: string;
  kind: EntryKind;
  /** Bytes, files only. */
  size?: number;
}

export interface ListDirectoryResult {
  /** The folder, relative to the allowed folder ('.' for the allowed folder itself). */
  path: string;
  total: number;
  offset: number;
  entries: ListedItem[];
  /** Where the next page starts; absent on the last page. */
  next_offset?: number;
  /** Said when the folder is too large to list completely. */
  note?: string;
}

/** Entries read from one folder at most (a folder of a million files must not fill memory). */
export const MAX_LISTED = 5000;
export const MAX_PAGE = 200;
const DEFAULT_PAGE = 50;

/** Folders first, then by name: stable across calls, so offsets page reliably. */
function order(a: ListedEntry, b: ListedEntry): number {
  const folder = Number(b.kind === 'folder') - Number(a.kind === 'folder');
  if (folder !== 0) return folder;
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

async function listing(params: ListDirectoryParams, ctx: ServiceContext) {
  const entry: ResolvedEntry = await ctx.files.resolveEntry(params.path ?? '', 'folder');
  const { entries, truncated } = await ctx.files.list(entry, MAX_LISTED);
  return { entry, entries: entries.sort(order), truncated };
}

export const listDirectoryService: Service<ListDirectoryParams> = {
  name: 'list_directory',
  title: 'List folder',
  summary: 'Sends the names, kinds and sizes of the files in one of your allowed folders.',
  group: 'files',
  description:
    "List the files and folders in a folder inside the user's allowed folder (by default ~/Documents/Advent Agent): names, kinds (file, folder, link) and sizes in bytes. " +
    "path is relative to the allowed folder, e.g. 'notes'; omit it for the allowed folder itself. " +
    'Long folders come in pages: pass next_offset from the answer as offset to get the next one. Links are shown, never followed.',
  parameters: {
    type: 'object',
    properties: {
      path: {
        type: 'string',
        maxLength: 1024,
        description:
          "Folder relative to the allowed folder, e.g. 'notes'; default: the allowed folder",
      },
      offset: {
        type: 'integer',
        minimum: 0,
        maximum: MAX_LISTED,
        description: 'Skip this many entries (from next_offset of the previous page); default 0',
      },
      limit: {
        type: 'integer',
        minimum: 1,
        maximum: MAX_PAGE,
        description: `Entries per page, at most ${MAX_PAGE}; default ${DEFAULT_PAGE}`,
      },
    },
    additionalProperties: false,
  },
  risk: 'private',
  timeoutMs: 10_000,

  async preview(params, ctx): Promise<CallPreview> {
    const { entry, entries } = await listing(params, ctx);
    return {
      summary: `${sendVerb(ctx.connection)} the list of ${folderLabel(entry)} (${plural(entries.length, 'entry', 'entries')}) ${recipient(ctx.connection)}`,
      resolvedPaths: [entry.absolute],
    };
  },

  async run(params, ctx): Promise<ListDirectoryResult> {
    const { entry, entries, truncated } = await listing(params, ctx);
    const offset = params.offset ?? 0;
    const limit = params.limit ?? DEFAULT_PAGE;
    const page = entries
      .slice(offset, offset + limit)
      .map((e): ListedItem =>
        e.kind === 'file'
          ? { name: e.name, kind: e.kind, size: e.size }
          : { name: e.name, kind: e.kind },
      );
    const result: ListDirectoryResult = {
      path: modelPath(entry.relative),
      total: entries.length,
      offset,
      entries: page,
    };
    if (offset + limit < entries.length) result.next_offset = offset + limit;
    if (truncated) {
      result.note = `this folder has more than ${MAX_LISTED} entries; only ${MAX_LISTED} of them were read (in no particular order). Use search_files to find a name`;
    }
    return result;
  },
};
