/**
 * Local voice detection without a browser: the vad-web wrapper (renderer/audio/local-vad.ts) on a
 * fake library, the voice controller ending push-to-talk turns on its events, the Settings switch
 * (renderer/features/voice/local-vad-setting.ts), and the build and CSP facts it relies on.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { contentSecurityPolicy } from '../../main/headless/static-files.js';
import {
  END_SILENCE_MS,
  type LoadOptions,
  type MicStream,
  type VadLibrary,
  loadLocalVad,
} from '../../renderer/audio/local-vad.js';
import {
  type Capture,
  type SpeechDetectorResult,
  type VoiceEngine,
  devicePrefs,
} from '../../renderer/audio/shared.js';
import { VAD_ASSETS, VAD_ASSET_DIR, VAD_MODEL } from '../../renderer/audio/vad-assets.js';
import { VoiceController } from '../../renderer/features/voice/controller.js';
import {
  localVadFailed,
  setLocalVad,
  useLocalVad,
} from '../../renderer/features/voice/local-vad-setting.js';
import { useVoice } from '../../renderer/store/voice.js';
import { fakeBridge } from './fake-bridge.js';
import { FakeClock } from '../helpers/fake-clock.js';

const repo = path.resolve(import.meta.dirname, '..', '..');
const tick = () => new Promise((r) => setTimeout(r, 0));

// --- a fake @ricky0123/vad-web ----------------------------------------------------------------

type Options = Parameters<VadLibrary['MicVAD']['new']>[0];

/** The MicVAD surface the wrapper uses, recording what it is asked to do. */
function fakeLibrary(opts: { failNew?: Error; failStart?: Error; erroredOnStart?: string } = {}) {
  const log: string[] = [];
  let options: Options = {};
  let listening = false;
  let startGate: Promise<void> = Promise.resolve();
  const mic = {
    errored: null as string | null,
    start: async () => {
      log.push('start');
      await startGate;
      if (opts.failStart) throw opts.failStart;
      if (opts.erroredOnStart) {
        mic.errored = opts.erroredOnStart;
        return;
      }
      const stream = await (listening
        ? options.resumeStream!(undefined as never)
        : options.getStream!());
      log.push(`listening to ${(stream as unknown as { id: string }).id}`);
      listening = true;
    },
    pause: async () => {
      if (!listening) return;
      listening = false;
      await options.pauseStream!(undefined as never);
      log.push('pause');
    },
    destroy: async () => {
      log.push('destroy');
    },
  };
  const library: VadLibrary = {
    MicVAD: {
      new: async (o) => {
        options = o;
        log.push('new');
        if (opts.failNew) throw opts.failNew;
        return mic as never;
      },
    },
  };
  const added: string[] = [];
  const context = {
    audioWorklet: {
      addModule: async (url: string) => {
        added.push(url);
      },
    },
  } as unknown as LoadOptions['context'];
  return {
    library,
    context,
    log,
    added,
    options: () => options,
    /** Hold the next `start` until the returned function is called. */
    holdStart: () => {
      let open!: () => void;
      startGate = new Promise<void>((r) => (open = r));
      return open;
    },
    /** The library's events, as it would fire them. */
    fire: {
      start: () => void options.onSpeechStart?.(),
      end: () => void options.onSpeechEnd?.(new Float32Array(0)),
      misfire: () => void options.onVADMisfire?.(),
    },
  };
}

/** HEAD answers: every asset there, unless named in `missing`. */
const heads: string[] = [];
const present =
  (missing: string[] = []): LoadOptions['fetch'] =>
  async (url) => {
    heads.push(url);
    return missing.some((m) => url.endsWith(m))
      ? { ok: false, status: 404 }
      : { ok: true, status: 200 };
  };

const stream = (id: string) => ({ id }) as unknown as MicStream;
const BASE = 'http://127.0.0.1:1234/vad/';

/** A detector loaded over the fake library (with `options`) and every asset present. */
async function loaded(options?: Parameters<typeof fakeLibrary>[0]) {
  const f = fakeLibrary(options);
  const r = await loadLocalVad({
    context: f.context,
    base: BASE,
    library: async () => f.library,
    fetch: present(),
  });
  if (!r.ok) throw new Error(r.error);
  return { f, r };
}

