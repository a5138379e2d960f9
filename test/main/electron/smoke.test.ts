import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { copyFile, cp, mkdir, mkdtemp, readFile, rm, symlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// The BUILT main bundle (dist/main/electron/main.js), run end to end under plain Node up to "window
// loaded" and a clean quit, with `electron` replaced by the recording fake in smoke/electron.mjs
// (written to Electron 45's documented contracts; see its header). The app is laid out as in a
// packaged build: <resources>/app.asar/{package.json, dist, node_modules} with the icons beside it.
// The unit tests prove the TypeScript; this proves the bundle the app ships starts. Needs
// `npm run build` first (npm test does).
const root = path.resolve(import.meta.dirname, '..', '..', '..');
const smokeDir = path.join(import.meta.dirname, 'smoke');
const BUILT = [
  'dist/main/electron/main.js',
  'dist/preload/preload.js',
  'dist/renderer/index.html',
] as const;
/** electron-builder.yml extraResources: the icons the running app loads from <resources>. */
const ICONS = [
  'icon.png',
  'tray.png',
  'tray@2x.png',
  'trayLinux.png',
  'trayTemplate.png',
  'trayTemplate@2x.png',
];
const OWN_CHANNELS = [
  'agent:askMicrophone',
  'agent:invoke',
  'agent:pickFolder',
  'agent:setShortcut',
];

type Entry = { type: string } & Record<string, unknown>;
let tmp: string;
let home: string;
let records: Entry[] = [];
let exit: { code: number | null; signal: string | null; stdout: string; stderr: string };

const all = (type: string): Entry[] => records.filter((r) => r.type === type);
function one(type: string): Entry {
  const found = all(type);
  if (found.length !== 1)
    throw new Error(`expected one '${type}', got ${found.length}:\n${exit.stderr}`);
  return found[0] as Entry;
}
const at = (type: string): number => records.findIndex((r) => r.type === type);

beforeAll(async () => {
  const missing = BUILT.filter((f) => !existsSync(path.join(root, f)));
  if (missing.length)
    throw new Error(`run \`npm run build\` first: ${missing.join(', ')} not found`);

  tmp = await mkdtemp(path.join(os.tmpdir(), 'advent-smoke-'));
  home = path.join(tmp, 'home');
  const resources = path.join(tmp, 'resources');
  const appDir = path.join(resources, 'app.asar');
  // What electron-builder.yml's `files` puts in app.asar: built output without maps or the ESM
  // copy of the preload, package.json, and the dependencies.
  await cp(path.join(root, 'dist'), path.join(appDir, 'dist'), {
    recursive: true,
    filter: (src) =>
      !src.endsWith('.map') &&
      !src.startsWith(path.join(root, 'dist', 'main', 'electron', 'preload')),
  });
  await copyFile(path.join(root, 'package.json'), path.join(appDir, 'package.json'));
  await symlink(path.join(root, 'node_modules'), path.join(appDir, 'node_modules'), 'dir');
  const yml = readFileSync(path.join(root, 'electron-builder.yml'), 'utf8');
  for (const icon of ICONS) {
    expect(yml).toContain(`- ${icon}`);
    await copyFile(path.join(root, 'resources', icon), path.join(resources, icon));
  }
  await mkdir(home, { recursive: true });

  const recordFile = path.join(tmp, 'record.jsonl');
  exit = await new Promise((resolve) => {
    execFile(
      process.execPath,
      [
        '--import',
        path.join(smokeDir, 'register.mjs'),
        path.join(appDir, 'dist', 'main', 'electron', 'main.js'),
      ],
      {
        cwd: tmp,
        timeout: 15_000,
        killSignal: 'SIGKILL',
        env: {
          PATH: process.env.PATH,
          HOME: home,
          XDG_DATA_HOME: path.join(home, '.local', 'share'),
          XDG_CONFIG_HOME: path.join(home, '.config'),
          ADVENT_LOG_CONSOLE: '0',
          ADVENT_SMOKE_RECORD: recordFile,
          ADVENT_SMOKE_HOME: home,
          ADVENT_SMOKE_DRIVE: '1',
        },
      },
      (err, stdout, stderr) => {
        const failure = err as (Error & { code?: number; signal?: string }) | null;
        resolve({
          code: failure ? (typeof failure.code === 'number' ? failure.code : null) : 0,
          signal: failure?.signal ?? null,
          stdout,
          stderr,
        });
      },
    );
  });
  records = existsSync(recordFile)
    ? (await readFile(recordFile, 'utf8'))
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as Entry)
    : [];
});

