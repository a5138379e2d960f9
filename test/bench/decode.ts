/**
 * Frame decoding throughput: `FrameDecoder` against the naive baseline (naive-decoder.ts), and
 * against its own frozen predecessor (frame-decoder-before.ts, before the named-states rewrite of
 * issue 9 §6), on the same bytes split the same way, interleaved run by run so all see the same
 * machine state.
 */
import { FrameDecoder } from '../../app/wire/advent/frame.js';
import { FrameDecoderBefore } from './frame-decoder-before.js';
import { NaiveDecoder } from './naive-decoder.js';
import { KiB, MiB, collect, median, nowMs, size } from './stats.js';
import { type Stream, audioStream, chunked, textStream } from './streams.js';

export interface Decoded {
  frames: number;
  payloadBytes: number;
}

export interface Throughput {
  label: string;
  bytes: number;
  chunkBytes: number;
  /** Median over the timed runs, MB/s (10^6 bytes per second). */
  mbps: number;
  best: number;
  runs: number;
  /** MB/s of each timed run, in order (run i of every side of one race ran back to back). */
  perRun: number[];
  /** The same by the CPU time the process spent, which excludes time spent waiting for a core. */
  perRunCpu: number[];
}

export interface DecodeCase {
  id: 'a' | 'b' | 'b+' | 'c';
  title: string;
  ours: Throughput;
  baseline: Throughput;
  /** ours / baseline, from the two medians of the same interleaved runs. */
  ratio: number;
  /** Ours on a bigger stream, when the baseline had to use a smaller one (case b), and that stream. */
  oursLarge?: Throughput;
  largeInput?: string;
  /** The bytes both decoders were given. */
  input: string;
  note?: string;
  target?: { text: string; met: boolean };
  /** FrameDecoder now against the frozen copy of itself before the rewrite, on the same bytes. */
  sinceBefore: SinceBefore;
}

export interface SinceBefore {
  input: string;
  now: Throughput;
  before: Throughput;
  /** now / before: the median of the ratios of each run, where both ran back to back. */
  ratio: number;
  /**
   * The same by CPU time. On a shared machine wall time also counts the moments the process
   * waited for a core, and those fall unevenly on the two sides; CPU time does not count them.
   */
  cpuRatio: number;
}

function decodeOurs(chunks: readonly Buffer[]): Decoded {
  const decoder = new FrameDecoder();
  let frames = 0;
  let payloadBytes = 0;
  for (const chunk of chunks) {
    for (const f of decoder.push(chunk)) {
      frames += 1;
      payloadBytes += f.payload.length;
    }
  }
  for (const f of decoder.finish()) {
    frames += 1;
    payloadBytes += f.payload.length;
  }
  return { frames, payloadBytes };
}

/** decodeOurs, written out again so each call site sees one decoder class (no shared inline cache). */
function decodeBefore(chunks: readonly Buffer[]): Decoded {
  const decoder = new FrameDecoderBefore();
  let frames = 0;
  let payloadBytes = 0;
  for (const chunk of chunks) {
    for (const f of decoder.push(chunk)) {
      frames += 1;
      payloadBytes += f.payload.length;
    }
  }
  for (const f of decoder.finish()) {
    frames += 1;
    payloadBytes += f.payload.length;
  }
  return { frames, payloadBytes };
}

function decodeNaive(chunks: readonly Buffer[]): Decoded {
  const decoder = new NaiveDecoder();
  let frames = 0;
  let payloadBytes = 0;
  for (const chunk of chunks) {
    for (const f of decoder.push(chunk)) {
      frames += 1;
      payloadBytes += f.payload.length;
    }
  }
  return { frames, payloadBytes };
}

/** Both decoders must find exactly the frames the stream was built from, or the timing is moot. */
function check(stream: Stream, chunks: readonly Buffer[], label: string): void {
  const want = `${stream.frames} frames / ${stream.payloadBytes} payload bytes`;
  for (const [who, run] of [
    ['FrameDecoder', decodeOurs],
    ['FrameDecoder before', decodeBefore],
    ['baseline', decodeNaive],
  ] as const) {
    const got = run(chunks);
    if (got.frames !== stream.frames || got.payloadBytes !== stream.payloadBytes) {
      throw new Error(
        `${label}: ${who} decoded ${got.frames} frames / ${got.payloadBytes} payload bytes, expected ${want}`,
      );
    }
  }
}

/** One run's wall time and the CPU time the process spent in it (this thread and V8's helpers), ms. */
interface Timing {
  ms: number;
  cpuMs: number;
}

