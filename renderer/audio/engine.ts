/**
 * The page's audio: one AudioContext with the capture and playback worklets, the microphone
 * stream of the current turn, device choices (remembered in localStorage) and the counters tests
 * read from `window.__adventAudio`. PCM only (DESIGN §3): formats are the core's business.
 */
export { type Capture, MicError, counters, devicePrefs } from './shared.js';
import captureUrl from './capture-worklet.ts?worker&url';
import playbackUrl from './playback-worklet.ts?worker&url';
import type { LoadResult } from './local-vad.js';
import { Resampler, s16ToFloat } from './resample.js';
import {
  type Capture,
  MicError,
  type SpeechDetectorResult,
  type VoiceEngine,
  counters,
  devicePrefs,
  micProblem,
} from './shared.js';
import { CAPTURE_PROCESSOR, PLAYBACK_PROCESSOR } from './worklet-types.js';
import type { DirectAudio, ReplyLink } from '../bridge/types.js';
import type { PlaybackOptions } from './playback-worklet.js';

export function supportsOutputChoice(): boolean {
  return typeof AudioContext !== 'undefined' && 'setSinkId' in AudioContext.prototype;
}

export async function listDevices(): Promise<{
  inputs: MediaDeviceInfo[];
  outputs: MediaDeviceInfo[];
}> {
  const all = (await navigator.mediaDevices?.enumerateDevices?.()) ?? [];
  return {
    inputs: all.filter((d) => d.kind === 'audioinput'),
    outputs: all.filter((d) => d.kind === 'audiooutput'),
  };
}

const MAX_KEPT_CHUNKS = 1500; // 30 s

type PlaybackState = {
  type: 'state';
  played: number;
  buffered: number;
  playing: boolean;
  underruns?: number;
  delayMs?: number;
  jitterMs?: number;
};

/**
 * Optional timestamps for the voice latency bench (test/bench/voice-latency.ts), wall-clock ms
 * (`performance.timeOrigin + performance.now()`), read from `window.__adventAudio.timings`:
 * when the page received each of the current turn's chunks from the capture worklet, when the
 * first reply audio of each task reached `play`, and when playback started (estimated from the
 * worklet's report: the time it came, less what it says had been played since). Nothing reads
 * them in the app.
 */
export const timings = {
  captureAt: [] as number[],
  replyAt: [] as Array<{ taskId: string; at: number }>,
  playbackStartedAt: [] as number[],
};
(counters as typeof counters & { timings?: typeof timings }).timings = timings;
const wallNow = (): number => performance.timeOrigin + performance.now();
const MAX_KEPT_TIMES = 200;

export class AudioEngine implements VoiceEngine {
  private ctx: AudioContext | undefined;
  private ready: Promise<AudioContext> | undefined;
  private player: AudioWorkletNode | undefined;
  private resampler: { taskId: string; rate: number; r: Resampler } | undefined;
  private playing = false;
  private buffered = 0;
  private playedWhenStopped = 0;
  private replyRate = 16_000;
  /** Local voice detection, loaded on first use. */
  private vad: Promise<LoadResult> | undefined;
  /** The bridge's own line to the player, when it has one: all reply audio then goes through it. */
  private link: ReplyLink | undefined;
  onPlaybackState: ((state: { playing: boolean; buffered: number }) => void) | undefined;

  /** The context with both worklets loaded; created on first use (ideally in a user gesture). */
  context(): Promise<AudioContext> {
    if (!this.ready) {
      this.ready = (async () => {
        const ctx = new AudioContext({ latencyHint: 'interactive' });
        await ctx.audioWorklet.addModule(captureUrl);
        await ctx.audioWorklet.addModule(playbackUrl);
        const player = new AudioWorkletNode(ctx, PLAYBACK_PROCESSOR, {
          numberOfInputs: 0,
          numberOfOutputs: 1,
          outputChannelCount: [1],
          processorOptions: { burstMs: ctx.baseLatency * 1000 } satisfies PlaybackOptions,
        });
        player.port.onmessage = (ev: MessageEvent<PlaybackState>) => {
          if (ev.data?.type !== 'state') return;
          if (!this.playing && ev.data.played > this.playedWhenStopped) {
            const since = (ev.data.played - this.playedWhenStopped) / this.replyRate;
            if (timings.playbackStartedAt.length >= MAX_KEPT_TIMES)
              timings.playbackStartedAt.shift();
            timings.playbackStartedAt.push(wallNow() - since * 1000);
          }
          if (!ev.data.playing) this.playedWhenStopped = ev.data.played;
          counters.playedSamples = ev.data.played;
          counters.underruns = ev.data.underruns ?? 0;
          counters.playbackDelayMs = ev.data.delayMs ?? 0;
          counters.playbackJitterMs = ev.data.jitterMs ?? 0;
          this.playing = ev.data.playing;
          this.buffered = ev.data.buffered;
          this.onPlaybackState?.({ playing: this.playing, buffered: this.buffered });
        };
        player.connect(ctx.destination);
        this.ctx = ctx;
        this.player = player;
        if (this.link?.active) this.attachLink(this.link, ctx, player);
        const sink = devicePrefs.output();
        if (sink) await this.setOutput(sink).catch(() => undefined);
        return ctx;
      })();
      this.ready.catch(() => {
        this.ready = undefined;
      });
    }
    return this.ready.then((ctx) => {
      // Not awaited: without a user gesture yet, resume() waits for one (audio then plays late
      // or is flushed, and `idle` does not hold the UI in "speaking" meanwhile).
      if (ctx.state === 'suspended') ctx.resume().catch(() => undefined);
      return ctx;
    });
  }

