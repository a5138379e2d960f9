/**
 * What the voice controller needs from the audio engine, and the plain parts of it (counters,
 * remembered devices, microphone errors): no worklets, no AudioContext, so the controller is
 * unit-tested under Node with a fake engine.
 */
import type { DirectAudio, ReplyLink } from '../bridge/types.js';

export interface AudioCounters {
  /** Reply samples (at their own rate) handed to playback. */
  receivedSamples: number;
  /** Of those, how many have been played. */
  playedSamples: number;
  /** Of those, how many the bridge's line played without the page's main thread. */
  directSamples: number;
  /** Reply samples dropped: an old task's, after a barge-in. */
  droppedSamples: number;
  /** 20 ms chunks captured from the microphone (all turns). */
  capturedChunks: number;
  /** The current (or last) turn's captured 16 kHz PCM, for tests to compare with the input. */
  captured: ArrayBuffer[];
  flushes: number;
  /** Times reply audio ran dry mid-stream in the player (each one a gap heard). */
  underruns: number;
  /** The player's start delay now, ms (its jitter buffer adapts it to the link). */
  playbackDelayMs: number;
  /** The arrival jitter the player measures, ms. */
  playbackJitterMs: number;
}

declare global {
  interface Window {
    __adventAudio?: AudioCounters;
  }
}

/** The part of localStorage used here (this module is also loaded by Node tests: no DOM types). */
interface KeyValueStore {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
  removeItem(key: string): void;
}
const page = globalThis as unknown as {
  __adventAudio?: AudioCounters;
  localStorage?: KeyValueStore;
};

export const counters: AudioCounters = {
  receivedSamples: 0,
  playedSamples: 0,
  directSamples: 0,
  droppedSamples: 0,
  capturedChunks: 0,
  captured: [],
  flushes: 0,
  underruns: 0,
  playbackDelayMs: 0,
  playbackJitterMs: 0,
};
page.__adventAudio = counters;

const INPUT_KEY = 'advent-agent.voice.input';
const OUTPUT_KEY = 'advent-agent.voice.output';
const ECHO_KEY = 'advent-agent.voice.echoCancellation';
const LOCAL_VAD_KEY = 'advent-agent.voice.localVad';

function load(key: string): string {
  try {
    return page.localStorage?.getItem(key) ?? '';
  } catch {
    return '';
  }
}

function store(key: string, value: string): void {
  try {
    if (value) page.localStorage?.setItem(key, value);
    else page.localStorage?.removeItem(key);
  } catch {
    // Storage may be disabled: the choice lasts for this page.
  }
}

export const devicePrefs = {
  input: () => load(INPUT_KEY),
  output: () => load(OUTPUT_KEY),
  echoCancellation: () => load(ECHO_KEY) === 'on',
  /** Local voice detection ends push-to-talk turns (renderer/audio/local-vad.ts). */
  localVad: () => load(LOCAL_VAD_KEY) === 'on',
  setInput: (id: string) => store(INPUT_KEY, id),
  setOutput: (id: string) => store(OUTPUT_KEY, id),
  setEchoCancellation: (on: boolean) => store(ECHO_KEY, on ? 'on' : ''),
  setLocalVad: (on: boolean) => store(LOCAL_VAD_KEY, on ? 'on' : ''),
};

/** Why the microphone could not be opened, as a key the UI translates. */
export type MicProblem = 'denied' | 'missing' | 'unsupported' | 'failed';

export class MicError extends Error {
  constructor(
    readonly problem: MicProblem,
    message: string,
  ) {
    super(message);
    this.name = 'MicError';
  }
}

export function micProblem(err: unknown): MicProblem {
  const name = (err as { name?: string } | undefined)?.name;
  if (name === 'NotAllowedError' || name === 'SecurityError' || name === 'PermissionDeniedError')
    return 'denied';
  if (
    name === 'NotFoundError' ||
    name === 'OverconstrainedError' ||
    name === 'DevicesNotFoundError'
  )
    return 'missing';
  return 'failed';
}

/** Local voice detection could run, or why not (a reason to show). */
export type SpeechDetectorResult = { ok: true } | { ok: false; error: string };

/** Local voice detection listening to one capture's microphone. */
export interface SpeechWatch {
  stop(): Promise<void>;
}

export interface Capture {
  /** Stop after delivering every full chunk captured so far. */
  stop(): Promise<void>;
  /**
   * Local voice detection on this capture's microphone (engines that have it): `onEnd` runs once
   * speech that began has stopped. Resolves once it listens, or with why it cannot.
   */
  watchSpeech?(
    onEnd: () => void,
  ): Promise<{ ok: true; watch: SpeechWatch } | { ok: false; error: string }>;
}

export interface VoiceEngine {
  /** Nothing queued and nothing playing. */
  readonly idle: boolean;
  onPlaybackState: ((state: { playing: boolean; buffered: number }) => void) | undefined;
  openCapture(
    onChunk: (pcm: ArrayBuffer) => void,
    onLevel: (level: number) => void,
    opts: { echoCancellation: boolean },
  ): Promise<Capture>;
  play(taskId: string, sampleRate: number, pcm: ArrayBuffer): Promise<void>;
  flush(): void;
  /** Feed the player through the bridge's own line (engines that can); see ReplyLink. */
  useReplyLink?(link: ReplyLink): void;
  /** A chunk the line played by itself, for the engine's counters. */
  directPlayed?(audio: DirectAudio): void;
  setOutput(deviceId: string): Promise<void>;
  /** Load local voice detection now (Settings turning it on), or say why it cannot run. */
  loadSpeechDetector?(): Promise<SpeechDetectorResult>;
}
