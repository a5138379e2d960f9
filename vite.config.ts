import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// The renderer (React UI) is built into dist/renderer and served by both hosts: Electron loads it
// from the app bundle, the headless host serves it on 127.0.0.1. Relative asset paths work in both.
export default defineConfig({
  root: 'renderer',
  base: './',
  plugins: [react()],
  build: {
    outDir: '../dist/renderer',
    emptyOutDir: true,
    sourcemap: false,
  },
});
