import os from 'node:os';
import path from 'node:path';
import type { AgentNotice } from '../contract/notice.js';

/**
 * Where the agent keeps its data and where file services write by default. Pure functions over
 * injected inputs, so every platform's answer can be tested on any machine.
 */
export interface PathInputs {
  platform: NodeJS.Platform;
  env: Readonly<Record<string, string | undefined>>;
  homedir: string;
}

export const APP_DIR_NAME = 'Advent Agent';
/** Linux convention is a lowercase, space-free directory under XDG_DATA_HOME. */
export const LINUX_APP_DIR_NAME = 'advent-agent';

/** The path flavour of the target platform, not of the machine running the code. */
function pathFor(platform: NodeJS.Platform): path.PlatformPath {
  return platform === 'win32' ? path.win32 : path.posix;
}

/** An env value usable as a base directory: set, non-blank and absolute (XDG says relative ones are invalid). */
function absoluteEnv(
  env: PathInputs['env'],
  name: string,
  p: path.PlatformPath,
  homedir: string,
): string | undefined {
  let value = env[name]?.trim();
  if (!value) return undefined;
  // user-dirs.dirs style values ("$HOME/Documents") sometimes leak into the environment verbatim.
  if (value === '$HOME' || value.startsWith('$HOME/'))
    value = homedir + value.slice('$HOME'.length);
  return p.isAbsolute(value) ? value : undefined;
}

export function defaultDataDir({ platform, env, homedir }: PathInputs): string {
  const p = pathFor(platform);
  switch (platform) {
    case 'darwin':
      return p.join(homedir, 'Library', 'Application Support', APP_DIR_NAME);
    case 'win32': {
      const appData =
        absoluteEnv(env, 'APPDATA', p, homedir) ?? p.join(homedir, 'AppData', 'Roaming');
      return p.join(appData, APP_DIR_NAME);
    }
    default: {
      // Linux and the other Unixes follow the XDG base directory spec.
      const dataHome =
        absoluteEnv(env, 'XDG_DATA_HOME', p, homedir) ?? p.join(homedir, '.local', 'share');
      return p.join(dataHome, LINUX_APP_DIR_NAME);
    }
  }
}

export function defaultFilesRoot({ platform, env, homedir }: PathInputs): string {
  const p = pathFor(platform);
  const documents =
    (platform !== 'darwin' && platform !== 'win32'
      ? absoluteEnv(env, 'XDG_DOCUMENTS_DIR', p, homedir)
      : undefined) ?? p.join(homedir, 'Documents');
  return p.join(documents, APP_DIR_NAME);
}

/** The inputs of the running process; hosts call this once, everything else takes PathInputs. */
export function systemPathInputs(): PathInputs {
  return { platform: process.platform, env: process.env, homedir: os.homedir() };
}

export const systemDataDir = (): string => defaultDataDir(systemPathInputs());
export const systemFilesRoot = (): string => defaultFilesRoot(systemPathInputs());

/**
 * Makes an existing data folder private to its user (0700): it holds the audit log, settings and
 * possibly a secrets file, and a folder made earlier by hand (or by an older version) may be
 * readable by everyone. Returns a notice for the user (a sentence and its words) when it changed
 * the mode or could not; nothing on Windows, where ACLs, not mode bits, protect the profile folder.
 */
export async function makeDataDirPrivate(
  dir: string,
  platform: NodeJS.Platform = process.platform,
): Promise<AgentNotice | undefined> {
  if (platform === 'win32') return undefined;
  const { chmod, stat } = await import('node:fs/promises');
  let mode: number;
  try {
    mode = (await stat(dir)).mode & 0o777;
  } catch {
    return undefined; // not there: whoever creates it creates it 0700
  }
  if ((mode & 0o077) === 0) return undefined;
  const was = mode.toString(8).padStart(4, '0');
  try {
    await chmod(dir, 0o700);
    return {
      message: `the data folder ${dir} was open to other users (mode ${was}); it is now 0700`,
      words: { key: 'notice.dataDirMadePrivate', params: { dir, mode: was } },
    };
  } catch (err) {
    const reason = (err as Error).message;
    return {
      message: `the data folder ${dir} is open to other users (mode ${was}) and could not be made private (${reason}); change it with: chmod 700 "${dir}"`,
      words: { key: 'notice.dataDirOpen', params: { dir, mode: was, reason } },
    };
  }
}
