/**
 * Where the host finds its parts. The layout is the build's (dist/main/electron/main.js,
 * dist/preload/preload.js, dist/renderer/index.html); icons come from resources/, which
 * electron-builder copies next to app.asar (extraResources) in a packaged app.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export interface HostPaths {
  preload: string;
  renderer: string;
  resources: string;
}

export function hostPaths(
  packaged: boolean,
  resourcesPath: string = process.resourcesPath,
  here: string = path.dirname(fileURLToPath(import.meta.url)),
): HostPaths {
  const dist = path.resolve(here, '..', '..');
  return {
    preload: path.join(dist, 'preload', 'preload.js'),
    renderer: path.join(dist, 'renderer'),
    resources: packaged ? resourcesPath : path.resolve(dist, '..', 'resources'),
  };
}

/**
 * The tray image: a template (monochrome, recoloured by the OS) on macOS; 16 px (with @2x) on
 * Windows; 24 px on Linux, where StatusNotifier hosts draw 22–24 px icons and scale a 16 px one
 * up into a blur.
 */
export function trayIconPath(
  resources: string,
  platform: NodeJS.Platform = process.platform,
): string {
  const name =
    platform === 'darwin'
      ? 'trayTemplate.png'
      : platform === 'linux'
        ? 'trayLinux.png'
        : 'tray.png';
  return path.join(resources, name);
}
