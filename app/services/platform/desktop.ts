/**
 * What the desktop services need from the computer, injected as one value: which platform's
 * commands to build, the runner that starts them, and the few facts read directly (environment,
 * home, network interfaces, /sys). Hosts pass overrides (Electron's clipboard and screen); tests
 * pass a recorder as the runner and another platform to check its exact commands.
 */
import os from 'node:os';
import { type Runner, execRunner } from './runner.js';

/** The three families of commands; every other Unix is treated like Linux (XDG, /sys). */
export type Platform = 'linux' | 'darwin' | 'win32';

export function platformOf(p: NodeJS.Platform): Platform {
  return p === 'darwin' || p === 'win32' ? p : 'linux';
}

/** The clipboard's text; a host with a better one than the platform commands injects it. */
export interface ClipboardStore {
  readText(): Promise<string>;
  writeText(text: string): Promise<void>;
}

/** One captured frame of the screen, already encoded (and scaled down) by the host. */
export interface ScreenImage {
  data: Buffer;
  mimeType: 'image/jpeg' | 'image/png';
  width: number;
  height: number;
}

/**
 * Captures the screen for a call. `for` names the server the picture is for (a page that must ask
 * the user to pick a screen shows it). Rejects with a ServiceFailure when it cannot.
 */
export type ScreenSource = (request: {
  connection: { id: string; name: string };
  signal: AbortSignal;
}) => Promise<ScreenImage>;

export interface OsFacts {
  name: string;
  release: string;
  arch: string;
}

export interface Desktop {
  platform: Platform;
  runner: Runner;
  env: Readonly<Record<string, string | undefined>>;
  homedir: string;
  /** Overrides the platform's clipboard commands (Electron; tests without a display). */
  clipboard?: ClipboardStore;
  /** Where screenshots come from; without one, take_screenshot says this host cannot. */
  screen?: ScreenSource;
  /** The root of Linux's /sys (battery facts), for tests. */
  sysRoot: string;
  /** Folders to look for installed applications in, instead of the platform's own (tests). */
  appDirs?: string[];
  osFacts: () => OsFacts;
  networkInterfaces: () => NodeJS.Dict<os.NetworkInterfaceInfo[]>;
}

export function systemDesktop(overrides: Partial<Desktop> = {}): Desktop {
  return {
    platform: platformOf(process.platform),
    runner: execRunner,
    env: process.env,
    homedir: os.homedir(),
    sysRoot: '/sys',
    osFacts: () => ({ name: os.type(), release: os.release(), arch: os.arch() }),
    networkInterfaces: () => os.networkInterfaces(),
    ...overrides,
  };
}
