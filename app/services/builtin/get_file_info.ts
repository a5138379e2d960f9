import type { EntryKind, ResolvedEntry } from '../files/sandbox.js';
import { decodeText, encodingName } from '../files/text.js';
import { folderLabel, modelPath, recipient, sendVerb } from '../files/words.js';
import type { CallPreview, Service, ServiceContext } from '../service.js';
import { readLimit, SNIFF_BYTES } from './read_file.js';

export type GetFileInfoParams = { path: string };

export interface FileInfoResult {
  /** Relative to the allowed folder, with '/' ('.' for the allowed folder itself). */
  path: string;
  kind: EntryKind;
  /** Bytes (files only). */
  size?: number;
  /** ISO 8601, UTC. */
  modified: string;
  /** Files: whether read_file can read it, and if not, why. */
  text?: boolean;
  encoding?: string;
  not_text_reason?: string;
  /** Files: whether it is small enough for read_file. */
  readable?: boolean;
}

async function target(params: GetFileInfoParams, ctx: ServiceContext): Promise<ResolvedEntry> {
  return ctx.files.resolveEntry(params.path, 'any');
}

export const getFileInfoService: Service<GetFileInfoParams> = {
  name: 'get_file_info',
  title: 'File info',
  summary: 'Sends the kind, size and date of a file or folder in your allowed folders.',
  group: 'files',
  description:
    "Facts about a file or folder in the user's allowed folder (by default ~/Documents/Advent Agent): kind, size in bytes, last modified time, and for files whether it is text that read_file can read. " +
    "path is relative to that folder, e.g. 'notes/todo.txt'; '.' is the allowed folder itself.",
  parameters: {
    type: 'object',
    properties: {
      path: {
        type: 'string',
        minLength: 1,
        maxLength: 1024,
        description: "Path relative to the allowed folder, e.g. 'notes/todo.txt'",
      },
    },
    required: ['path'],
    additionalProperties: false,
  },
  risk: 'private',
  timeoutMs: 10_000,

  async preview(params, ctx): Promise<CallPreview> {
    const entry = await target(params, ctx);
    const what = entry.kind === 'folder' ? `the folder ${folderLabel(entry)}` : entry.relative;
    return {
      summary: `${sendVerb(ctx.connection)} the kind, size and date of ${what} ${recipient(ctx.connection)}`,
      resolvedPaths: [entry.absolute],
    };
  },

  async run(params, ctx): Promise<FileInfoResult> {
    const entry = await target(params, ctx);
    const facts = await ctx.files.info(entry);
    const result: FileInfoResult = {
      path: modelPath(entry.relative),
      kind: facts.kind,
      modified: new Date(facts.modifiedMs).toISOString(),
    };
    if (facts.kind !== 'file') return result;
    result.size = facts.size;
    const head = await ctx.files.readStart(entry, SNIFF_BYTES, ctx.signal);
    const sniffed = decodeText(head.bytes, !head.more);
    result.text = sniffed.ok;
    if (sniffed.ok) result.encoding = encodingName(sniffed.encoding);
    else result.not_text_reason = sniffed.reason;
    result.readable = sniffed.ok && facts.size <= readLimit(ctx);
    return result;
  },
};