afterAll(async () => {
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

describe('the built main bundle under a fake Electron', () => {
  it('starts and quits by itself, without an error box or a timeout', () => {
    expect(exit, exit.stderr).toMatchObject({ code: 0, signal: null });
    expect(all('timeout')).toEqual([]);
    expect(all('dialog.showErrorBox')).toEqual([]);
    expect(all('did-fail-load')).toEqual([]);
  });

  it('does what must precede ready before it, and the rest after', () => {
    expect(at('app.requestSingleInstanceLock')).toBeLessThan(at('ready'));
    expect(at('app.enableSandbox')).toBeLessThan(at('ready'));
    expect(at('protocol.registerSchemesAsPrivileged')).toBeLessThan(at('ready'));
    expect(at('ready')).toBeLessThan(at('protocol.handle'));
    expect(at('protocol.handle')).toBeLessThan(at('BrowserWindow'));
    expect(at('session.setPermissionRequestHandler')).toBeLessThan(at('BrowserWindow'));
  });

  it('registers app:// as a standard, secure scheme with code cache, and serves it', () => {
    const { schemes } = one('protocol.registerSchemesAsPrivileged') as unknown as {
      schemes: { scheme: string; privileges: Record<string, unknown> }[];
    };
    expect(schemes).toEqual([
      {
        scheme: 'app',
        privileges: expect.objectContaining({
          standard: true,
          secure: true,
          codeCache: true,
          bypassCSP: false,
        }),
      },
    ]);
    expect(one('protocol.handle')).toMatchObject({ scheme: 'app' });
  });

  it('creates one window with the security flags and a preload that exists in app.asar', () => {
    const created = one('BrowserWindow') as unknown as {
      options: { show: boolean; webPreferences: Record<string, unknown> };
      preloadExists: boolean;
      preloadAbsolute: boolean;
    };
    expect(created.options.show).toBe(false);
    expect(created.options.webPreferences).toMatchObject({
      sandbox: true,
      contextIsolation: true,
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      nodeIntegrationInSubFrames: false,
      webviewTag: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      backgroundThrottling: false,
    });
    expect(created.preloadAbsolute && created.preloadExists).toBe(true);
    expect(String(created.options.webPreferences.preload)).toMatch(
      /resources[/\\]app\.asar[/\\]dist[/\\]preload[/\\]preload\.js$/,
    );
    expect(one('web-contents hardened')).toMatchObject({
      windowOpenHandler: true,
      listens: ['will-navigate', 'will-redirect', 'will-frame-navigate', 'will-attach-webview'],
    });
  });

  it('loads the page, its scripts and styles through app://, runs the preload, then shows', () => {
    expect(one('page')).toMatchObject({
      url: 'app://advent/index.html',
      status: 200,
      mime: 'text/html; charset=utf-8',
      csp: expect.stringContaining("default-src 'self'"),
    });
    const subresources = all('subresource');
    expect(subresources.filter((s) => s.tag === 'script').length).toBeGreaterThan(0);
    for (const sub of subresources) {
      expect(sub.status, String(sub.url)).toBe(200);
      if (String(sub.url).endsWith('.js'))
        expect(sub.mime, String(sub.url)).toBe('text/javascript; charset=utf-8');
      if (String(sub.url).endsWith('.css'))
        expect(sub.mime, String(sub.url)).toBe('text/css; charset=utf-8');
    }
    expect(one('preload ran')).toMatchObject({ file: path.join('dist', 'preload', 'preload.js') });
    expect(one('contextBridge.exposeInMainWorld')).toEqual({
      type: 'contextBridge.exposeInMainWorld',
      key: 'agent',
      members: ['askMicrophone', 'invoke', 'on', 'onShortcut', 'pickFolder', 'setShortcut'],
    });
    expect(at('did-finish-load')).toBeLessThan(at('window.show'));
    expect(all('window.show')[0]).toMatchObject({ url: 'app://advent/index.html' });
  });

  it('answers the page through the preload and IPC with the real core', () => {
    const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as {
      version: string;
    };
    expect(one('snapshot')).toMatchObject({
      version: pkg.version,
      host: 'electron',
      secrets: 'os-keychain',
      connections: 0,
    });
  });

  it('serves every renderer file with a type the browser accepts under nosniff', () => {
    const served = all('served') as unknown as { path: string; status: number; mime: string }[];
    expect(served.length).toBeGreaterThan(5);
    const expected: Record<string, string> = {
      '.html': 'text/html; charset=utf-8',
      '.js': 'text/javascript; charset=utf-8',
      '.mjs': 'text/javascript; charset=utf-8',
      '.css': 'text/css; charset=utf-8',
      '.wasm': 'application/wasm',
      '.onnx': 'application/octet-stream',
      '.json': 'application/json; charset=utf-8',
      '.svg': 'image/svg+xml',
      '.png': 'image/png',
    };
    for (const file of served) {
      expect(file.status, file.path).toBe(200);
      const want = expected[path.extname(file.path)];
      expect(want, `no expected type for ${file.path}`).toBeDefined();
      expect(file.mime, file.path).toBe(want);
    }
  });

  it('leaves only its own guarded IPC channels open (electron-log’s is removed)', () => {
    expect(one('open channels')).toMatchObject({ handle: OWN_CHANNELS, on: [] });
  });

  it('as a packaged app: its own menu, the installer’s AppUserModelID, a 24 px Linux tray icon', () => {
    const menu = one('application menu') as unknown as { roles: string[] };
    expect(menu.roles).toEqual(expect.arrayContaining(['editMenu', 'windowMenu']));
    for (const role of ['reload', 'forceReload', 'toggleDevTools', 'viewMenu'])
      expect(menu.roles).not.toContain(role);
    expect(one('app.setAppUserModelId')).toMatchObject({ id: 'ai.advent.agent' });
    if (process.platform === 'linux')
      expect(one('Tray')).toMatchObject({ image: 'trayLinux.png', empty: false });
  });

  it('quits cleanly: the goodbye first, then the tray and the window go, then the process', async () => {
    // The user's quit is held (before-quit prevented) while the host says goodbye; its own quit
    // afterwards goes through and closes the window.
    const userQuit = at('app.quit');
    expect(userQuit).toBeGreaterThan(at('snapshot'));
    expect(at('before-quit prevented')).toBeGreaterThan(userQuit);
    expect(at('tray.destroy')).toBeGreaterThan(userQuit);
    expect(all('app.quit')).toHaveLength(2);
    expect(at('window.closed')).toBeGreaterThan(at('before-quit prevented'));
    expect(records.at(-1)?.type).toBe('quit');
    const log = await readFile(
      path.join(home, '.config', 'Advent Agent', 'logs', 'main.log'),
      'utf8',
    );
    expect(log).toMatch(/Advent Agent \S+ started/);
    expect(log).toContain('closing connections');
  });
});