function timeOnce(run: (c: readonly Buffer[]) => Decoded, chunks: readonly Buffer[]): Timing {
  const cpu0 = process.cpuUsage();
  const t0 = nowMs();
  const got = run(chunks);
  const ms = nowMs() - t0;
  const cpu = process.cpuUsage(cpu0);
  if (got.frames === 0) throw new Error('nothing decoded');
  return { ms, cpuMs: (cpu.user + cpu.system) / 1000 };
}

function throughput(label: string, bytes: number, chunkBytes: number, t: Timing[]): Throughput {
  const mbps = t.map((x) => bytes / 1e6 / (x.ms / 1000));
  return {
    label,
    bytes,
    chunkBytes,
    mbps: median(mbps),
    best: Math.max(...mbps),
    runs: t.length,
    perRun: mbps,
    perRunCpu: t.map((x) => bytes / 1e6 / (x.cpuMs / 1000)),
  };
}

interface Side {
  label: string;
  run: (c: readonly Buffer[]) => Decoded;
  chunks: readonly Buffer[];
  bytes: number;
  chunkBytes: number;
}

/**
 * Warm up every side, then time them in turn `runs` times. One forced GC before, none between
 * runs: right after a full GC V8 starts with a small young generation, which would tax short runs.
 * The first two sides (now and before) swap places every other run, so that neither always runs
 * right after the baseline, whose garbage the collector may still be sweeping.
 */
function race(sides: readonly Side[], warmups: number, runs: number): Throughput[] {
  collect();
  for (let i = 0; i < warmups; i++) for (const s of sides) timeOnce(s.run, s.chunks);
  const times = sides.map(() => [] as Timing[]);
  for (let i = 0; i < runs; i++) {
    const order = sides.map((_, k) => k);
    if (i % 2 === 1) [order[0], order[1]] = [order[1]!, order[0]!];
    for (const k of order) times[k]!.push(timeOnce(sides[k]!.run, sides[k]!.chunks));
  }
  return sides.map((s, k) => throughput(s.label, s.bytes, s.chunkBytes, times[k]!));
}

export interface DecodeOptions {
  audioBytes: number;
  oneByteOurs: number;
  oneByteBaseline: number;
  /** Payload size of the extra one-byte case with long frames. */
  longPayload: number;
  longBytes: number;
  textBytes: number;
  runs: number;
}

export const DEFAULT_DECODE: DecodeOptions = {
  audioBytes: 32 * MiB,
  oneByteOurs: 256 * KiB,
  oneByteBaseline: 64 * KiB,
  longPayload: 32_000,
  longBytes: 32 * KiB + 100, // one 1 s frame (32 025 bytes)
  textBytes: 4 * MiB,
  runs: 5,
};

const CHUNK = 64 * KiB;

function side(label: string, run: Side['run'], stream: Stream, chunkBytes: number): Side {
  return {
    label,
    run,
    chunks: chunked(stream.bytes, chunkBytes),
    bytes: stream.bytes.length,
    chunkBytes,
  };
}

/** Ours (now and before) must also decode, exactly, a stream the baseline is not timed on. */
function checkOurs(stream: Stream, chunks: readonly Buffer[], label: string): void {
  for (const [who, run] of [
    ['FrameDecoder', decodeOurs],
    ['FrameDecoder before', decodeBefore],
  ] as const) {
    const got = run(chunks);
    if (got.frames !== stream.frames || got.payloadBytes !== stream.payloadBytes) {
      throw new Error(
        `${label}: ${who} decoded ${got.frames} frames / ${got.payloadBytes} payload bytes, expected ${stream.frames} / ${stream.payloadBytes}`,
      );
    }
  }
}

/**
 * The ratios are medians of the per-run ratios: the two ran back to back in every run, so a busy
 * moment of a shared machine weighs on both sides of one ratio rather than on one side's median.
 */
function sinceBefore(input: string, now: Throughput, before: Throughput): SinceBefore {
  const paired = (a: number[], b: number[]) => median(a.map((x, i) => x / b[i]!));
  return {
    input,
    now,
    before,
    ratio: paired(now.perRun, before.perRun),
    cpuRatio: paired(now.perRunCpu, before.perRunCpu),
  };
}

const A_TARGET_MBPS = 1000;
const B_TARGET_RATIO = 50;

function largeNote(largeInput: string, t: Throughput): string {
  return `ours alone on ${largeInput}: ${t.mbps.toFixed(2)} MB/s (best ${t.best.toFixed(2)})`;
}

