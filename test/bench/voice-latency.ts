/**
 * Voice latency in the e2e setup (issue 4 §5): Chromium with the fake microphone playing
 * test/fixtures/what-time-is-it.wav, the browser host (advent-agent ui, in-process) serving the
 * built renderer, and the simulator as the server. A benchmark: nothing here fails on a number.
 *
 * (a) Client-added latency per 20 ms chunk: from the capture of the chunk's first sample to the
 *     core's socket write of the AUDIO_FRAME carrying it, so the 20 ms of framing are included.
 *     The write is timed by wrapping `net.Socket.prototype.write` for the bench's duration (on
 *     the core's socket to the simulator only). The simulator's own `received[i].at` is not used:
 *     an AUDIO_FRAME may contain `##END`, so its decoder holds each one as tentative until the
 *     next `##START` or a 20 ms idle flush, which would add up to 20 ms that are not the client's.
 * (b) Reply: from the simulator's write of the first reply AUDIO_FRAME to playback starting in
 *     the page (the playback worklet's first output of it, after its jitter buffer).
 * (c) Heard: from that write to the reply's first sample reaching the page's audio output, as a
 *     tap on the AudioContext's destination sees it (output-tap.ts: the render frame of the first
 *     non-silent sample, mapped to wall time by `getOutputTimestamp()`, so the output latency
 *     after rendering is in it), with the gaps heard inside each reply (underruns). Two pages
 *     listen to every reply: one with today's player, one with the player before its adaptive
 *     jitter buffer (playback-worklet-before.ts, served in place of the built one); they take
 *     turns pressing the mic, and both play each reply, so the two are heard on the same replies.
 *
 * The simulator runs in a child process (voice-sim.ts), as a real server is another machine: its
 * pacing timers do not wait behind the host's and the core's work on this event loop. It still
 * paces 20 ms frames in real time (frame k due at t0 + k·20 ms) and reports its write stamps.
 *
 * Both sides use wall-clock ms as `performance.timeOrigin + performance.now()` on one machine:
 * the page records its own (renderer/audio/engine.ts `timings`), Node stamps writes the same way.
 * How far apart the two processes' clocks are is measured (page.evaluate bracketed by Node
 * readings) and reported, not corrected for.
 */
import { existsSync } from 'node:fs';
import { Socket } from 'node:net';
import path from 'node:path';
import { type Browser, type Page, chromium } from 'playwright-core';
import { FrameType } from '../../app/wire/advent/frame.js';
import {
  type HeardReply,
  heardReply,
  installOutputTap,
  readOutput,
  workletJs,
} from './output-tap.js';
import { type Latency, latency } from './stats.js';
import {
  HOPS,
  type HopReport,
  type Stamp,
  hookCoreHops,
  hopReport,
  pickBridge,
} from './reply-hops.js';
import { type SimProcess, startSimProcess } from './voice-sim.js';
import { BROWSER_ARGS, findChromium, rendererDir, repo, startHost } from '../e2e/host.js';

const FIXTURE = path.join(repo, 'test', 'fixtures', 'what-time-is-it.wav');
const CHUNK_MS = 20;
const CHUNK_BYTES = 640;

export interface VoiceLatencyOptions {
  /** Push-to-talk turns. */
  turns: number;
  /** How long each press is held. */
  holdMs: number;
  /** Length of each spoken reply, streamed as 20 ms AUDIO_FRAMEs at real-time pace. */
  replyMs: number;
}

export const DEFAULT_VOICE: VoiceLatencyOptions = { turns: 16, holdMs: 2000, replyMs: 600 };