describe('local VAD wrapper (vad-web on a fake)', () => {
  it('loads the default model from our own folder, single-threaded, without opening a stream', async () => {
    const f = fakeLibrary();
    const r = await loadLocalVad({
      context: f.context,
      base: BASE,
      library: async () => f.library,
      fetch: present(),
    });
    expect(r.ok).toBe(true);
    const o = f.options();
    expect(o).toMatchObject({
      model: VAD_MODEL,
      baseAssetPath: BASE,
      onnxWASMBasePath: BASE,
      audioContext: f.context,
      processorType: 'AudioWorklet',
      startOnLoad: false,
      redemptionMs: END_SILENCE_MS,
    });
    expect(f.added).toEqual([`${BASE}vad.worklet.bundle.min.js`]);
    // Every file was checked first, at our own folder.
    for (const a of VAD_ASSETS) expect(heads).toContain(`${BASE}${a.name}`);
    const ort = { env: { logLevel: 'warning', wasm: { numThreads: 4, proxy: true } } };
    o.ortConfig!(ort as never);
    expect(ort.env).toEqual({ logLevel: 'error', wasm: { numThreads: 1, proxy: false } });
    expect(f.log).toEqual(['new']);
  });

  it('load failures come back as values with the reason', async () => {
    const nowhere = fakeLibrary();
    expect(
      await loadLocalVad({ context: nowhere.context, library: async () => nowhere.library }),
    ).toEqual({ ok: false, error: 'no page to load the voice detector in' });
    const broken = fakeLibrary({ failNew: new Error('failed to load model') });
    expect(
      await loadLocalVad({
        context: broken.context,
        base: BASE,
        library: async () => broken.library,
        fetch: present(),
      }),
    ).toEqual({ ok: false, error: 'failed to load model' });
    const f = fakeLibrary();
    expect(
      await loadLocalVad({
        context: f.context,
        base: BASE,
        library: () => Promise.reject(new TypeError('Failed to fetch dynamically imported module')),
        fetch: present(),
      }),
    ).toEqual({ ok: false, error: 'Failed to fetch dynamically imported module' });
    // A file missing from the build says which, instead of what the model parser makes of a 404.
    const g = fakeLibrary();
    expect(
      await loadLocalVad({
        context: g.context,
        base: BASE,
        library: async () => g.library,
        fetch: present(['silero_vad_legacy.onnx']),
      }),
    ).toEqual({ ok: false, error: 'silero_vad_legacy.onnx: HTTP 404' });
    expect(g.log).toEqual([]);
  });

  it('listens to the turn’s stream, delivers its events until stopped, and never stops the stream', async () => {
    const { f, r } = await loaded();
    const heard: string[] = [];
    const one = await r.vad.listen(stream('mic-1'), {
      onSpeechStart: () => heard.push('start'),
      onSpeechEnd: () => heard.push('end'),
      onMisfire: () => heard.push('misfire'),
    });
    if (!one.ok) throw new Error(one.error);
    f.fire.start();
    f.fire.misfire();
    f.fire.end();
    await one.listening.stop();
    f.fire.end(); // late: after the turn
    expect(heard).toEqual(['start', 'misfire', 'end']);

    // The next turn reuses the detector on its own stream.
    const two = await r.vad.listen(stream('mic-2'), { onSpeechEnd: () => heard.push('end 2') });
    expect(two.ok).toBe(true);
    f.fire.end();
    expect(heard.at(-1)).toBe('end 2');
    expect(f.log).toEqual([
      'new',
      'start',
      'listening to mic-1',
      'pause',
      'start',
      'listening to mic-2',
    ]);
    // pauseStream is ours: it resolves without touching the stream (the engine stops it).
    expect(await f.options().pauseStream!(stream('mic-2'))).toBeUndefined();
  });

  it('runs one operation at a time: a new turn or closing waits for a slow start', async () => {
    const { f, r } = await loaded();
    const open = f.holdStart();
    const one = r.vad.listen(stream('mic-1'), { onSpeechEnd: () => undefined });
    await tick();
    const two = r.vad.listen(stream('mic-2'), { onSpeechEnd: () => undefined });
    const closed = r.vad.destroy();
    await tick();
    expect(f.log).toEqual(['new', 'start']);
    open();
    expect((await one).ok).toBe(true);
    expect((await two).ok).toBe(true);
    await closed;
    expect(f.log).toEqual([
      'new',
      'start',
      'listening to mic-1',
      'pause',
      'start',
      'listening to mic-2',
      'destroy',
    ]);
    expect(await r.vad.listen(stream('mic-3'), { onSpeechEnd: () => undefined })).toEqual({
      ok: false,
      error: 'the voice detector was closed',
    });
  });

  it('a stale stop does not end the listening that replaced it', async () => {
    const { f, r } = await loaded();
    const heard: string[] = [];
    const one = await r.vad.listen(stream('mic-1'), { onSpeechEnd: () => heard.push('one') });
    const two = await r.vad.listen(stream('mic-2'), { onSpeechEnd: () => heard.push('two') });
    if (!one.ok || !two.ok) throw new Error('not listening');
    await one.listening.stop();
    f.fire.end();
    expect(heard).toEqual(['two']);
    expect(f.log.at(-1)).toBe('listening to mic-2');
  });

  it('a start that fails (or leaves the library errored) is a value too', async () => {
    const { r } = await loaded({ failStart: new Error('AudioWorklet: blocked') });
    expect(await r.vad.listen(stream('mic-1'), { onSpeechEnd: () => undefined })).toEqual({
      ok: false,
      error: 'AudioWorklet: blocked',
    });
    const { r: s } = await loaded({ erroredOnStart: 'Audio context is null' });
    expect(await s.vad.listen(stream('mic-1'), { onSpeechEnd: () => undefined })).toEqual({
      ok: false,
      error: 'Audio context is null',
    });
  });
});

