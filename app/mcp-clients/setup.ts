/**
 * One-click setup of this agent in other apps' MCP server lists: list the apps with the state of
 * our entry, preview the change to one file, and apply exactly that preview — only if the file is
 * still what was previewed, after a backup beside it, then the new file atomically (temp + rename).
 */
import { readFile, realpath, stat } from 'node:fs/promises';
import type { Clock } from '../clock.js';
import {
  MCP_CLIENT_APPS,
  type DiffLine,
  type McpClientApp,
  type McpClientSetupPreview,
  type McpClientSetupResult,
  type McpClientView,
  type McpLaunch,
} from '../contract/mcp-clients.js';
import { CommandRefusal } from '../contract/errors.js';
import type { IdSource } from '../ids.js';
import { copyBeside, errorText, writeFileAtomic } from '../settings/atomic.js';
import { CLIENT_APPS, type PlatformInfo, clientAppDir, clientConfigPath } from './apps.js';
import { configSecrets, maskSecrets } from './mask.js';
import { entryState, planSetup, snippetFor } from './plan.js';

/** What an MCP client runs when the host did not say: `advent-agent` on the app's PATH. */
export const UNRESOLVED_LAUNCH: McpLaunch = { command: 'advent-agent', args: ['mcp'] };
/** A config file larger than this is not read (theirs are a few KB). */
export const CLIENT_FILE_BYTES = 1024 * 1024;
const PREVIEW_TTL_MS = 10 * 60_000;
const MAX_PREVIEWS = 8;

export interface McpClientSetupOptions {
  platform: PlatformInfo;
  /** How clients launch this agent; undefined when the host did not resolve it. */
  launch?: McpLaunch;
  clock: Clock;
  ids: IdSource;
}

interface Pending {
  app: McpClientApp;
  /** The file written: the config path with symlinks resolved, so a linked dotfile stays linked. */
  target: string;
  before: string | undefined;
  after: string;
  at: number;
}

type FileRead = { text: string | undefined; target: string; mode?: number };

export class McpClientSetup {
  private readonly pending = new Map<string, Pending>();

  constructor(private readonly o: McpClientSetupOptions) {}

  get launch(): McpLaunch {
    return this.o.launch ?? UNRESOLVED_LAUNCH;
  }

  async list(): Promise<McpClientView[]> {
    return Promise.all(
      MCP_CLIENT_APPS.map(async (app): Promise<McpClientView> => {
        const configPath = clientConfigPath(app, this.o.platform);
        const read = await this.read(app).catch(() => undefined);
        return {
          app,
          configPath,
          installed: await isDir(clientAppDir(app, this.o.platform)),
          // Unreadable (too large, no permission) is still there.
          exists: read ? read.text !== undefined : true,
          entry: read ? entryState(app, read.text, this.launch) : 'unreadable',
          snippet: snippetFor(app, this.launch),
          launch: this.launch,
          resolved: this.o.launch !== undefined,
        };
      }),
    );
  }

  async preview(app: McpClientApp): Promise<McpClientSetupPreview> {
    const configPath = clientConfigPath(app, this.o.platform);
    const name = CLIENT_APPS[app].name;
    if (!(await isDir(clientAppDir(app, this.o.platform))))
      throw new CommandRefusal(
        'mcp_client_not_installed',
        `${name} is not installed for this user (no ${clientAppDir(app, this.o.platform)}); copy the snippet instead`,
        { app: name },
      );
    const read = await this.read(app);
    const plan = planSetup(app, read.text, this.launch);
    if (!plan.ok)
      throw new CommandRefusal(
        'mcp_client_config_invalid',
        `${configPath} was left as it is: ${plan.reason}`,
        { path: configPath, app: name, reason: plan.reason },
      );
    const now = this.o.clock.now();
    for (const [key, p] of this.pending) if (now - p.at > PREVIEW_TTL_MS) this.pending.delete(key);
    while (this.pending.size >= MAX_PREVIEWS)
      this.pending.delete(this.pending.keys().next().value!);
    const id = `setup-${this.o.ids.hex(12)}`;
    this.pending.set(id, {
      app,
      target: read.target,
      before: read.text,
      after: plan.text,
      at: now,
    });
    const shown = maskDiff(plan.diff, configSecrets(read.text, plan.text));
    return {
      id,
      app,
      configPath,
      creates: read.text === undefined,
      change: plan.change,
      diff: shown.diff,
      masked: shown.masked,
    };
  }

