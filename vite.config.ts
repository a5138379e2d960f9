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

const NODE_MODULES = /[\\/]node_modules[\\/]/;
/**
 * Libraries only the lazily loaded local voice detection uses (renderer/audio/local-vad.ts): they
 * stay in that lazy chunk, fetched when the user turns the feature on, not with the page.
 */
const LAZY_LIBRARIES =
  /[\\/]node_modules[\\/](@ricky0123[\\/]vad-web|onnxruntime-web|onnxruntime-common)[\\/]/;

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
    rolldownOptions: {
      output: {
        // Libraries apart from our code: no chunk crosses Vite's 500 kB warning (the main one was
        // 511 kB with everything in it), and a change to the app leaves the libraries' files, and
        // the browser's cached copies of them, as they were.
        codeSplitting: {
          groups: [
            { name: 'react', test: /[\\/]node_modules[\\/](react|react-dom|scheduler)[\\/]/ },
            { name: 'vendor', test: (id) => NODE_MODULES.test(id) && !LAZY_LIBRARIES.test(id) },
          ],
        },
      },
    },
  },
});