// --- the controller with local VAD ------------------------------------------------------------

/** An engine whose captures offer local VAD: `speechEnd()` fires the current watch's end. */
function vadEngine(opts: { watch?: 'ok' | 'fail' | 'none' } = {}) {
  let chunkSink: ((pcm: ArrayBuffer) => void) | undefined;
  let onEnd: (() => void) | undefined;
  const watches: string[] = [];
  const engine: VoiceEngine = {
    idle: true,
    onPlaybackState: undefined,
    openCapture: async (onChunk): Promise<Capture> => {
      chunkSink = onChunk;
      const capture: Capture = {
        stop: async () => {
          chunkSink = undefined;
        },
      };
      if (opts.watch !== 'none')
        capture.watchSpeech = async (end) => {
          watches.push('watch');
          if (opts.watch === 'fail') return { ok: false, error: 'no model here' };
          onEnd = end;
          return {
            ok: true,
            watch: {
              stop: async () => {
                watches.push('stop');
                onEnd = undefined;
              },
            },
          };
        };
      return capture;
    },
    play: async () => undefined,
    flush: () => undefined,
    setOutput: async () => undefined,
  };
  return {
    engine,
    watches,
    chunk: () => chunkSink?.(new ArrayBuffer(640)),
    speechEnd: () => onEnd?.(),
  };
}

