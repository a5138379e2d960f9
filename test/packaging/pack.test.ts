import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { extractFile, listPackage } from '@electron/asar';
import { FuseV1Options, getCurrentFuseWire } from '@electron/fuses';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VAD_ASSETS, VAD_ASSET_DIR } from '../../renderer/audio/vad-assets.js';

// `electron-builder --dir` for real, offline: the Electron binary is replaced by a stub that
// carries the fuse wire (the sentinel @electron/fuses looks for), so packing, app.asar and the
// fuse flipping all run exactly as in a release build. Needs `npm run build` first (npm test does).
const root = path.resolve(import.meta.dirname, '..', '..');
const run = promisify(execFile);
const SENTINEL = 'dL7pKGdnNz796PbbjQWNKmHXBZaB9tsX';
/** Fuse states as bytes on the wire (@electron/fuses does not export its FuseState enum). */
const FuseState = { DISABLE: '0'.charCodeAt(0), ENABLE: '1'.charCodeAt(0) } as const;
const BUILT = [
  'dist/main/electron/main.js',
  'dist/preload/preload.js',
  'dist/renderer/index.html',
  // The demo server lives outside the core (sim/) and is injected by the host; it still ships.
  'dist/sim/demo-server.js',
  'dist/sim/advent/server.js',
] as const;

let tmp: string;
let appDir: string;
let asarPath: string;
let files: string[];

beforeAll(async () => {
  const missing = BUILT.filter((f) => !existsSync(path.join(root, f)));
  if (missing.length)
    throw new Error(`run \`npm run build\` first: ${missing.join(', ')} not found`);

  tmp = await mkdtemp(path.join(os.tmpdir(), 'advent-pack-'));
  const stub = path.join(tmp, 'electron-dist');
  await mkdir(stub);
  // A shell script carrying a fuse wire of 8 fuses in Electron's default states (RunAsNode,
  // NODE_OPTIONS, --inspect and file:// privileges on; cookie encryption, asar integrity and
  // asar-only off), so every fuse the config sets must really be flipped for the test to pass.
  await writeFile(
    path.join(stub, 'electron'),
    Buffer.concat([
      Buffer.from('#!/bin/sh\necho "stub Electron for packaging tests"\nexit 1\n'),
      Buffer.from(SENTINEL, 'ascii'),
      Buffer.from([1, 8]),
      Buffer.from('10110001', 'ascii'),
    ]),
  );
  await chmod(path.join(stub, 'electron'), 0o755);

  const out = path.join(tmp, 'out');
  await run(
    process.execPath,
    [
      path.join(root, 'node_modules', 'electron-builder', 'cli.js'),
      '--linux',
      'dir',
      '--publish',
      'never',
      `-c.electronDist=${stub}`,
      `-c.directories.output=${out}`,
    ],
    {
      cwd: root,
      env: {
        ...process.env,
        CSC_IDENTITY_AUTO_DISCOVERY: 'false',
        ELECTRON_SKIP_BINARY_DOWNLOAD: '1',
        ELECTRON_BUILDER_OFFLINE: 'true',
      },
      maxBuffer: 16 * 1024 * 1024,
    },
  );
  const unpacked = (await readdir(out)).find((d) => /^linux(-\w+)?-unpacked$/.test(d));
  if (!unpacked) throw new Error(`no linux-unpacked folder in ${out}`);
  appDir = path.join(out, unpacked);
  asarPath = path.join(appDir, 'resources', 'app.asar');
  files = listPackage(asarPath, { isPack: false }).map((f) => f.split(path.sep).join('/'));
}, 180_000);