  /**
   * Reply audio through the bridge's line: it feeds the player from its own thread, and what the
   * page plays goes the same way, so one line keeps the order and a flush drops all before it.
   */
  useReplyLink(link: ReplyLink): void {
    this.link = link;
    if (this.ctx && this.player && link.active) this.attachLink(link, this.ctx, this.player);
  }

  private attachLink(link: ReplyLink, ctx: AudioContext, player: AudioWorkletNode): void {
    const channel = new MessageChannel();
    player.port.postMessage({ type: 'port', port: channel.port1 }, [channel.port1]);
    link.attachPlayer(channel.port2, ctx.sampleRate);
  }

  /** Reply audio the line played by itself: the page's counters and the bench's stamps. */
  directPlayed(audio: DirectAudio): void {
    if (audio.superseded) {
      // The line flushed the player for a reply nobody announced, as flush() would have.
      counters.flushes++;
      this.resampler = undefined;
      this.buffered = 0;
      this.playing = false;
    }
    this.stampReply(audio.taskId, audio.at);
    this.replyRate = audio.sampleRate;
    counters.receivedSamples += audio.samples;
    counters.directSamples += audio.samples;
    const rate = this.ctx?.sampleRate ?? audio.sampleRate;
    this.buffered += Math.round((audio.samples * rate) / audio.sampleRate);
  }

  private stampReply(taskId: string, at: number): void {
    if (timings.replyAt.at(-1)?.taskId === taskId) return;
    if (timings.replyAt.length >= MAX_KEPT_TIMES) timings.replyAt.shift();
    timings.replyAt.push({ taskId, at });
  }

  /** The local voice detector on this context, loaded once; a failed load is tried again next time. */
  private speechDetector(): Promise<LoadResult> {
    if (!this.vad) {
      // The wrapper and the library are chunks of their own, fetched only when this runs.
      const loading = Promise.all([this.context(), import('./local-vad.js')]).then(
        ([context, { loadLocalVad }]) => loadLocalVad({ context }),
        (err: unknown): LoadResult => ({
          ok: false,
          error: (err as Error)?.message || String(err),
        }),
      );
      this.vad = loading;
      void loading.then((r) => {
        if (!r.ok && this.vad === loading) this.vad = undefined;
      });
    }
    return this.vad;
  }

  async loadSpeechDetector(): Promise<SpeechDetectorResult> {
    const r = await this.speechDetector();
    return r.ok ? { ok: true } : r;
  }

  get idle(): boolean {
    if (this.ctx?.state !== 'running') return true;
    return !this.playing && this.buffered === 0;
  }

  async setOutput(deviceId: string): Promise<void> {
    const ctx = this.ctx as
      (AudioContext & { setSinkId?: (id: string) => Promise<void> }) | undefined;
    if (ctx?.setSinkId) await ctx.setSinkId(deviceId);
  }

