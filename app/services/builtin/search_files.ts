import { escapedUnsafe } from '../../unsafe-chars.js';
import { quoteInput } from '../files/display.js';
import { nameGlob } from '../files/glob.js';
import type { EntryKind, WalkedEntry } from '../files/sandbox.js';
import { decodeText } from '../files/text.js';
import { folderLabel, modelPath, recipient, sendVerb } from '../files/words.js';
import { ServiceFailure, type CallPreview, type Service, type ServiceContext } from '../service.js';
import { formatBytes } from '../size.js';
import { MAX_LISTED } from './list_directory.js';

export type SearchFilesParams = {
  pattern: string;
  text?: string;
  path?: string;
  max_results?: number;
};

export interface SearchMatch {
  /** Relative to the allowed folder, with '/'. */
  path: string;
  kind: EntryKind;
  size?: number;
  /** With `text`: the first matching line (1-based) and that line, cut short. */
  line?: number;
  excerpt?: string;
}

export type SearchStop = 'results' | 'entries' | 'bytes' | 'time';

export interface SearchFilesResult {
  /** The folder searched, relative to the allowed folder ('.' = all of it). */
  path: string;
  matches: SearchMatch[];
  /** Entries looked at and bytes of text read. */
  scanned: { entries: number; bytes: number };
  /** Why the search ended early, when it did; then `note` says what to do. */
  stopped?: SearchStop;
  note?: string;
}

/** Bounds of one search, whatever the folder holds (DESIGN §1.7). */
export const SEARCH_LIMITS = {
  maxDepth: 16,
  maxEntries: 20_000,
  maxBytes: 16 * 1024 * 1024,
  /** Of each file, only the start is searched for text. */
  maxBytesPerFile: 1024 * 1024,
  timeMs: 5_000,
  maxResults: 200,
  defaultResults: 50,
};
const EXCERPT_CHARS = 160;

function excerpt(text: string, at: number): { line: number; excerpt: string } {
  const start = text.lastIndexOf('\n', at) + 1;
  const endAt = text.indexOf('\n', at);
  const end = endAt === -1 ? text.length : endAt;
  let line = 1;
  for (let i = text.indexOf('\n'); i !== -1 && i < start; i = text.indexOf('\n', i + 1)) line++;
  const whole = text.slice(start, end).replace(/\r$/, '');
  const from = Math.max(0, Math.min(at - start - EXCERPT_CHARS / 2, whole.length - EXCERPT_CHARS));
  const cut = whole.slice(from, from + EXCERPT_CHARS);
  return {
    line,
    excerpt: `${from > 0 ? '…' : ''}${cut}${from + EXCERPT_CHARS < whole.length ? '…' : ''}`,
  };
}

// The pattern and text are the model's own words, never checked as a path: every unsafe
// character is written out, tag characters and line separators included, which quoteInput keeps.
const shown = (text: string): string => escapedUnsafe(quoteInput(text));

function describe(params: SearchFilesParams): string {
  const named = params.pattern === '*' ? 'all names' : `names like ${shown(params.pattern)}`;
  return params.text ? `${named} containing ${shown(params.text)}` : named;
}

const NOTES: Record<SearchStop, string> = {
  results: 'stopped at max_results; narrow the pattern or raise max_results',
  entries: `stopped after looking at ${SEARCH_LIMITS.maxEntries} entries; search a smaller folder (path) or a narrower pattern`,
  bytes: `stopped after reading ${formatBytes(SEARCH_LIMITS.maxBytes)} of text; search a smaller folder or a narrower pattern`,
  time: `stopped after ${SEARCH_LIMITS.timeMs / 1000} s; search a smaller folder or a narrower pattern`,
};

