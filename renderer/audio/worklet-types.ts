/** The AudioWorkletGlobalScope names the DOM lib does not declare (used by the two worklets). */
export interface WorkletProcessor {
  readonly port: MessagePort;
  process(inputs: Float32Array[][], outputs: Float32Array[][]): boolean;
}

export interface WorkletScope {
  sampleRate: number;
  currentFrame: number;
  AudioWorkletProcessor: new () => { readonly port: MessagePort };
  registerProcessor(name: string, ctor: new () => WorkletProcessor): void;
}

export const CAPTURE_PROCESSOR = 'advent-capture';
export const PLAYBACK_PROCESSOR = 'advent-playback';
/** What the core takes: 16 kHz s16le mono in 20 ms chunks (protocol §6.2). */
export const CAPTURE_RATE = 16_000;
export const CHUNK_SAMPLES = 320;
