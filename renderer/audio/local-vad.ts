/**
 * Local voice activity detection: Silero VAD (@ricky0123/vad-web on ONNX Runtime's wasm backend)
 * run in this page on the microphone stream of the current turn, so a push-to-talk turn can end
 * when the user stops speaking. The library is imported on first use only (its own chunk, nothing
 * loads while the setting is off) and reads its model, worklet and wasm from this page's origin
 * (`VAD_ASSET_DIR`, copied there by the build): never from a CDN.
 *
 * One detector per page, reused turn after turn on that turn's stream and the engine's
 * AudioContext. Its operations run one at a time (the library misbehaves when `pause` overlaps a
 * `start` still opening), and the events of a turn that has ended are dropped. Failures come back
 * as values with a reason the UI can show.
 */
import type { MicVAD, RealTimeVADOptions } from '@ricky0123/vad-web';
import { VAD_ASSETS, VAD_ASSET_DIR, VAD_MODEL } from './vad-assets.js';

/** Silence after speech that ends the turn (the library's default, 1400 ms, feels slow). */
export const END_SILENCE_MS = 1000;
/** Speech shorter than this is a misfire (a cough, a click): it does not end the turn. */
export const MIN_SPEECH_MS = 400;

/**
 * The page's MediaStream and AudioContext, named through the library's own types so this module
 * (and its tests) also type-check under Node, where there is no DOM.
 */
export type MicStream = Awaited<ReturnType<RealTimeVADOptions['getStream']>>;
export type VadAudioContext = NonNullable<RealTimeVADOptions['audioContext']>;

export interface SpeechEvents {
  /** Speech began (the turn now ends at its end). */
  onSpeechStart?(): void;
  /** Speech that began has stopped for `END_SILENCE_MS`. */
  onSpeechEnd(): void;
  /** A burst too short to be speech: still listening. */
  onMisfire?(): void;
}

/** One turn's listening: `stop` ends it (the stream is the caller's: it is not stopped). */
export interface Listening {
  stop(): Promise<void>;
}

export type ListenResult = { ok: true; listening: Listening } | { ok: false; error: string };

export interface LocalVad {
  /**
   * Listen to `stream` for one turn: its events go to `events` until its `stop`, or until the
   * next `listen` takes over (a stale `stop` then does nothing).
   */
  listen(stream: MicStream, events: SpeechEvents): Promise<ListenResult>;
  destroy(): Promise<void>;
}

export type LoadResult = { ok: true; vad: LocalVad } | { ok: false; error: string };

/** What is used of the library: the shape of `import('@ricky0123/vad-web')` (injected in tests). */
export interface VadLibrary {
  MicVAD: { new: (options: Partial<RealTimeVADOptions>) => Promise<MicVAD> };
}

export interface LoadOptions {
  /** The AudioContext the capture runs in (the detector adds its worklet to it). */
  context: VadAudioContext;
  /** Absolute URL of the folder with the assets; by default `VAD_ASSET_DIR` next to the page. */
  base?: string;
  /** The library (tests pass a fake). */
  library?: () => Promise<VadLibrary>;
  /** For the HEAD requests that check the files are there (tests pass a fake). */
  fetch?: (url: string, init: { method: 'HEAD' }) => Promise<{ ok: boolean; status: number }>;
}

export function errorText(err: unknown): string {
  if (err instanceof Error) return err.message || err.name;
  if (typeof err === 'string') return err;
  return String(err);
}

/** `VAD_ASSET_DIR` resolved against the page (http://127.0.0.1:…/ or app://advent/). */
export function assetBase(): string {
  const page = (globalThis as { document?: { baseURI: string } }).document;
  if (!page) throw new Error('no page to load the voice detector in');
  return new URL(VAD_ASSET_DIR, page.baseURI).href;
}

/** Load the model and get a detector, or the reason it cannot run here. */
export async function loadLocalVad(options: LoadOptions): Promise<LoadResult> {
  const importLibrary = options.library ?? (() => import('@ricky0123/vad-web'));
  let events: SpeechEvents | undefined;
  let stream: MicStream | undefined;
  let mic: MicVAD;
  try {
    const base = options.base ?? assetBase();
    // A missing file would otherwise surface as "protobuf parsing failed" or the like.
    const head = options.fetch ?? ((url, init) => fetch(url, init));
    await Promise.all(
      VAD_ASSETS.map(async ({ name }) => {
        const r = await head(`${base}${name}`, { method: 'HEAD' });
        if (!r.ok) throw new Error(`${name}: HTTP ${r.status}`);
      }),
    );
    const lib = await importLibrary();
    // Added here so a worklet the page cannot load fails now, with the model, not mid-turn.
    await options.context.audioWorklet.addModule(`${base}vad.worklet.bundle.min.js`);
    mic = await lib.MicVAD.new({
      model: VAD_MODEL,
      baseAssetPath: base,
      onnxWASMBasePath: base,
      audioContext: options.context,
      processorType: 'AudioWorklet',
      startOnLoad: false,
      redemptionMs: END_SILENCE_MS,
      minSpeechMs: MIN_SPEECH_MS,
      submitUserSpeechOnPause: false,
      // The turn's own stream, opened by the capture engine; the engine stops it, not the VAD.
      getStream: () => current(stream),
      resumeStream: () => current(stream),
      pauseStream: async () => undefined,
      ortConfig: (ort) => {
        ort.env.logLevel = 'error';
        // No worker threads: the page is not cross-origin isolated, and one thread is plenty.
        ort.env.wasm.numThreads = 1;
        ort.env.wasm.proxy = false;
      },
      onSpeechStart: () => events?.onSpeechStart?.(),
      onSpeechEnd: () => events?.onSpeechEnd(),
      onVADMisfire: () => events?.onMisfire?.(),
    });
  } catch (err) {
    return { ok: false, error: errorText(err) };
  }

  // One operation at a time, in order; a failed one does not block the next.
  let queue: Promise<unknown> = Promise.resolve();
  const serial = <T>(op: () => Promise<T>): Promise<T> => {
    const run = queue.then(op, op);
    queue = run.catch(() => undefined);
    return run;
  };
  let destroyed = false;

  /** The listening whose events are delivered now. */
  let active: Listening | undefined;
  const vad: LocalVad = {
    listen: (s, e) =>
      serial(async (): Promise<ListenResult> => {
        if (destroyed) return { ok: false, error: 'the voice detector was closed' };
        active = undefined;
        events = undefined;
        await mic.pause();
        stream = s;
        try {
          await mic.start();
          if (mic.errored) throw new Error(mic.errored);
        } catch (err) {
          stream = undefined;
          return { ok: false, error: errorText(err) };
        }
        events = e;
        const listening: Listening = {
          stop: () =>
            serial(async () => {
              if (active !== listening) return;
              active = undefined;
              events = undefined;
              stream = undefined;
              if (!destroyed) await mic.pause();
            }),
        };
        active = listening;
        return { ok: true, listening };
      }),
    destroy: () =>
      serial(async () => {
        active = undefined;
        events = undefined;
        stream = undefined;
        if (destroyed) return;
        destroyed = true;
        await mic.destroy().catch(() => undefined);
      }),
  };
  return { ok: true, vad };
}

async function current(stream: MicStream | undefined): Promise<MicStream> {
  if (!stream) throw new Error('no microphone stream to listen to');
  return stream;
}