  /** Write what preview `id` showed; refused when the file changed since or the preview expired. */
  async apply(id: string): Promise<McpClientSetupResult> {
    const p = this.pending.get(id);
    this.pending.delete(id);
    if (!p || this.o.clock.now() - p.at > PREVIEW_TTL_MS)
      throw new CommandRefusal(
        'mcp_client_setup_stale',
        'that preview is no longer valid; look at the change again',
        {},
      );
    const configPath = clientConfigPath(p.app, this.o.platform);
    const name = CLIENT_APPS[p.app].name;
    const now = await this.read(p.app);
    if (now.text !== p.before || now.target !== p.target)
      throw new CommandRefusal(
        'mcp_client_setup_stale',
        `${configPath} changed after the preview; nothing was written, look at the change again`,
        { path: configPath, app: name },
      );
    const result = { app: p.app, configPath, created: p.before === undefined };
    if (p.after === p.before) return { ...result, changed: false };
    try {
      const backupPath =
        p.before === undefined ? undefined : await backUp(p.target, this.o.clock.now(), now.mode);
      await writeFileAtomic(p.target, p.after, { mode: now.mode ?? 0o600, ids: this.o.ids });
      return { ...result, changed: true, ...(backupPath ? { backupPath } : {}) };
    } catch (err) {
      throw new CommandRefusal(
        'mcp_client_file_error',
        `${configPath} could not be written: ${errorText(err)}`,
        { path: configPath, app: name, error: errorText(err) },
      );
    }
  }

  /** The app's config file (undefined text: none yet), following a symlink to where it points. */
  private async read(app: McpClientApp): Promise<FileRead> {
    const configPath = clientConfigPath(app, this.o.platform);
    const name = CLIENT_APPS[app].name;
    const target = await realpath(configPath).catch(() => configPath);
    let info;
    try {
      info = await stat(target);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { text: undefined, target };
      throw readRefusal(configPath, name, err);
    }
    const unfit = !info.isFile()
      ? 'it is not a file'
      : info.size > CLIENT_FILE_BYTES
        ? `it is ${info.size} bytes; at most ${CLIENT_FILE_BYTES} are read`
        : undefined;
    if (unfit)
      throw new CommandRefusal(
        'mcp_client_config_invalid',
        `${configPath} was left as it is: ${unfit}`,
        { path: configPath, app: name, reason: unfit },
      );
    let bytes: Buffer;
    try {
      bytes = await readFile(target);
    } catch (err) {
      throw readRefusal(configPath, name, err);
    }
    const text = utf8Text(bytes);
    if (text === undefined) {
      // Decoded leniently, each stray byte would come back as U+FFFD and be written over their text.
      const reason = 'it is not UTF-8 text (saved in another encoding?)';
      throw new CommandRefusal(
        'mcp_client_config_invalid',
        `${configPath} was left as it is: ${reason}`,
        { path: configPath, app: name, reason },
      );
    }
    return { text, target, mode: info.mode & 0o777 };
  }
}

/**
 * The file's text, or undefined when it is not valid UTF-8. A BOM stays in the text, as with
 * `readFile(…, 'utf8')`: the planner skips it and the file is written back with it.
 */
function utf8Text(bytes: Buffer): string | undefined {
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    return undefined;
  }
}

function readRefusal(configPath: string, app: string, err: unknown): CommandRefusal {
  return new CommandRefusal(
    'mcp_client_file_error',
    `${configPath} could not be read: ${errorText(err)}`,
    { path: configPath, app, error: errorText(err) },
  );
}

async function isDir(dir: string): Promise<boolean> {
  return stat(dir).then(
    (s) => s.isDirectory(),
    () => false,
  );
}

/**
 * Copy the file to `<file>.advent-backup-<stamp>` (an earlier backup is never replaced), readable
 * by the same people as the file itself.
 */
function backUp(file: string, epochMs: number, mode = 0o600): Promise<string> {
  return copyBeside(file, 'advent-backup', epochMs, mode);
}

/**
 * The diff as it is shown: credential-like values masked on every line, added ones too (a file
 * written on one line is all in its added line). `secrets` come from the whole files, as a line
 * alone may not say its value is one (the flag before it on the line above, or folded away).
 */
function maskDiff(
  diff: readonly DiffLine[],
  secrets: ReadonlySet<string>,
): { diff: DiffLine[]; masked: boolean } {
  let masked = false;
  const out = diff.map((line): DiffLine => {
    if (line.op === 'skip') return line;
    const shown = maskSecrets(line.text, secrets);
    masked ||= shown.masked;
    return { op: line.op, text: shown.text };
  });
  return { diff: out, masked };
}
