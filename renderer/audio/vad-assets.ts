/**
 * The files local voice detection loads at run time, copied by the build (vite.config.ts) from
 * node_modules into `VAD_ASSET_DIR` next to index.html, under their own names: @ricky0123/vad-web
 * asks for them by name under `baseAssetPath`, and ONNX Runtime for its wasm under
 * `onnxWASMBasePath`. Nothing comes from a CDN. Plain data: vite.config.ts imports it under Node.
 */
export const VAD_ASSET_DIR = 'vad/';

/** The Silero model vad-web loads by default ('legacy') and its audio worklet. */
export const VAD_MODEL = 'legacy' as const;

export const VAD_ASSETS: readonly { from: string; name: string }[] = [
  { from: '@ricky0123/vad-web/dist/silero_vad_legacy.onnx', name: 'silero_vad_legacy.onnx' },
  { from: '@ricky0123/vad-web/dist/vad.worklet.bundle.min.js', name: 'vad.worklet.bundle.min.js' },
  // ONNX Runtime's CPU (wasm) backend: its loader (imported at run time) and its binary.
  {
    from: 'onnxruntime-web/dist/ort-wasm-simd-threaded.mjs',
    name: 'ort-wasm-simd-threaded.mjs',
  },
  {
    from: 'onnxruntime-web/dist/ort-wasm-simd-threaded.wasm',
    name: 'ort-wasm-simd-threaded.wasm',
  },
];