describe('voice controller with local VAD', () => {
  let clock = new FakeClock();
  /** Time moves to `ms` since the test began, firing the timers due on the way. */
  const at = (ms: number) => clock.advance(ms - clock.now());
  beforeEach(() => {
    clock = new FakeClock();
    useVoice.setState({ phase: 'idle', level: 0, problem: undefined, handsFree: false });
    useLocalVad.setState({ on: true, loading: false, error: undefined, notice: false });
  });
  afterEach(() => {
    useLocalVad.setState({ on: false, loading: false, error: undefined, notice: false });
  });

  it('a click starts a turn that the end of speech sends, exactly as a release would', async () => {
    const b = fakeBridge();
    const e = vadEngine();
    const v = new VoiceController(e.engine, clock);
    v.attach(b.bridge);
    await v.press();
    at(120);
    await v.release(); // a click: not a slip to drop, the turn keeps listening
    await tick();
    expect(b.methods()).toEqual([]);
    expect(useVoice.getState().phase).toBe('listening');
    at(300); // as long as a press: the turn starts
    await tick();
    expect(b.methods()).toEqual(['voiceStart']);
    e.chunk();
    e.chunk();
    at(2400);
    e.speechEnd();
    await tick();
    await tick();
    expect(b.methods()).toEqual(['voiceStart', 'voiceEnd']);
    expect(b.sent.length).toBe(2);
    expect(useVoice.getState().phase).toBe('thinking');
    expect(e.watches).toEqual(['watch', 'stop']);
    expect(v.busy).toBe(false);
  });

  it('holding still works: the release sends and the detector stops; its late end does nothing', async () => {
    const b = fakeBridge();
    const e = vadEngine();
    const v = new VoiceController(e.engine, clock);
    v.attach(b.bridge);
    await v.press();
    await tick();
    at(1500);
    await v.release();
    await tick();
    expect(b.methods()).toEqual(['voiceStart', 'voiceEnd']);
    expect(e.watches).toEqual(['watch', 'stop']);
    e.speechEnd();
    await tick();
    expect(b.methods()).toEqual(['voiceStart', 'voiceEnd']);
  });

  it('the next press sends a clicked turn (and a double click sends nothing)', async () => {
    const b = fakeBridge();
    const e = vadEngine();
    const v = new VoiceController(e.engine, clock);
    v.attach(b.bridge);
    await v.press();
    at(100);
    await v.release();
    at(3000);
    await v.press(); // second click, down: sends
    await v.release(); // its up: nothing more
    expect(b.methods()).toEqual(['voiceStart', 'voiceEnd']);

    at(10_000);
    await v.press();
    at(10_100);
    await v.release();
    at(10_200);
    await v.press();
    expect(b.methods()).toEqual(['voiceStart', 'voiceEnd']);
    expect(b.sent).toEqual([]);
    expect(useVoice.getState().phase).toBe('idle');
  });

  it('speech that ends before the server gave the turn a task id is sent once it does', async () => {
    const b = fakeBridge();
    const e = vadEngine();
    const v = new VoiceController(e.engine, clock);
    v.attach(b.bridge);
    const open = b.holdStart();
    const pressing = v.press();
    await tick();
    await tick();
    e.chunk();
    at(2000);
    e.speechEnd();
    await tick();
    expect(b.methods()).toEqual(['voiceStart']);
    open();
    await pressing;
    await tick();
    expect(b.methods()).toEqual(['voiceStart', 'voiceEnd']);
    expect(b.sent.length).toBe(1);
  });

  it('off: no detector, and a click is a slip as before', async () => {
    useLocalVad.setState({ on: false });
    const b = fakeBridge();
    const e = vadEngine();
    const v = new VoiceController(e.engine, clock);
    v.attach(b.bridge);
    await v.press();
    at(100);
    await v.release();
    expect(b.methods()).toEqual([]);
    expect(e.watches).toEqual([]);
  });

  it('hands-free turns leave the end to the server', async () => {
    const b = fakeBridge();
    const e = vadEngine();
    const v = new VoiceController(e.engine, clock);
    v.attach(b.bridge);
    await v.setHandsFree(true);
    await tick();
    expect(b.methods()).toEqual(['voiceStart']);
    expect(e.watches).toEqual([]);
    await v.setHandsFree(false);
  });

  it('a detector that cannot run turns the setting off with the reason; the turn goes on until sent', async () => {
    const b = fakeBridge();
    const e = vadEngine({ watch: 'fail' });
    const v = new VoiceController(e.engine, clock);
    v.attach(b.bridge);
    const warn = console.warn;
    console.warn = () => undefined;
    try {
      await v.press();
      at(100);
      await v.release();
      await tick();
    } finally {
      console.warn = warn;
    }
    expect(useLocalVad.getState()).toMatchObject({
      on: false,
      error: 'no model here',
      notice: true,
    });
    expect(useVoice.getState().phase).toBe('listening');
    at(2000);
    await v.press();
    expect(b.methods()).toEqual(['voiceStart', 'voiceEnd']);
    // The next turn is an ordinary hold-to-talk one, and the mic's notice is cleared.
    at(5000);
    await v.press();
    expect(useLocalVad.getState().notice).toBe(false);
    at(5100);
    await v.release();
    expect(b.methods()).toEqual(['voiceStart', 'voiceEnd']);
  });
});

// --- the Settings switch ----------------------------------------------------------------------

/** A Map-backed localStorage on globalThis (the tests run under Node, no DOM). */
const g = globalThis as unknown as { localStorage?: unknown };

