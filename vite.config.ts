import { readFile } from 'node:fs/promises';
import path from 'node:path';
import react from '@vitejs/plugin-react';
import { type Plugin, defineConfig } from 'vite';
import { VAD_ASSETS, VAD_ASSET_DIR } from './renderer/audio/vad-assets.js';

/**
 * Local voice detection's run-time files (the Silero model, vad-web's worklet, ONNX Runtime's
 * loader and wasm), copied from node_modules into dist/renderer/vad/ under their own names: the
 * library fetches them by name from our origin, never from a CDN (renderer/audio/local-vad.ts).
 */
function vadAssets(): Plugin {
  const modules = path.resolve(import.meta.dirname, 'node_modules');
  return {
    name: 'advent-vad-assets',
    apply: 'build',
    async generateBundle() {
      for (const asset of VAD_ASSETS)
        this.emitFile({
          type: 'asset',
          fileName: `${VAD_ASSET_DIR}${asset.name}`,
          source: await readFile(path.join(modules, asset.from)),
        });
    },
  };
}

// The renderer (React UI) is built into dist/renderer and served by both hosts: Electron loads it
// from the app bundle, the headless host serves it on 127.0.0.1. Relative asset paths work in both.
export default defineConfig({
  root: 'renderer',
  base: './',
  plugins: [react(), vadAssets()],
  build: {
    outDir: '../dist/renderer',
    emptyOutDir: true,
    sourcemap: false,
  },
});