export interface VoiceLatencyResult {
  chromium: string;
  turns: number;
  holdMs: number;
  replyMs: number;
  /** (a) first sample captured (audio clock, see `how`) → AUDIO_FRAME at the server. */
  upload: Latency;
  /** (a) read the simple way: the chunk's last sample taken as captured when the page got it. */
  uploadFromPage: Latency;
  /** Part of (a): audio clock → the page receiving the chunk from the capture worklet, less 20 ms. */
  workletToPage: Latency;
  /** Part of (a): the page receiving the chunk → AUDIO_FRAME at the server. */
  pageToServer: Latency;
  /** Chunks written more than 40 ms after the page got them (held for voiceStart, or a stall). */
  lateChunks: number;
  /** (b) first reply AUDIO_FRAME written → playback started in the page. */
  reply: Latency;
  /** Part of (b): written → first reply audio handed to the page's player. */
  replyToPage: Latency;
  /** Part of (b): handed to the player → playback started (the jitter buffer). */
  replyBuffer: Latency;
  /** Reply chunks hop by hop, on the page with today's player (reply-hops.ts). */
  hops: HopReport;
  /** For each reply today's player heard with a gap: how far behind its pace it got at each hop. */
  gapCauses: string[];
  /** (c) first reply AUDIO_FRAME written → its first sample at the audio output, per player. */
  heard: { after: HeardStats; before: HeardStats };
  /** The AudioContext's own output figures (ms) and rate, as the page reported them. */
  output: { outputLatencyMs: number; baseLatencyMs: number; sampleRate: number };
  /** Captured bytes that did not line up with the AUDIO_FRAME bytes written (0 expected). */
  mismatchedBytes: number;
  /** Page clock minus Node clock, ms, ± half the best round trip it was read with. */
  clockOffset: { ms: number; within: number };
  /** The simulator process's clock minus this one's, ditto. */
  simClockOffset: { ms: number; within: number };
}

/** One player's replies as heard at the output. */
export interface HeardStats {
  latency: Latency;
  /** Replies with at least one gap, gaps in all, and their total length. */
  repliesWithGaps: number;
  gaps: number;
  gapMs: number;
  /** Replies the tap did not hear at all (0 expected). */
  missed: number;
}

function heardStats(replies: Array<HeardReply | undefined>, writes: number[]): HeardStats {
  const heard = replies.flatMap((r, i) => (r ? [r.firstAt - writes[i]!] : []));
  const got = replies.filter((r): r is HeardReply => r !== undefined);
  return {
    latency: latency(heard),
    repliesWithGaps: got.filter((r) => r.gaps > 0).length,
    gaps: got.reduce((n, r) => n + r.gaps, 0),
    gapMs: got.reduce((n, r) => n + r.gapMs, 0),
    missed: replies.length - got.length,
  };
}

export type VoiceLatencyOutcome =
  { ran: true; result: VoiceLatencyResult } | { ran: false; reason: string };

interface PageTimings {
  captureAt: number[];
  capturedBytes: number;
  replyAt: Array<{ taskId: string; at: number }>;
  playbackStartedAt: number[];
  phase: string | null;
}

const wallNow = (): number => performance.timeOrigin + performance.now();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** AUDIO_FRAME writes on sockets to `port`: wall time and payload bytes, in order. */
function hookAudioWrites(port: number): {
  writes: Array<{ at: number; bytes: number }>;
  restore(): void;
} {
  const writes: Array<{ at: number; bytes: number }> = [];
  const original = Socket.prototype.write;
  const OVERHEAD = 25; // "##START" + type + task id (8) + seq (4) + "##END"
  Socket.prototype.write = function (this: Socket, ...args: unknown[]) {
    const data = args[0];
    if (
      this.remotePort === port &&
      Buffer.isBuffer(data) &&
      data.length >= OVERHEAD &&
      data[7] === FrameType.AUDIO &&
      data.toString('latin1', 0, 7) === '##START'
    ) {
      const at = wallNow();
      const result = (original as (...a: unknown[]) => boolean).apply(this, args);
      writes.push({ at, bytes: data.length - OVERHEAD });
      return result;
    }
    return (original as (...a: unknown[]) => boolean).apply(this, args);
  } as typeof Socket.prototype.write;
  return {
    writes,
    restore: () => {
      Socket.prototype.write = original;
    },
  };
}

/** Page clock − Node clock, from the page.evaluate with the shortest round trip of a few. */
async function clockOffset(page: Page): Promise<{ ms: number; within: number }> {
  let best = { ms: Number.NaN, within: Number.POSITIVE_INFINITY };
  for (let i = 0; i < 20; i++) {
    const before = wallNow();
    const there = await page.evaluate(() => performance.timeOrigin + performance.now());
    const after = wallNow();
    if ((after - before) / 2 < best.within)
      best = { ms: there - (before + after) / 2, within: (after - before) / 2 };
  }
  return best;
}

async function until<T>(
  what: string,
  probe: () => Promise<T | undefined> | T | undefined,
  timeoutMs = 15_000,
  everyMs = 20,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline)
      throw new Error(`voice latency bench: timed out waiting for ${what}`);
    await sleep(everyMs);
  }
}