export const searchFilesService: Service<SearchFilesParams> = {
  name: 'search_files',
  title: 'Search files',
  summary: 'Finds files by name, and optionally by the text in them, in your allowed folders.',
  group: 'files',
  description:
    "Find files and folders in the user's allowed folder (by default ~/Documents/Advent Agent) whose name matches a glob (* any characters, ? one character; case-insensitive, e.g. '*.md'), " +
    'optionally only text files containing `text` (case-insensitive; the first matching line is returned). ' +
    'path narrows the search to a folder. Links are listed, never followed. The search is bounded in results, entries, bytes and time and says when it stopped early.',
  parameters: {
    type: 'object',
    properties: {
      pattern: {
        type: 'string',
        minLength: 1,
        maxLength: 200,
        description: "Name glob, e.g. '*.txt' or 'note-2025*'; '*' for every name",
      },
      text: {
        type: 'string',
        minLength: 1,
        maxLength: 200,
        description: 'Only files whose text contains this (case-insensitive)',
      },
      path: {
        type: 'string',
        maxLength: 1024,
        description:
          "Folder to search, relative to the allowed folder, e.g. 'notes'; default: all of it",
      },
      max_results: {
        type: 'integer',
        minimum: 1,
        maximum: SEARCH_LIMITS.maxResults,
        description: `At most this many matches; default ${SEARCH_LIMITS.defaultResults}`,
      },
    },
    required: ['pattern'],
    additionalProperties: false,
  },
  risk: 'private',
  timeoutMs: 15_000,

  async preview(params, ctx): Promise<CallPreview> {
    const entry = await ctx.files.resolveEntry(params.path ?? '', 'folder');
    const what = params.text ? 'matching paths and lines' : 'matching paths';
    return {
      summary: `Search ${folderLabel(entry)} for ${describe(params)}; ${sendVerb(ctx.connection).toLowerCase()} the ${what} ${recipient(ctx.connection)}`,
      resolvedPaths: [entry.absolute],
    };
  },

  async run(params, ctx): Promise<SearchFilesResult> {
    const entry = await ctx.files.resolveEntry(params.path ?? '', 'folder');
    const search = new Search(params, ctx);
    await ctx.files.walk(entry, (item) => search.visit(item), {
      maxDepth: SEARCH_LIMITS.maxDepth,
      maxPerFolder: MAX_LISTED,
      signal: ctx.signal,
    });
    if (ctx.signal.aborted) {
      throw new ServiceFailure('cancelled', 'the search was cancelled before it finished');
    }
    const result: SearchFilesResult = {
      path: modelPath(entry.relative),
      matches: search.matches,
      scanned: { entries: search.entries, bytes: search.bytes },
    };
    if (search.stopped) {
      result.stopped = search.stopped;
      result.note = NOTES[search.stopped];
    }
    return result;
  },
};

/** One search's state: what matched, what it cost, and why it stopped. */
class Search {
  readonly matches: SearchMatch[] = [];
  entries = 0;
  bytes = 0;
  stopped: SearchStop | undefined;
  private readonly named: (name: string) => boolean;
  private readonly needle: string | undefined;
  private readonly max: number;
  private readonly deadline: number;

  constructor(
    params: SearchFilesParams,
    private readonly ctx: ServiceContext,
  ) {
    this.named = nameGlob(params.pattern);
    this.needle = params.text?.toLowerCase();
    this.max = params.max_results ?? SEARCH_LIMITS.defaultResults;
    this.deadline = ctx.clock.now() + SEARCH_LIMITS.timeMs;
  }

  private stop(why: SearchStop): 'stop' {
    this.stopped = why;
    return 'stop';
  }

  async visit(item: WalkedEntry): Promise<'stop' | undefined> {
    if (this.ctx.clock.now() > this.deadline) return this.stop('time');
    if (this.entries >= SEARCH_LIMITS.maxEntries) return this.stop('entries');
    this.entries++;
    if (!this.named(item.name)) return undefined;
    const found: SearchMatch = { path: modelPath(item.relative), kind: item.kind };
    if (item.kind === 'file') found.size = item.size;
    if (this.needle !== undefined) {
      if (item.kind !== 'file') return undefined;
      if (this.bytes >= SEARCH_LIMITS.maxBytes) return this.stop('bytes');
      const budget = Math.min(SEARCH_LIMITS.maxBytesPerFile, SEARCH_LIMITS.maxBytes - this.bytes);
      let head;
      try {
        head = await item.readStart(budget);
      } catch (err) {
        // Gone, changed or unreadable since it was listed: not a match, and no reason to stop.
        if (err instanceof ServiceFailure) return undefined;
        throw err;
      }
      this.bytes += head.bytes.byteLength;
      const decoded = decodeText(head.bytes, !head.more);
      if (!decoded.ok) return undefined;
      const at = decoded.text.toLowerCase().indexOf(this.needle);
      if (at === -1) return undefined;
      // toLowerCase keeps the length for almost all text; the excerpt is a hint, not an offset.
      Object.assign(found, excerpt(decoded.text, Math.min(at, decoded.text.length)));
    }
    this.matches.push(found);
    return this.matches.length >= this.max ? this.stop('results') : undefined;
  }
}