afterAll(async () => {
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

describe('electron-builder --dir', () => {
  it('packs app.asar with the built main, preload, renderer and package.json', () => {
    for (const file of [...BUILT, 'package.json']) expect(files, file).toContain(`/${file}`);
    // Local voice detection works offline: its model and runtime travel inside the app.
    for (const { name } of VAD_ASSETS)
      expect(files, name).toContain(`/dist/renderer/${VAD_ASSET_DIR}${name}`);
  });

  it('leaves out sources, maps, tests, docs and dev-only packages', () => {
    const own = files.filter((f) => !f.startsWith('/node_modules/'));
    expect(own.filter((f) => /\.(ts|tsx|mts|cts)$/.test(f))).toEqual([]);
    expect(files.filter((f) => /\.(ts|tsx|map)$/.test(f))).toEqual([]);
    expect(
      own.filter((f) => /^\/(test|docs|app|main|renderer|scripts|src|resources)(\/|$)/.test(f)),
    ).toEqual([]);
    expect(files.filter((f) => /\/(test|tests|__tests__)\//.test(f))).toEqual([]);
    const packages = new Set(
      files
        .filter((f) => f.startsWith('/node_modules/'))
        .map((f) =>
          f
            .split('/')
            .slice(2, f.startsWith('/node_modules/@') ? 4 : 3)
            .join('/'),
        ),
    );
    for (const dev of ['electron', 'electron-builder', 'vitest', 'typescript', 'react', 'vite'])
      expect(packages.has(dev), dev).toBe(false);
    for (const dep of ['ajv', 'ws', 'electron-log', '@sinclair/typebox'])
      expect(packages.has(dep), dep).toBe(true);
  });

  it('carries the MCP SDK the hub imports servers with, and the utility-process shim', () => {
    for (const sdk of [
      'client/index.js',
      'client/stdio.js',
      'client/streamableHttp.js',
      'client/sse.js',
      'types.js',
    ])
      expect(files, sdk).toContain(`/node_modules/@modelcontextprotocol/sdk/dist/esm/${sdk}`);
    expect(files).toContain('/dist/main/electron/mcp-launcher.js');
    expect(files).toContain('/dist/main/electron/mcp-stdio-shim.js');
    expect(files).toContain('/dist/app/services/mcp/hub.js');
    // The real servers are test peers only.
    for (const dev of ['server-filesystem', 'server-memory', 'server-everything', 'inspector'])
      expect(
        files.some((f) => f.startsWith(`/node_modules/@modelcontextprotocol/${dev}/`)),
        dev,
      ).toBe(false);
  });

  it('declares the Electron entry point the app.asar holds', () => {
    const pkg = JSON.parse(extractFile(asarPath, 'package.json').toString('utf8')) as {
      main?: string;
    };
    expect(pkg.main).toBe('dist/main/electron/main.js');
  });

  it('ships a CommonJS preload that requires nothing but electron', () => {
    const preload = extractFile(asarPath, 'dist/preload/preload.js').toString('utf8');
    const required = [...preload.matchAll(/require\(\s*["']([^"']+)["']\s*\)/g)].map((m) => m[1]);
    expect(required).toEqual(['electron']);
    expect(preload).not.toMatch(/^\s*(import|export)\s/m);
    expect(preload).toContain('exposeInMainWorld');
  });

  it('puts the window and tray icons next to app.asar', () => {
    for (const icon of ['icon.png', 'tray.png', 'tray@2x.png', 'trayTemplate.png'])
      expect(existsSync(path.join(appDir, 'resources', icon)), icon).toBe(true);
  });

  it('flips the fuses on the packed binary', async () => {
    const wire = await getCurrentFuseWire(path.join(appDir, 'advent-agent'));
    const state = (option: FuseV1Options): number | undefined =>
      (wire as unknown as Record<number, number>)[option];
    expect(state(FuseV1Options.RunAsNode)).toBe(FuseState.DISABLE);
    expect(state(FuseV1Options.EnableNodeOptionsEnvironmentVariable)).toBe(FuseState.DISABLE);
    expect(state(FuseV1Options.EnableNodeCliInspectArguments)).toBe(FuseState.DISABLE);
    expect(state(FuseV1Options.EnableCookieEncryption)).toBe(FuseState.ENABLE);
    expect(state(FuseV1Options.EnableEmbeddedAsarIntegrityValidation)).toBe(FuseState.ENABLE);
    expect(state(FuseV1Options.OnlyLoadAppFromAsar)).toBe(FuseState.ENABLE);
    expect(state(FuseV1Options.GrantFileProtocolExtraPrivileges)).toBe(FuseState.DISABLE);
  });
});