function readTimings(page: Page): Promise<PageTimings> {
  return page.evaluate(() => {
    const a = (
      globalThis as unknown as {
        __adventAudio: {
          captured: ArrayBuffer[];
          timings: Omit<PageTimings, 'phase' | 'capturedBytes'>;
        };
      }
    ).__adventAudio;
    return {
      captureAt: [...a.timings.captureAt],
      capturedBytes: a.captured.reduce((n, b) => n + b.byteLength, 0),
      replyAt: a.timings.replyAt.map((r) => ({ ...r })),
      playbackStartedAt: [...a.timings.playbackStartedAt],
      phase:
        (
          globalThis as unknown as {
            document: {
              querySelector(s: string): { getAttribute(n: string): string | null } | null;
            };
          }
        ).document
          .querySelector('[data-testid="mic-button"]')
          ?.getAttribute('data-phase') ?? null,
    };
  });
}

/** Today's player as the page last heard from it: its start delay and underruns so far. */
function playerState(
  page: Page,
): Promise<{ delayMs: number; jitterMs: number; underruns: number }> {
  return page.evaluate(() => {
    const a = (
      globalThis as unknown as {
        __adventAudio: { playbackDelayMs: number; playbackJitterMs: number; underruns: number };
      }
    ).__adventAudio;
    return { delayMs: a.playbackDelayMs, jitterMs: a.playbackJitterMs, underruns: a.underruns };
  });
}

/**
 * The page's reply hops: stamped by its bridge worker (renderer/audio/reply-router.ts: 'page' is
 * the frame reaching the worker's socket, 'player' its post to the worklet, wherever the page
 * decided it), or, with the bridge socket in the page, by the output tap's init script.
 */
async function pageHops(page: Page): Promise<{ page: Stamp[]; player: Stamp[] }> {
  type Hops = { page: Stamp[]; player: Stamp[] };
  for (const worker of page.workers()) {
    const hops = await worker
      .evaluate(() => {
        const h = (globalThis as unknown as { __adventReplyHops?: Hops }).__adventReplyHops;
        return h ? { page: [...h.page], player: [...h.player] } : undefined;
      })
      .catch(() => undefined);
    if (hops) return hops;
  }
  return page.evaluate(() => (globalThis as unknown as { __benchHops: Hops }).__benchHops);
}

/** Add a connection to `sim` through the UI, as a user does, and wait for its REGISTER. */
async function connect(page: Page, sim: SimProcess): Promise<void> {
  const before = await sim.registrations();
  await page.getByTestId('nav-connections').click();
  await page.getByTestId('connection-add').click();
  const form = page.getByTestId('profile-form');
  await form.getByTestId('profile-name').fill('Bench server');
  await form.getByTestId('profile-host').fill('127.0.0.1');
  await form.getByTestId('profile-port').fill(String(sim.port));
  await form.getByTestId('profile-token').fill('bench-token');
  await form.getByTestId('profile-save-connect').click();
  await form.waitFor({ state: 'detached' });
  const toasts = page.getByTestId('toast');
  while ((await toasts.count()) > 0) {
    await toasts
      .first()
      .getByRole('button')
      .click({ timeout: 2000 })
      .catch(() => undefined);
  }
  await page.getByTestId('nav-chat').click();
  await page.locator('[data-testid="connection-banner"][data-state="ready"]').waitFor();
  await until('the REGISTER', async () =>
    (await sim.registrations()) > before ? true : undefined,
  );
}

/** A page of the app with the output tap; `before` has the old player in place of today's. */
interface Listener {
  player: 'after' | 'before';
  page: Page;
}

async function openListener(
  browser: Browser,
  url: string,
  player: 'after' | 'before',
  oldPlayer: string,
): Promise<Listener> {
  // The tap's modules load from blob URLs, which the page's CSP would refuse.
  const context = await browser.newContext({
    viewport: { width: 1280, height: 800 },
    bypassCSP: true,
  });
  const page = await context.newPage();
  await installOutputTap(page, player === 'before' ? oldPlayer : undefined);
  await page.goto(url);
  await page.getByTestId('nav-chat').waitFor();
  await page.waitForFunction(
    "!document.querySelector('[data-testid=bridge-status]') && !document.querySelector('.page-loading')",
  );
  return { player, page };
}

