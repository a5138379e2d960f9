import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { getConfig, validateConfiguration } from 'app-builder-lib/out/util/config/config.js';
import { DebugLogger } from 'builder-util';
import type { Configuration } from 'electron-builder';
import { beforeAll, describe, expect, it } from 'vitest';

// electron-builder.yml checked by electron-builder itself: its own loader and its own JSON schema
// (app-builder-lib/scheme.json via validateConfiguration), the same code a real build runs first.
const root = path.resolve(import.meta.dirname, '..', '..');
let config: Configuration;

beforeAll(async () => {
  config = await getConfig(root, path.join(root, 'electron-builder.yml'), null);
});

describe('electron-builder.yml', () => {
  it("passes electron-builder's own schema validation", async () => {
    await expect(validateConfiguration(config, new DebugLogger(false))).resolves.toBeUndefined();
  });

  it('the validator really runs: a wrong option is refused', async () => {
    await expect(
      validateConfiguration({ ...config, asarr: true } as Configuration, new DebugLogger(false)),
    ).rejects.toThrow(/configuration/i);
    await expect(
      validateConfiguration(
        {
          ...config,
          electronFuses: { ...config.electronFuses, runAsNode: 'no' },
        } as unknown as Configuration,
        new DebugLogger(false),
      ),
    ).rejects.toThrow(/runAsNode/);
  });

  it('names the app and packs into release/ with resources/ as build resources', () => {
    expect(config.appId).toBe('ai.advent.agent');
    expect(config.productName).toBe('Advent Agent');
    expect(config.directories).toMatchObject({ buildResources: 'resources', output: 'release' });
    expect(config.asar).toBe(true);
  });

  it('ships only built output: no sources, maps, tests or docs', () => {
    // The loader normalises `files` to [{filter: [...]}]; read the patterns either way.
    const files = ([config.files].flat() as (string | { filter?: string | string[] })[]).flatMap(
      (f) => (typeof f === 'string' ? [f] : [f.filter ?? []].flat()),
    );
    expect(files).toEqual(expect.arrayContaining(['dist/**', 'package.json']));
    for (const exclusion of ['!**/*.map', '!**/*.ts', '!test/**', '!docs/**'])
      expect(files).toContain(exclusion);
    expect(
      files.some((f) => f.startsWith('!') && f.includes('{app,main,renderer,scripts,sim,src}')),
    ).toBe(true);
  });

  it('flips the Electron fuses that close the known side doors', () => {
    expect(config.electronFuses).toMatchObject({
      runAsNode: false,
      enableNodeOptionsEnvironmentVariable: false,
      enableNodeCliInspectArguments: false,
      enableCookieEncryption: true,
      enableEmbeddedAsarIntegrityValidation: true,
      onlyLoadAppFromAsar: true,
    });
  });

  it('targets AppImage + deb, NSIS and a hardened-runtime dmg', () => {
    expect(config.linux).toMatchObject({ target: ['AppImage', 'deb'], category: 'Utility' });
    expect(config.win).toMatchObject({ target: ['nsis'] });
    expect(config.mac).toMatchObject({
      target: ['dmg'],
      hardenedRuntime: true,
      entitlements: 'resources/entitlements.mac.plist',
      entitlementsInherit: 'resources/entitlements.mac.plist',
      extendInfo: {
        NSMicrophoneUsageDescription:
          'Advent Agent uses the microphone when you talk to the assistant.',
      },
    });
  });

  it('references only files that exist', () => {
    const referenced = [
      config.linux?.icon,
      config.win?.icon,
      config.mac?.icon,
      config.mac?.entitlements,
      config.mac?.entitlementsInherit,
    ];
    for (const file of referenced) {
      expect(typeof file).toBe('string');
      expect(existsSync(path.join(root, file as string)), file as string).toBe(true);
    }
    const extra = (config.extraResources as { from: string; filter: string[] }[])[0];
    for (const name of extra?.filter ?? [])
      expect(existsSync(path.join(root, extra?.from ?? '', name)), name).toBe(true);
  });

  it('the macOS entitlements allow the microphone and what V8 needs, nothing more', () => {
    const plist = readFileSync(path.join(root, 'resources', 'entitlements.mac.plist'), 'utf8');
    const keys = [...plist.matchAll(/<key>([^<]+)<\/key>\s*<true\/>/g)].map((m) => m[1]);
    expect(keys.sort()).toEqual([
      'com.apple.security.cs.allow-jit',
      'com.apple.security.cs.allow-unsigned-executable-memory',
      'com.apple.security.device.audio-input',
    ]);
  });
});
