import { readFileSync } from 'node:fs';
import path from 'node:path';
import { LinuxTargetHelper } from 'app-builder-lib/out/targets/LinuxTargetHelper.js';
import { getConfig, validateConfiguration } from 'app-builder-lib/out/util/config/config.js';
import { DebugLogger } from 'builder-util';
import type { Configuration } from 'electron-builder';
import { beforeAll, describe, expect, it } from 'vitest';

// On Linux the desktop knows an app by its desktop-file identity. Electron announces
// package.json's `desktopName` (lib/browser/init.ts: `app.setDesktopName(packageJson.desktopName)`,
// else `${app.name}.desktop`, here "Advent Agent.desktop") as its Wayland app_id / X11 WM_CLASS and
// to the XDG portals; the GlobalShortcuts portal refuses an app whose identity matches no installed
// .desktop file, and a window whose WM_CLASS matches no StartupWMClass shows up beside its launcher
// entry instead of in it. electron-builder's `linux.syncDesktopName` (app-builder-lib scheme.json)
// names the installed file after desktopName so the two agree.
const root = path.resolve(import.meta.dirname, '..', '..', '..');
const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as {
  productName: string;
  description: string;
  desktopName?: string;
};
let config: Configuration;
let helper: LinuxTargetHelper;

beforeAll(async () => {
  config = await getConfig(root, path.join(root, 'electron-builder.yml'), null);
  // The parts of electron-builder's Packager that its Linux helper reads.
  const packager = {
    platformSpecificBuildOptions: config.linux,
    info: { metadata: pkg },
    executableName: config.linux?.executableName,
    appInfo: {
      productName: pkg.productName,
      sanitizedProductName: pkg.productName,
      description: pkg.description,
    },
    fileAssociations: [],
    config,
  };
  helper = new LinuxTargetHelper(packager as never);
});

describe('the Linux desktop identity', () => {
  it('is valid electron-builder configuration', async () => {
    expect(config.linux?.syncDesktopName).toBe(true);
    await expect(validateConfiguration(config, new DebugLogger(false))).resolves.toBeUndefined();
  });

  it('the installed .desktop file is the one Electron announces', () => {
    expect(pkg.desktopName).toBe('advent-agent.desktop');
    // FpmTarget installs /usr/share/applications/<getDesktopFileName()>.desktop (the .deb);
    // the AppImage embeds the same name.
    expect(`${helper.getDesktopFileName()}.desktop`).toBe(pkg.desktopName);
  });

  it('StartupWMClass matches the windows’ class, so they join their launcher entry', async () => {
    const entry = await helper.computeDesktopEntry(config.linux ?? {});
    expect(entry).toMatch(/^StartupWMClass=advent-agent$/m);
    expect(entry).toMatch(/^Name=Advent Agent$/m);
  });
});