export async function runVoiceLatencyBench(
  opts: VoiceLatencyOptions,
  log: (line: string) => void,
): Promise<VoiceLatencyOutcome> {
  let exe: string | undefined;
  try {
    exe = findChromium();
  } catch {
    exe = undefined;
  }
  if (!exe) return { ran: false, reason: 'no Chromium found (set CHROME_PATH)' };
  if (!existsSync(path.join(rendererDir, 'index.html')))
    return { ran: false, reason: 'the renderer is not built (npx vite build)' };

  // The server in a process of its own (voice-sim.ts), so that its pacing does not wait for the
  // host's and the core's work on this event loop; it reports its writes.
  const sim = await startSimProcess(opts.replyMs);
  const { turns, firstReplyWrite, written } = sim;
  const hook = hookAudioWrites(sim.port);
  const coreHops = hookCoreHops();
  let host: Awaited<ReturnType<typeof startHost>> | undefined;
  let browser: Browser | undefined;
  try {
    host = await startHost();
    browser = await chromium.launch({
      executablePath: exe,
      headless: true,
      args: [
        ...BROWSER_ARGS,
        '--autoplay-policy=no-user-gesture-required',
        '--use-fake-device-for-media-stream',
        `--use-file-for-fake-audio-capture=${FIXTURE}`,
        '--use-fake-ui-for-media-stream',
      ],
    });
    const oldPlayer = await workletJs('playback-worklet-before.ts');
    const after = await openListener(browser, host.url, 'after', oldPlayer);
    const before = await openListener(browser, host.url, 'before', oldPlayer);
    // One core serves both pages: one connection, which both see, and both play every reply.
    await connect(after.page, sim);
    await before.page.getByTestId('nav-chat').click();
    await before.page.locator('[data-testid="connection-banner"][data-state="ready"]').waitFor();
    const offset0 = await clockOffset(after.page);
    const simOffset = await sim.clockOffset();

    const upload: number[] = [];
    const uploadFromPage: number[] = [];
    const workletToPage: number[] = [];
    const pageToServer: number[] = [];
    const reply: number[] = [];
    const replyToPage: number[] = [];
    const replyBuffer: number[] = [];
    const writes: number[] = [];
    const heard: Record<Listener['player'], Array<HeardReply | undefined>> = {
      after: [],
      before: [],
    };
    let lateChunks = 0;
    let mismatchedBytes = 0;

    for (let t = 0; t < opts.turns; t++) {
      // The pages take turns talking; (a) is read on the page that talked.
      const { page } = t % 2 === 0 ? after : before;
      const writesBefore = hook.writes.length;
      const turnsBefore = turns.length;
      const box = await page.getByTestId('mic-button').boundingBox();
      if (!box) throw new Error('the mic button is not on screen');
      await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
      await page.mouse.down();
      await page.locator('[data-testid="mic-button"][data-phase="listening"]').waitFor();
      await sleep(opts.holdMs);
      await page.mouse.up();
      const turn = await until('the turn at the server', () => turns[turnsBefore]);
      // The simulator reports a reply's writes once it has written all of it; the pages are left
      // alone while it streams (a poll is work on the very thread that hands audio to the player).
      const written = await until('the reply written', () => firstReplyWrite.get(turn.taskId));
      await sleep(300);
      const page1 = await until(
        'playback to start and the turn to end',
        async () => {
          const p = await readTimings(page);
          return p.phase === 'idle' && p.playbackStartedAt.some((s) => s > written - 5)
            ? p
            : undefined;
        },
        15_000,
        100,
      );
      // Both pages have played the whole reply: its last sound is followed by a long silence.
      for (const listener of [after, before]) {
        const r = await until(
          `the reply heard on the ${listener.player} page`,
          async () => {
            const { events } = await readOutput(listener.page);
            const got = heardReply(events, written - 5);
            return got && events.at(-1)?.kind === 'silence' && wallNow() - events.at(-1)!.at > 400
              ? got
              : undefined;
          },
          15_000,
          100,
        );
        heard[listener.player].push(r);
      }
      writes.push(written);

      // The turn's AUDIO_FRAME writes, in order, with the byte offset each starts at.
      const frames = hook.writes.slice(writesBefore);
      const starts: number[] = [];
      let offset = 0;
      for (const f of frames) {
        starts.push(offset);
        offset += f.bytes;
      }
      mismatchedBytes += Math.abs(offset - page1.capturedBytes);
      const at = page1.captureAt;
      // The audio clock: chunk k's last sample is at t0 + (k+1)·20 ms; t0 from the chunk that
      // reached the page soonest after its last sample (a lower bound for all of them).
      const t0 = Math.min(...at.map((a, k) => a - (k + 1) * CHUNK_MS));
      let j = 0;
      for (let k = 0; k < at.length; k++) {
        const byte = k * CHUNK_BYTES;
        while (j + 1 < frames.length && starts[j + 1]! <= byte) j++;
        const frame = frames[j];
        if (!frame || byte >= offset) break;
        const firstSample = t0 + k * CHUNK_MS;
        upload.push(frame.at - firstSample);
        uploadFromPage.push(frame.at - (at[k]! - CHUNK_MS));
        workletToPage.push(at[k]! - (firstSample + CHUNK_MS));
        pageToServer.push(frame.at - at[k]!);
        if (frame.at - at[k]! > 2 * CHUNK_MS) lateChunks++;
      }

      // (b) on the page with today's player, whichever page talked: both play every reply.
      const own = await readTimings(after.page);
      const started = own.playbackStartedAt.find((s) => s > written - 5);
      const got = own.replyAt.find((r) => r.taskId === turn.taskId.trim())?.at;
      if (started !== undefined) reply.push(started - written);
      if (got !== undefined && started !== undefined) {
        replyToPage.push(got - written);
        replyBuffer.push(started - got);
      }
      const ear = (r: HeardReply | undefined) =>
        r
          ? `${(r.firstAt - written).toFixed(1)} ms${r.gaps ? `, gaps at ${r.gapsAt.map((g) => g.toFixed(0)).join('/')} ms` : ''}`
          : 'not heard';
      const player = await playerState(after.page);
      log(
        `  turn ${t + 1}/${opts.turns}: ${at.length} chunks; reply heard after ${ear(heard.after.at(-1))} (old player: ${ear(heard.before.at(-1))}); start delay now ${player.delayMs.toFixed(1)} ms (jitter ${player.jitterMs.toFixed(1)} ms), ${player.underruns} underruns so far`,
      );
    }
    if ((await readOutput(before.page)).playerServed === 0)
      throw new Error('the old player was never loaded: the comparison would be of one player');
    const out = await readOutput(after.page);
    const page = await pageHops(after.page);
    const hops = hopReport(
      {
        written,
        core: coreHops.core,
        bridge: pickBridge(coreHops.bridge.values(), page.page),
        page: page.page,
        player: page.player,
      },
      CHUNK_MS,
    );
    const gapCauses = turns.flatMap((turn, t) => {
      const r = heard.after[t];
      const worst = hops.worst.get(turn.taskId.trim());
      if (!r?.gaps || !worst) return [];
      const behind = HOPS.map((h) => `${h} ${worst[h].toFixed(0)}`).join(', ');
      return [
        `turn ${t + 1} (gaps at ${r.gapsAt.map((g) => g.toFixed(0)).join('/')} ms): ${behind}`,
      ];
    });
    for (const cause of gapCauses) log(`  behind pace, ms: ${cause}`);

    return {
      ran: true,
      result: {
        chromium: browser.version(),
        turns: opts.turns,
        holdMs: opts.holdMs,
        replyMs: opts.replyMs,
        upload: latency(upload),
        uploadFromPage: latency(uploadFromPage),
        workletToPage: latency(workletToPage),
        pageToServer: latency(pageToServer),
        lateChunks,
        reply: latency(reply),
        replyToPage: latency(replyToPage),
        replyBuffer: latency(replyBuffer),
        hops,
        gapCauses,
        heard: {
          after: heardStats(heard.after, writes),
          before: heardStats(heard.before, writes),
        },
        output: {
          outputLatencyMs: out.outputLatency * 1000,
          baseLatencyMs: out.baseLatency * 1000,
          sampleRate: out.sampleRate,
        },
        mismatchedBytes,
        clockOffset: offset0,
        simClockOffset: simOffset,
      },
    };
  } finally {
    hook.restore();
    coreHops.restore();
    await browser?.close().catch(() => undefined);
    await host?.stop().catch(() => undefined);
    await sim.stop().catch(() => undefined);
  }
}
