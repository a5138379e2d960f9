import { quoteInput } from '../files/display.js';
import { displayPath, fileTooLarge, type ResolvedPath } from '../files/sandbox.js';
import { ServiceFailure, type CallPreview, type Service, type ServiceContext } from '../service.js';
import { formatBytes } from '../size.js';

export type CreateFileParams = {
  filename: string;
  content: string;
  overwrite?: boolean;
};

export interface CreateFileResult {
  /** The sentence for the model: "Created notes/todo.txt (1234 bytes) in ~/Documents/Advent Agent". */
  message: string;
  /** Where the file is, home shortened to `~`. */
  path: string;
  bytes: number;
}

function existsFailure(target: ResolvedPath): ServiceFailure {
  return new ServiceFailure(
    'file_exists',
    `${quoteInput(target.relative)} already exists; call again with overwrite: true to replace it (the user will be asked)`,
  );
}

/**
 * The checks shared by preview and run. Run repeats them: the prompt may have waited a minute,
 * and the file may have appeared or vanished meanwhile.
 */
async function plan(params: CreateFileParams, ctx: ServiceContext) {
  const target = await ctx.files.resolve(params.filename);
  const bytes = Buffer.byteLength(params.content, 'utf8');
  const max = ctx.files.maxFileBytes();
  if (bytes > max) throw fileTooLarge(target.relative, bytes, max);
  if (target.exists && params.overwrite !== true) throw existsFailure(target);
  return { target, bytes, replacing: target.exists };
}

export const createFileService: Service<CreateFileParams> = {
  name: 'create_file',
  title: 'Create file',
  summary: 'Writes a new text file in your allowed folders; replacing a file asks separately.',
  group: 'files',
  description:
    "Create a text file in the user's allowed folder (by default ~/Documents/Advent Agent) and write content into it. " +
    "filename is relative to that folder, e.g. 'notes/todo.txt'; missing folders are created. " +
    'An existing file is replaced only with overwrite: true, and the user is asked first.',
  parameters: {
    type: 'object',
    properties: {
      filename: {
        type: 'string',
        minLength: 1,
        maxLength: 1024,
        description: "Path of the file relative to the allowed folder, e.g. 'notes/todo.txt'",
      },
      content: { type: 'string', description: 'Text to write into the file (UTF-8)' },
      overwrite: {
        type: 'boolean',
        description:
          'true to replace a file that already exists (the user is asked); default false',
      },
    },
    required: ['filename', 'content'],
    additionalProperties: false,
  },
  risk: 'write',
  timeoutMs: 10_000,

  async preview(params, ctx): Promise<CallPreview> {
    const { target, bytes, replacing } = await plan(params, ctx);
    const verb = replacing ? 'Replace' : 'Create';
    const preview: CallPreview = {
      summary: `${verb} file ${target.relative} (${formatBytes(bytes)}) in ${displayPath(target.root)}`,
      resolvedPaths: [target.absolute],
    };
    // Replacing loses the old content: it needs its own approval, never implied by `allow`.
    if (replacing) preview.escalation = 'overwrite';
    return preview;
  },

  async run(params, ctx, approved): Promise<CreateFileResult> {
    const { target, bytes, replacing } = await plan(params, ctx);
    // Only what the prompt showed: with overwrite: true on a missing file the prompt said
    // "Create"; a file that appeared while it waited was approved for creating, not replacing.
    // Without a preview (a direct run) the params alone decide.
    if (replacing && approved && approved.escalation !== 'overwrite') throw existsFailure(target);
    if (replacing) {
      await ctx.files.replace(target, params.content, ctx.signal);
    } else {
      try {
        await ctx.files.writeNew(target, params.content, ctx.signal);
      } catch (err) {
        // Appeared between the check and the write: same answer as if it had been there before.
        if (err instanceof ServiceFailure && err.code === 'file_exists')
          throw existsFailure(target);
        throw err;
      }
    }
    const verb = replacing ? 'Replaced' : 'Created';
    return {
      message: `${verb} ${target.relative} (${bytes} bytes) in ${displayPath(target.root)}`,
      path: displayPath(target.absolute),
      bytes,
    };
  },
};