/** One side's timed runs from several runs of the bench, as if they were one. */
function pooled(sides: readonly Throughput[]): Throughput {
  const first = sides[0]!;
  const perRun = sides.flatMap((t) => t.perRun);
  return {
    label: first.label,
    bytes: first.bytes,
    chunkBytes: first.chunkBytes,
    mbps: median(perRun),
    best: Math.max(...perRun),
    runs: perRun.length,
    perRun,
    perRunCpu: sides.flatMap((t) => t.perRunCpu),
  };
}

/**
 * Several runs of the decoding bench (each in a process of its own, so each has its own JIT
 * history) as one: every timed run is pooled, and medians and ratios are taken over the pool.
 */
export function poolDecodeCases(runs: readonly DecodeCase[][]): DecodeCase[] {
  return runs[0]!.map((first) => {
    const same = runs.map((r) => r.find((c) => c.id === first.id)!);
    const ours = pooled(same.map((c) => c.ours));
    const baseline = pooled(same.map((c) => c.baseline));
    const oursLarge = first.oursLarge && pooled(same.map((c) => c.oursLarge!));
    const ratio = ours.mbps / baseline.mbps;
    const met = first.id === 'a' ? ours.mbps >= A_TARGET_MBPS : ratio >= B_TARGET_RATIO;
    return {
      ...first,
      ours,
      baseline,
      ...(oursLarge && { oursLarge }),
      ratio,
      ...(oursLarge && first.largeInput && { note: largeNote(first.largeInput, oursLarge) }),
      ...(first.target && { target: { text: first.target.text, met } }),
      sinceBefore: sinceBefore(
        first.sinceBefore.input,
        pooled(same.map((c) => c.sinceBefore.now)),
        pooled(same.map((c) => c.sinceBefore.before)),
      ),
    };
  });
}

export function runDecodeBench(
  opts: DecodeOptions = DEFAULT_DECODE,
  log: (line: string) => void = () => {},
): DecodeCase[] {
  const cases: DecodeCase[] = [];

  // (a) 20 ms PCM frames, 64 KiB chunks.
  {
    log(`  (a) AUDIO_FRAMEs, ${size(opts.audioBytes)} in 64 KiB chunks`);
    const stream = audioStream(opts.audioBytes);
    const ours = side('FrameDecoder', decodeOurs, stream, CHUNK);
    const before = side('FrameDecoder before', decodeBefore, stream, CHUNK);
    const base = side('baseline', decodeNaive, stream, CHUNK);
    check(stream, ours.chunks, 'case a');
    const [o, p, b] = race([ours, before, base], 1, opts.runs) as [
      Throughput,
      Throughput,
      Throughput,
    ];
    const input = `${size(stream.bytes.length)}, ${stream.frames} frames`;
    cases.push({
      id: 'a',
      title: 'AUDIO_FRAME (640 B PCM), 64 KiB chunks',
      ours: o,
      baseline: b,
      ratio: o.mbps / b.mbps,
      input,
      target: { text: '≥ 1 GB/s (1000 MB/s)', met: o.mbps >= A_TARGET_MBPS },
      sinceBefore: sinceBefore(input, o, p),
    });
  }

  // (b) The same kind of stream, one byte per chunk. Ours runs on a bigger stream too; the ratio
  // is taken on the very same bytes for both. Now against before is taken on the bigger stream,
  // whose runs are long enough to be steadier.
  {
    log(
      `  (b) AUDIO_FRAMEs, 1-byte chunks: ${size(opts.oneByteOurs)} (ours) and ${size(opts.oneByteBaseline)} (both)`,
    );
    const large = audioStream(opts.oneByteOurs, 3);
    const small = audioStream(opts.oneByteBaseline, 3);
    const oursLarge = side('FrameDecoder', decodeOurs, large, 1);
    const beforeLarge = side('FrameDecoder before', decodeBefore, large, 1);
    const ours = side('FrameDecoder', decodeOurs, small, 1);
    const base = side('baseline', decodeNaive, small, 1);
    check(small, ours.chunks, 'case b');
    checkOurs(large, oursLarge.chunks, 'case b (large)');
    const [ol, pl, o, b] = race([oursLarge, beforeLarge, ours, base], 1, opts.runs) as [
      Throughput,
      Throughput,
      Throughput,
      Throughput,
    ];
    const ratio = o.mbps / b.mbps;
    const largeInput = `${size(large.bytes.length)} (${large.frames} frames)`;
    cases.push({
      id: 'b',
      title: 'AUDIO_FRAME (640 B PCM), 1-byte chunks',
      ours: o,
      baseline: b,
      oursLarge: ol,
      largeInput,
      ratio,
      input: `${size(small.bytes.length)}, ${small.frames} frames`,
      note: largeNote(largeInput, ol),
      target: { text: `≥ ${B_TARGET_RATIO}× baseline`, met: ratio >= B_TARGET_RATIO },
      sinceBefore: sinceBefore(`${size(large.bytes.length)}, ${large.frames} frames`, ol, pl),
    });
  }

  // (b+) Context for (b): the baseline's extra work per byte grows with the frame being
  // assembled, so one-byte delivery of long frames is where the quadratic cost shows.
  {
    log(`  (b+) 1 s AUDIO_FRAMEs (${opts.longPayload} B), 1-byte chunks, ${size(opts.longBytes)}`);
    const stream = audioStream(opts.longBytes, 4, opts.longPayload);
    const ours = side('FrameDecoder', decodeOurs, stream, 1);
    const before = side('FrameDecoder before', decodeBefore, stream, 1);
    const base = side('baseline', decodeNaive, stream, 1);
    check(stream, ours.chunks, 'case b+');
    const [o, p, b] = race([ours, before, base], 1, Math.min(opts.runs, 3)) as [
      Throughput,
      Throughput,
      Throughput,
    ];
    const input = `${size(stream.bytes.length)}, ${stream.frames} frame${stream.frames === 1 ? '' : 's'}`;
    cases.push({
      id: 'b+',
      title: `AUDIO_FRAME (${opts.longPayload} B = 1 s PCM), 1-byte chunks`,
      ours: o,
      baseline: b,
      ratio: o.mbps / b.mbps,
      input,
      note: 'context for (b), no target',
      sinceBefore: sinceBefore(input, o, p),
    });
  }

  // (c) TEXT and MCP JSON frames, 64 KiB chunks.
  {
    log(`  (c) TEXT + MCP frames, ${size(opts.textBytes)} in 64 KiB chunks`);
    const stream = textStream(opts.textBytes);
    const ours = side('FrameDecoder', decodeOurs, stream, CHUNK);
    const before = side('FrameDecoder before', decodeBefore, stream, CHUNK);
    const base = side('baseline', decodeNaive, stream, CHUNK);
    check(stream, ours.chunks, 'case c');
    const [o, p, b] = race([ours, before, base], 1, opts.runs) as [
      Throughput,
      Throughput,
      Throughput,
    ];
    const input = `${size(stream.bytes.length)}, ${stream.frames} frames (avg ${Math.round(stream.bytes.length / stream.frames)} B)`;
    cases.push({
      id: 'c',
      title: 'TEXT + MCP JSON (~150–400 B), 64 KiB chunks',
      ours: o,
      baseline: b,
      ratio: o.mbps / b.mbps,
      input,
      sinceBefore: sinceBefore(input, o, p),
    });
  }
  return cases;
}