describe('local VAD setting', () => {
  let storage: Map<string, string>;
  beforeEach(() => {
    storage = new Map();
    g.localStorage = {
      getItem: (k: string) => storage.get(k) ?? null,
      setItem: (k: string, v: string) => void storage.set(k, v),
      removeItem: (k: string) => void storage.delete(k),
    };
    useLocalVad.setState({ on: false, loading: false, error: undefined, notice: false });
  });
  afterEach(() => {
    delete g.localStorage;
  });

  const engineWith = (load?: () => Promise<SpeechDetectorResult>): VoiceEngine => ({
    idle: true,
    onPlaybackState: undefined,
    openCapture: () => Promise.reject(new Error('unused')),
    play: async () => undefined,
    flush: () => undefined,
    setOutput: async () => undefined,
    ...(load ? { loadSpeechDetector: load } : {}),
  });

  it('on: loads the model first, then is on and remembered', async () => {
    let loaded!: (r: SpeechDetectorResult) => void;
    const turning = setLocalVad(
      engineWith(() => new Promise((r) => (loaded = r))),
      true,
    );
    expect(useLocalVad.getState()).toMatchObject({ on: false, loading: true });
    loaded({ ok: true });
    await turning;
    expect(useLocalVad.getState()).toMatchObject({ on: true, loading: false, error: undefined });
    expect(devicePrefs.localVad()).toBe(true);
    await setLocalVad(engineWith(), false);
    expect(useLocalVad.getState().on).toBe(false);
    expect(devicePrefs.localVad()).toBe(false);
  });

  it('a model that cannot load leaves it off, with the reason, until turned on again', async () => {
    await setLocalVad(
      engineWith(async () => ({ ok: false, error: 'HTTP 404' })),
      true,
    );
    expect(useLocalVad.getState()).toMatchObject({ on: false, loading: false, error: 'HTTP 404' });
    expect(devicePrefs.localVad()).toBe(false);
    await setLocalVad(
      engineWith(async () => ({ ok: true })),
      true,
    );
    expect(useLocalVad.getState()).toMatchObject({ on: true, error: undefined });
  });

  it('an engine without local VAD, or one that fails mid-turn, turns it off with a reason', async () => {
    await setLocalVad(engineWith(), true);
    expect(useLocalVad.getState()).toMatchObject({
      on: false,
      error: 'not available in this window',
    });
    devicePrefs.setLocalVad(true);
    localVadFailed('worklet blocked', true);
    expect(useLocalVad.getState()).toMatchObject({
      on: false,
      error: 'worklet blocked',
      notice: true,
    });
    expect(devicePrefs.localVad()).toBe(false);
  });
});

// --- what the page needs from the build and the CSPs --------------------------------------------

describe('local VAD assets and CSP', () => {
  it('every asset the build copies exists, under the name vad-web or ONNX Runtime asks for', () => {
    for (const a of VAD_ASSETS)
      expect(existsSync(path.join(repo, 'node_modules', a.from)), a.from).toBe(true);
    expect(VAD_ASSET_DIR).toBe('vad/');
    const vadWeb = readFileSync(
      path.join(repo, 'node_modules/@ricky0123/vad-web/dist/real-time-vad.js'),
      'utf8',
    );
    for (const name of ['silero_vad_legacy.onnx', 'vad.worklet.bundle.min.js']) {
      expect(vadWeb).toContain(`"${name}"`);
      expect(VAD_ASSETS.map((a) => a.name)).toContain(name);
    }
    expect(vadWeb).toContain('exports.DEFAULT_MODEL = "legacy"');
  });

  it('the page and the browser host allow wasm compilation, and never eval', () => {
    const html = readFileSync(path.join(repo, 'renderer', 'index.html'), 'utf8');
    const meta = /http-equiv="Content-Security-Policy"\s+content="([^"]+)"/.exec(html)?.[1];
    for (const csp of [meta, contentSecurityPolicy(8080)]) {
      const scriptSrc = csp
        ?.split(';')
        .map((d) => d.trim())
        .find((d) => d.startsWith('script-src'));
      expect(scriptSrc).toBe("script-src 'self' 'wasm-unsafe-eval'");
      expect(csp).not.toContain("'unsafe-eval'");
    }
  });
});
