/**
 * Hearing the page as a listener would, for the voice latency bench: every connection to an
 * AudioContext's destination is routed through the bench's tap worklet (output-tap-worklet.ts),
 * which reports where sound starts and stops in render frames; the page turns each into the
 * wall-clock time it reaches the output with `AudioContext.getOutputTimestamp()` (which includes
 * the output latency after rendering). Results are in `window.__benchOutput.events`.
 *
 * The app is not changed for this: an init script patches `AudioNode.prototype.connect` before
 * the app's code runs, and loads the worklet modules from blob URLs (worklet fetches do not go
 * through Playwright's routes), so the page's context must be made with `bypassCSP: true`. The
 * same script can hand the page another playback worklet in place of the built one.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import ts from 'typescript';
import { PAGE_HOPS_JS } from './reply-hops.js';

const here = path.dirname(fileURLToPath(import.meta.url));
/** How many sound/silence events a page keeps (a bench run has a few hundred). */
const MAX_EVENTS = 5000;

export interface HeardEvent {
  kind: 'sound' | 'silence';
  /** Wall-clock ms (`performance.timeOrigin + performance.now()`) it reaches the output. */
  at: number;
}

/** A worklet module of this folder as the browser runs it: TypeScript without its types. */
export async function workletJs(file: string): Promise<string> {
  const source = await readFile(path.join(here, file), 'utf8');
  return ts.transpileModule(source, {
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
  }).outputText;
}

/**
 * Runs in the page before its scripts, with the tap's code and optionally a player's. Kept as
 * plain JS: it is sent as text, and the bench's tsconfig has no DOM types.
 */
function initScript(tapJs: string, playerJs: string | undefined): string {
  return `(() => {
  const events = [];
  const out = { events, outputLatency: 0, baseLatency: 0, sampleRate: 0, playerServed: 0 };
  window.__benchOutput = out;
  ${PAGE_HOPS_JS}
  const moduleUrl = (js) => URL.createObjectURL(new Blob([js], { type: 'text/javascript' }));
  const tapUrl = moduleUrl(${JSON.stringify(tapJs)});
  const player = ${JSON.stringify(playerJs ?? null)};
  const playerUrl = player === null ? null : moduleUrl(player);
  const addModule = AudioWorklet.prototype.addModule;
  AudioWorklet.prototype.addModule = function (url, ...rest) {
    if (playerUrl && String(url).includes('/playback-worklet-')) {
      out.playerServed++;
      return addModule.call(this, playerUrl, ...rest);
    }
    return addModule.call(this, url, ...rest);
  };
  const taps = new WeakMap();
  const connect = AudioNode.prototype.connect;
  AudioNode.prototype.connect = function (dest, ...rest) {
    if (!(dest instanceof AudioDestinationNode)) return connect.call(this, dest, ...rest);
    const ctx = dest.context;
    let input = taps.get(ctx);
    if (!input) {
      input = ctx.createGain();
      connect.call(input, dest);
      taps.set(ctx, input);
      addModule.call(ctx.audioWorklet, tapUrl).then(() => {
        const tap = new AudioWorkletNode(ctx, 'bench-output-tap', {
          numberOfInputs: 1,
          numberOfOutputs: 1,
          outputChannelCount: [1],
          channelCount: 1,
          channelCountMode: 'explicit',
        });
        tap.port.onmessage = (ev) => {
          const ts = ctx.getOutputTimestamp();
          const heard =
            performance.timeOrigin + ts.performanceTime + (ev.data.frame / ctx.sampleRate - ts.contextTime) * 1000;
          if (events.length >= ${MAX_EVENTS}) events.shift();
          events.push({ kind: ev.data.kind, at: heard });
          out.outputLatency = ctx.outputLatency;
          out.baseLatency = ctx.baseLatency;
          out.sampleRate = ctx.sampleRate;
        };
        input.disconnect();
        connect.call(input, tap);
        connect.call(tap, dest);
      }, (err) => console.error('[bench] output tap', err));
    }
    return connect.call(this, input, ...rest);
  };
})();`;
}

/**
 * Put the tap in `page` (before it loads the app; its context made with `bypassCSP: true`).
 * With `playerJs`, the app's playback worklet is replaced by that code; `playerServed` in
 * `readOutput` says how many times it was, so a bench can check the replacement happened.
 */
export async function installOutputTap(page: Page, playerJs?: string): Promise<void> {
  const tapJs = await workletJs('output-tap-worklet.ts');
  await page.addInitScript(initScript(tapJs, playerJs));
}

export interface PageOutput {
  events: HeardEvent[];
  /** The context's own figures, for the report. */
  outputLatency: number;
  baseLatency: number;
  sampleRate: number;
  /** How many times the replacement player was loaded. */
  playerServed: number;
}

export function readOutput(page: Page): Promise<PageOutput> {
  return page.evaluate(() => {
    const o = (globalThis as unknown as { __benchOutput: PageOutput }).__benchOutput;
    return { ...o, events: o.events.map((e) => ({ ...e })) };
  });
}

/** One reply as heard: when its first sample reached the output, and the gaps in it. */
export interface HeardReply {
  firstAt: number;
  gaps: number;
  /** Where each gap began, ms after the first sample. */
  gapsAt: number[];
  gapMs: number;
  heardMs: number;
}

/**
 * The reply whose first frame was written at `writtenAt`: the first sound after it, and every
 * silence within the reply (`endGapMs` or more of silence ends it) that sound followed.
 */
export function heardReply(
  events: readonly HeardEvent[],
  writtenAt: number,
  endGapMs = 300,
): HeardReply | undefined {
  const start = events.findIndex((e) => e.kind === 'sound' && e.at > writtenAt);
  if (start < 0) return undefined;
  const firstAt = events[start]!.at;
  let gaps = 0;
  let gapMs = 0;
  const gapsAt: number[] = [];
  let end = firstAt;
  for (let i = start + 1; i < events.length; i++) {
    const e = events[i]!;
    if (e.kind !== 'silence') continue;
    end = e.at;
    const next = events[i + 1];
    if (!next || next.at - e.at >= endGapMs) break;
    gaps++;
    gapsAt.push(e.at - firstAt);
    gapMs += next.at - e.at;
  }
  return { firstAt, gaps, gapsAt, gapMs, heardMs: end - firstAt };
}