export interface Reference {
  /** One `Buffer.indexOf('##END', from)` from a random point of an AUDIO_FRAME stream (the next
   * marker is at most one 665-byte frame on), ns. */
  indexOfCallNs: number;
  /** One `buf.subarray(a, b)`, ns. */
  subarrayNs: number;
  /** `Buffer.indexOf` scanning PCM for `##END`, MB/s. */
  scanMBps: number;
}

/** What this machine charges for the primitives a decoder is built from (median of 5). */
export function referenceCosts(): Reference {
  const pcm = audioStream(8 * MiB, 5).bytes;
  const marker = Buffer.from('##END');
  const calls = 200_000;
  const callNs: number[] = [];
  const subNs: number[] = [];
  const scan: number[] = [];
  let sink = 0;
  for (let r = 0; r < 6; r++) {
    let t0 = nowMs();
    for (let i = 0; i < calls; i++) sink += pcm.indexOf(marker, (i * 37) % (pcm.length - 4096));
    if (r > 0) callNs.push(((nowMs() - t0) * 1e6) / calls);
    t0 = nowMs();
    for (let i = 0; i < calls; i++) sink += pcm.subarray(i, i + 640).length;
    if (r > 0) subNs.push(((nowMs() - t0) * 1e6) / calls);
    t0 = nowMs();
    for (let at = pcm.indexOf(marker); at >= 0; at = pcm.indexOf(marker, at + 1)) sink += 1;
    if (r > 0) scan.push(pcm.length / 1e3 / (nowMs() - t0));
  }
  if (sink === 0) throw new Error('unreachable');
  return { indexOfCallNs: median(callNs), subarrayNs: median(subNs), scanMBps: median(scan) };
}

/** Reference costs measured in several processes: the median of each. */
export function medianReference(refs: readonly Reference[]): Reference {
  return {
    indexOfCallNs: median(refs.map((r) => r.indexOfCallNs)),
    subarrayNs: median(refs.map((r) => r.subarrayNs)),
    scanMBps: median(refs.map((r) => r.scanMBps)),
  };
}