  /** Open the microphone and stream 20 ms chunks of 16 kHz s16le to `onChunk`. */
  async openCapture(
    onChunk: (pcm: ArrayBuffer) => void,
    onLevel: (level: number) => void,
    opts: { echoCancellation: boolean },
  ): Promise<Capture> {
    if (!navigator.mediaDevices?.getUserMedia)
      throw new MicError('unsupported', 'this page cannot use a microphone');
    const deviceId = devicePrefs.input();
    const constraints: MediaTrackConstraints = {
      channelCount: 1,
      echoCancellation: opts.echoCancellation,
      noiseSuppression: opts.echoCancellation,
      autoGainControl: opts.echoCancellation,
    };
    // The context and its worklets first, so capture starts the moment the microphone opens.
    let ctx: AudioContext;
    try {
      ctx = await this.context();
    } catch (err) {
      throw new MicError('failed', (err as Error)?.message ?? String(err));
    }
    let stream: MediaStream;
    try {
      stream = await navigator.mediaDevices.getUserMedia({
        audio: deviceId ? { ...constraints, deviceId: { ideal: deviceId } } : constraints,
      });
    } catch (err) {
      throw new MicError(micProblem(err), (err as Error)?.message ?? String(err));
    }
    const source = ctx.createMediaStreamSource(stream);
    const node = new AudioWorkletNode(ctx, CAPTURE_PROCESSOR, {
      numberOfInputs: 1,
      numberOfOutputs: 1,
      outputChannelCount: [1],
    });
    counters.captured = [];
    timings.captureAt = [];
    let stopped: (() => void) | undefined;
    node.port.onmessage = (
      ev: MessageEvent<{ type: string; pcm?: ArrayBuffer; level?: number }>,
    ) => {
      const msg = ev.data;
      if (msg.type === 'chunk' && msg.pcm) {
        counters.capturedChunks++;
        if (timings.captureAt.length < MAX_KEPT_CHUNKS) timings.captureAt.push(wallNow());
        if (counters.captured.length < MAX_KEPT_CHUNKS) counters.captured.push(msg.pcm.slice(0));
        onLevel(msg.level ?? 0);
        onChunk(msg.pcm);
      } else if (msg.type === 'stopped') stopped?.();
    };
    source.connect(node);
    // Pulled through a silent output so the graph keeps running it.
    const mute = ctx.createGain();
    mute.gain.value = 0;
    node.connect(mute).connect(ctx.destination);

    let done: Promise<void> | undefined;
    return {
      watchSpeech: async (onEnd) => {
        const detector = this.speechDetector();
        const loaded = await detector;
        if (!loaded.ok) return loaded;
        if (done) return { ok: true, watch: { stop: async () => undefined } };
        const r = await loaded.vad.listen(stream, { onSpeechEnd: onEnd });
        if (!r.ok) {
          // A detector that failed to start is not used again: the next turn loads a fresh one.
          if (this.vad === detector) this.vad = undefined;
          void loaded.vad.destroy();
          return r;
        }
        return { ok: true, watch: r.listening };
      },
      stop: () =>
        (done ??= new Promise<void>((resolve) => {
          const timer = setTimeout(() => resolve(), 300);
          stopped = () => {
            clearTimeout(timer);
            resolve();
          };
          node.port.postMessage({ type: 'stop' });
        }).finally(() => {
          onLevel(0);
          source.disconnect();
          node.disconnect();
          mute.disconnect();
          node.port.onmessage = null;
          for (const track of stream.getTracks()) track.stop();
        })),
    };
  }

  /** Queue reply audio (s16le mono at `sampleRate`) for `taskId`. */
  async play(taskId: string, sampleRate: number, pcm: ArrayBuffer): Promise<void> {
    this.stampReply(taskId, wallNow());
    this.replyRate = sampleRate;
    const link = this.link;
    if (link?.active) {
      // No await before the push: the line must get it before the page says it handled it.
      // Without a player yet the line holds it until the context below attaches one.
      const n = pcm.byteLength >> 1;
      counters.receivedSamples += n;
      if (this.ctx?.state !== 'running') void this.context().catch(() => undefined);
      const rate = this.ctx?.sampleRate ?? sampleRate;
      this.buffered += Math.round((n * rate) / sampleRate);
      link.push(taskId, sampleRate, pcm);
      return;
    }
    const samples = s16ToFloat(pcm);
    counters.receivedSamples += samples.length;
    // Once the context runs, no await: a microtask queued before this one (a re-render) would
    // otherwise go first and hold the audio back.
    const ctx = this.ctx?.state === 'running' ? this.ctx : await this.context();
    const player = this.player;
    if (!player) return;
    if (!this.resampler || this.resampler.taskId !== taskId || this.resampler.rate !== sampleRate)
      this.resampler = { taskId, rate: sampleRate, r: new Resampler(sampleRate, ctx.sampleRate) };
    const data = sampleRate === ctx.sampleRate ? samples : this.resampler.r.process(samples);
    this.buffered += data.length;
    player.port.postMessage({ type: 'push', data, src: samples.length }, [data.buffer]);
  }

  /** Stop playback at once (barge-in): everything queued is dropped. */
  flush(): void {
    counters.flushes++;
    this.resampler = undefined;
    this.buffered = 0;
    this.playing = false;
    if (this.link?.active) this.link.flush();
    else this.player?.port.postMessage({ type: 'flush' });
  }
}
