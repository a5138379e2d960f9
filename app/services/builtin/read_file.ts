import { quoteInput } from '../files/display.js';
import { fileTooLargeToRead, type ResolvedEntry } from '../files/sandbox.js';
import { decodeText, encodingName } from '../files/text.js';
import { modelPath, recipient, sendVerb } from '../files/words.js';
import { ServiceFailure, type CallPreview, type Service, type ServiceContext } from '../service.js';
import { formatBytes } from '../size.js';

export type ReadFileParams = { path: string };

export interface ReadFileResult {
  /** Relative to the allowed folder, with '/'. */
  path: string;
  /** As found: 'UTF-8', 'UTF-8 with BOM', 'UTF-16 LE', 'UTF-16 BE'. */
  encoding: string;
  /** Size of the file in bytes. */
  bytes: number;
  content: string;
}

/**
 * What one answer may carry. A model's context cannot take a whole book, and a voice server's
 * frames are bounded too; the user's own size cap applies when it is smaller.
 */
export const READ_LIMIT_BYTES = 256 * 1024;
/** Enough of a file's start to tell text from binary before the user is asked. */
export const SNIFF_BYTES = 4096;

export function readLimit(ctx: ServiceContext): number {
  return Math.min(READ_LIMIT_BYTES, ctx.files.maxFileBytes());
}

export function notText(relative: string, reason: string): ServiceFailure {
  return new ServiceFailure(
    'path_invalid',
    `${quoteInput(relative)} ${reason}; only text files can be read. It was not read`,
  );
}

/** The checks shared by preview and run: an existing text file within the cap. */
async function plan(params: ReadFileParams, ctx: ServiceContext) {
  const entry: ResolvedEntry = await ctx.files.resolveEntry(params.path, 'file');
  const head = await ctx.files.readStart(entry, SNIFF_BYTES, ctx.signal);
  const max = readLimit(ctx);
  if (head.facts.size > max) throw fileTooLargeToRead(entry.relative, head.facts.size, max);
  const sniffed = decodeText(head.bytes, !head.more);
  if (!sniffed.ok) throw notText(entry.relative, sniffed.reason);
  return { entry, size: head.facts.size, max };
}

export const readFileService: Service<ReadFileParams> = {
  name: 'read_file',
  title: 'Read file',
  summary: 'Sends the text of a file in your allowed folders.',
  group: 'files',
  description:
    "Read a text file in the user's allowed folder (by default ~/Documents/Advent Agent) and return its content. " +
    "path is relative to that folder, e.g. 'notes/todo.txt' (call list_directory or search_files to find names). " +
    `Text only (UTF-8, or UTF-16 with a BOM), up to ${formatBytes(READ_LIMIT_BYTES)}; binary files and larger files are refused with the reason.`,
  parameters: {
    type: 'object',
    properties: {
      path: {
        type: 'string',
        minLength: 1,
        maxLength: 1024,
        description: "Path of the file relative to the allowed folder, e.g. 'notes/todo.txt'",
      },
    },
    required: ['path'],
    additionalProperties: false,
  },
  risk: 'private',
  timeoutMs: 10_000,

  async preview(params, ctx): Promise<CallPreview> {
    const { entry, size } = await plan(params, ctx);
    return {
      summary: `${sendVerb(ctx.connection)} the contents of ${entry.relative} (${formatBytes(size)}) ${recipient(ctx.connection)}`,
      resolvedPaths: [entry.absolute],
    };
  },

  async run(params, ctx): Promise<ReadFileResult> {
    const { entry, max } = await plan(params, ctx);
    const { bytes } = await ctx.files.readFile(entry, max, ctx.signal);
    const decoded = decodeText(bytes, true);
    if (!decoded.ok) throw notText(entry.relative, decoded.reason);
    return {
      path: modelPath(entry.relative),
      encoding: encodingName(decoded.encoding),
      bytes: bytes.byteLength,
      content: decoded.text,
    };
  },
};
