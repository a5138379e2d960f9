/**
 * Turns the measurements into the stdout tables and docs/PERFORMANCE.md. Targets are reported as
 * met or not met; nothing here fails.
 */
import os from 'node:os';
import type { DecodeCase, Reference } from './decode.js';
import { DIALECTS, type DialectId, type DialectResult } from './dialects.js';
import type { FlushCounts, RoundTripResult } from './roundtrip.js';
import { FLUSH_PACE } from '../../app/audit/flush-pace.js';
import type { Latency, Machine } from './stats.js';
import type { HeardStats, VoiceLatencyOutcome, VoiceLatencyResult } from './voice-latency.js';

export interface Results {
  machine: Machine;
  gc: boolean;
  decode: DecodeCase[];
  /** How many processes the decoding runs were pooled from (run.ts --processes). */
  decodeProcesses: number;
  reference: Reference;
  roundtrip: RoundTripResult;
  dialects: DialectResult;
  voice: VoiceLatencyOutcome;
  elapsedS: number;
  /** os.loadavg() (1, 5, 15 min) when the bench started and when it ended. */
  load: { start: number[]; end: number[] };
}

/** What a run of the decoding section alone (`--only decode`) has to report. */
export type DecodeResults = Pick<
  Results,
  'machine' | 'decode' | 'decodeProcesses' | 'reference' | 'elapsedS' | 'load'
>;

interface Table {
  head: string[];
  rows: string[][];
  /** Columns aligned right (numbers). */
  right?: number[];
}

function textTable(t: Table): string {
  const widths = t.head.map((h, i) =>
    Math.max(h.length, ...t.rows.map((r) => (r[i] ?? '').length)),
  );
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (t.right?.includes(i) ? c.padStart(widths[i]!) : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(t.head), widths.map((w) => '-'.repeat(w)).join('  '), ...t.rows.map(line)].join(
    '\n',
  );
}

function mdTable(t: Table): string {
  const esc = (c: string) => c.replace(/\|/g, '\\|');
  const sep = t.head.map((_, i) => (t.right?.includes(i) ? '---:' : '---'));
  return [t.head, sep, ...t.rows].map((r) => `| ${r.map(esc).join(' | ')} |`).join('\n');
}

const f1 = (n: number) => n.toFixed(1);
const f2 = (n: number) => n.toFixed(2);
const ms = (n: number) => (n < 10 ? n.toFixed(2) : n.toFixed(1));
const us = (msValue: number) => (msValue * 1000).toFixed(1);
const mbps = (n: number) => (n >= 100 ? n.toFixed(0) : n >= 1 ? n.toFixed(1) : n.toFixed(2));
const met = (ok: boolean) => (ok ? 'met' : 'NOT met');

function decodeTable(r: Pick<Results, 'decode'>): Table {
  return {
    head: [
      'Case',
      'Input (both decoders)',
      'FrameDecoder MB/s',
      'Baseline MB/s',
      'Ours ÷ baseline',
      'Target',
      'Result',
    ],
    right: [2, 3, 4],
    rows: r.decode.map((c) => [
      `(${c.id}) ${c.title}`,
      c.input,
      `${mbps(c.ours.mbps)} (best ${mbps(c.ours.best)})`,
      `${mbps(c.baseline.mbps)} (best ${mbps(c.baseline.best)})`,
      `${f1(c.ratio)}×`,
      c.target?.text ?? '—',
      c.target ? met(c.target.met) : '—',
    ]),
  };
}

/** Issue 9 §6: the rewritten decoder must stay within 10 % of the one before it, case by case. */
const SINCE_BEFORE_FLOOR = 0.9;

function sinceBeforeTable(r: Pick<Results, 'decode'>): Table {
  return {
    head: [
      'Case',
      'Input (both)',
      'FrameDecoder now MB/s',
      'Before MB/s',
      'Now ÷ before',
      'Same by CPU time',
      'Target',
      'Result',
    ],
    right: [2, 3, 4, 5],
    rows: r.decode.map((c) => {
      const s = c.sinceBefore;
      const target = c.id !== 'b+';
      return [
        `(${c.id})`,
        s.input,
        `${mbps(s.now.mbps)} (best ${mbps(s.now.best)})`,
        `${mbps(s.before.mbps)} (best ${mbps(s.before.best)})`,
        `${f2(s.ratio)}×`,
        `${f2(s.cpuRatio)}×`,
        target ? `≥ ${f2(SINCE_BEFORE_FLOOR)}×` : '—',
        target ? met(s.ratio >= SINCE_BEFORE_FLOOR) : '—',
      ];
    }),
  };
}

function latencyTable(r: Results): Table {
  return {
    head: [
      'Audit log on',
      'Mode',
      'Calls',
      'p50 ms',
      'p99 ms',
      'max ms',
      'Calls/s',
      'p50 < 1 ms',
      'p99 < 5 ms',
    ],
    right: [2, 3, 4, 5, 6],
    rows: r.roundtrip.rows.map((row) => [
      `${row.medium.name} (${row.medium.base}, ${row.medium.fsType ?? '?'})`,
      row.mode === 'sequential' ? 'sequential' : '100 at a time',
      String(row.latency.n),
      ms(row.latency.p50),
      ms(row.latency.p99),
      ms(row.latency.max),
      row.callsPerSec.toFixed(0),
      met(row.latency.p50 < 1),
      met(row.latency.p99 < 5),
    ]),
  };
}

function componentTable(r: Results): Table {
  return {
    head: ['Alone (sequential)', 'Audit log on', 'p50 ms', 'p99 ms'],
    right: [2, 3],
    rows: r.roundtrip.components.map((c) => [
      c.label,
      c.medium ?? '—',
      ms(c.latency.p50),
      ms(c.latency.p99),
    ]),
  };
}

const dialectLabel = (id: DialectId) => DIALECTS.find((d) => d.id === id)?.label ?? id;
const medium = (m: { name: string; base: string; fsType?: string }) =>
  `${m.name} (${m.base}, ${m.fsType ?? '?'})`;

function dialectTable(r: Results): Table {
  return {
    head: [
      'Dialect',
      'Audit log on',
      'Mode',
      'Calls',
      'p50 ms',
      'p99 ms',
      'mean ms',
      'max ms',
      'Calls/s',
      'p50 ÷ Advent p50',
    ],
    right: [3, 4, 5, 6, 7, 8, 9],
    rows: r.dialects.rows.map((row) => [
      dialectLabel(row.dialect),
      medium(row.medium),
      row.mode === 'sequential' ? 'sequential' : `${r.dialects.options.batch} at a time`,
      String(row.latency.n),
      ms(row.latency.p50),
      ms(row.latency.p99),
      ms(row.latency.mean),
      ms(row.latency.max),
      row.callsPerSec.toFixed(0),
      `${f2(row.ratio)}×`,
    ]),
  };
}

function wireTable(): Table {
  return {
    head: ['Dialect', 'On the wire'],
    rows: DIALECTS.map((d) => [d.label, d.wire]),
  };
}

function dialectRow(r: Results, id: DialectId, mediumName: string, mode: string) {
  return r.dialects.rows.find(
    (x) => x.dialect === id && x.medium.name === mediumName && x.mode === mode,
  );
}

/** "1.05× (XiaoZhi device)"-style list of the p50 ratios of one medium and mode. */
function ratios(r: Results, mediumName: string, mode: string): string {
  return DIALECTS.filter((d) => d.id !== 'advent')
    .map((d) => {
      const row = dialectRow(r, d.id, mediumName, mode);
      return row ? `${dialectLabel(d.id)} ${f2(row.ratio)}×` : undefined;
    })
    .filter((x) => x !== undefined)
    .join(', ');
}

const METHOD_NOTE = '`get_current_time` (`{"format":"simple"}`)';

/** Robot executes that fell in the 5 s duplicate window, on average, during one medium's runs of `mode`. */
function robotWindow(r: Results, mediumName: string, mode: string): number | undefined {
  const rows = r.dialects.rows.filter((x) => x.medium.name === mediumName && x.mode === mode);
  const robot = rows.find((x) => x.dialect === 'robot');
  const wall = rows.reduce((sum, x) => sum + x.wallMs, 0);
  if (!robot || wall <= 0) return undefined;
  return Math.min(robot.latency.n, (robot.latency.n * 5_000) / wall);
}

/** Observations on the per-dialect round trip, computed from this run's numbers. */
function dialectNotes(r: Results): string[] {
  const out: string[] = [];
  const d = r.dialects;
  const o = d.options;
  out.push(
    `How: one agent connected to five simulators at once; each sends ${METHOD_NOTE}, checks that the ` +
      `result succeeded and times send → result. After ${o.warmup} sequential calls and two batches ` +
      `per dialect, the dialects take turns: ${o.block} sequential calls each per turn (${o.sequential} ` +
      `in all), then one batch of ${o.batch} each per turn (${o.concurrent} in all), the order rotated ` +
      `every turn, so a busy moment of the machine falls on all of them alike. Calls/s counts only the ` +
      `time of a dialect's own turns. Simulators and agent share one process and event loop, so each ` +
      `simulator's own work (its JSON, its checks) is in its numbers, as in §2.`,
  );
  for (const m of [...new Set(d.rows.map((x) => x.medium.name))]) {
    const seq = ratios(r, m, 'sequential');
    const conc = ratios(r, m, 'concurrent');
    out.push(
      `p50 ÷ Advent's p50, audit on ${m}: sequential ${seq}` +
        (conc ? `; ${o.batch} at a time ${conc}.` : '.'),
    );
  }
  const advDisk = dialectRow(r, 'advent', 'disk', 'sequential');
  const advTmp = dialectRow(r, 'advent', 'tmpfs', 'sequential');
  const gateDisk = componentOf(r, 'gate:', 'disk');
  const gateTmp = componentOf(r, 'gate:', 'tmpfs');
  if (advDisk && gateDisk) {
    out.push(
      `The gate and its audit fsync are the largest part of every call, whatever the dialect: the ` +
        `gate alone (agent.dispatch, no wire, §2) takes ${ms(gateDisk.latency.p50)} ms p50 of Advent's ` +
        `${ms(advDisk.latency.p50)} ms with the audit on disk` +
        (gateTmp && advTmp
          ? `, and ${ms(gateTmp.latency.p50)} ms of ${ms(advTmp.latency.p50)} ms on tmpfs, where ` +
            `fsync is free`
          : '') +
        `. The p99s on disk are mostly the fsync's: a slow flush holds every call waiting for it, ` +
        `whichever connection it came from.`,
    );
  }
  const ref = d.reference;
  const on = advTmp ? 'tmpfs' : 'disk';
  const gate = advTmp ? gateTmp : gateDisk;
  if (gate) {
    const rest = DIALECTS.filter((x) => x.id !== 'robot-x2')
      .map((x) => {
        const row = dialectRow(r, x.id, on, 'sequential');
        return row ? `${x.label} ${ms(row.latency.p50 - gate.latency.p50)} ms` : undefined;
      })
      .filter((x) => x !== undefined)
      .join(', ');
    const adv = dialectRow(r, 'advent', on, 'sequential');
    const diffs = (['xiaozhi', 'endpoint'] as const)
      .map((id) => dialectRow(r, id, on, 'sequential'))
      .filter((x) => x !== undefined)
      .map((x) => Math.abs(x.latency.p50 - adv!.latency.p50));
    const spread = adv && diffs.length ? Math.max(...diffs) : undefined;
    let wire = '';
    if (ref) {
      const ws = ref.wsEcho.p50 - ref.tcpEcho.p50;
      wire =
        ` JSON is a small part of that: JSON.stringify + JSON.parse of one XiaoZhi request ` +
        `(${ref.requestBytes} B) and its reply (${ref.replyBytes} B), what one call costs in JSON at ` +
        `both ends together, takes ${f1(ref.jsonUs)} µs (the other dialects' messages are of about ` +
        `the same size). Nor is the WebSocket framing much: that request echoed over loopback takes ` +
        `${ms(ref.tcpEcho.p50)} ms p50 over bare TCP and ${ms(ref.wsEcho.p50)} ms over a WebSocket ` +
        `(ws at both ends, no compression; the client masks each frame), ` +
        (ws > 0.005 ? `about ${ms(ws)} ms more per round trip. ` : `no measurable difference. `) +
        `The rest is event-loop turns, socket reads and writes and each dialect's own code at ` +
        `both ends (simulator included)` +
        (spread !== undefined
          ? `; XiaoZhi and the endpoint are within ${ms(spread)} ms p50 of Advent's frames over TCP.`
          : '.');
    }
    out.push(
      `What is left after the gate (sequential p50 less the gate's p50, audit on ${on}) is the wire ` +
        `and the simulators: ${rest}.${wire}`,
    );
  }
  const endpoint = dialectRow(r, 'endpoint', on, 'sequential');
  const once = dialectRow(r, 'robot', on, 'sequential');
  const twice = dialectRow(r, 'robot-x2', on, 'sequential');
  const onceConc = dialectRow(r, 'robot', on, 'concurrent');
  const endpointConc = dialectRow(r, 'endpoint', on, 'concurrent');
  const window = robotWindow(r, on, 'sequential');
  if (endpoint && once && ref && ref.dedupe.length) {
    const slower =
      once.latency.p50 - endpoint.latency.p50 > 0.03 ||
      (onceConc && endpointConc && onceConc.latency.p50 > 1.1 * endpointConc.latency.p50);
    const cost = ref.dedupe.map((x) => `${f1(x.us)} µs with ${x.entries}`).join(', ');
    out.push(
      `Robot ${slower ? 'is slower than' : 'keeps up with'} the endpoint on the same kind of ` +
        `WebSocket (sequential ` +
        `${ms(once.latency.p50)} ms p50 against ${ms(endpoint.latency.p50)} ms on ${on}` +
        (onceConc && endpointConc
          ? `; ${o.batch} at a time ${ms(onceConc.latency.p50)} ms against ` +
            `${ms(endpointConc.latency.p50)} ms`
          : '') +
        `). The robot session checks every execute against those of the last 5 s ` +
        `(\`RecentExecutes.arrive\`, app/wire/robot/dedupe.ts, indexed by tool and input and ` +
        `expired from the front; the copies of one call not yet paired with a twin are queued ` +
        `oldest first, so however many identical executes the window holds, and here every ` +
        `execute is identical, an arrival looks at one). Alone it takes ` +
        `${cost} same-tool executes already in the window.` +
        (window !== undefined
          ? ` In this run the robot session received about ${window.toFixed(0)} executes per 5 s ` +
            `during its sequential turns, and each batch of ${o.batch} is checked one after the other ` +
            `in the concurrent ones.`
          : '') +
        (slower
          ? ` The check accounts for microseconds of that difference; the rest (the robot ` +
            `session's and its simulator's own code) was not broken down further.`
          : ''),
    );
  }
  if (once && twice) {
    out.push(
      `Robot, each execute sent twice (as the reference server does): p50 ${ms(twice.latency.p50)} ms ` +
        `against ${ms(once.latency.p50)} ms sent once (sequential, audit on ${on}). The id-less copy is ` +
        `parsed, goes through the duplicate check (whose window now holds both copies) and is recorded ` +
        `in the audit log as a duplicate without running. It is not answered, so the result does not ` +
        `wait for it, but it shares the event loop and the audit's group commit.`,
    );
  }
  if (d.audit.length)
    out.push(
      `Audit records written: ${d.audit.map((a) => `${a.records} (${a.medium})`).join(', ')}; the ` +
        `robot's id-less copies are among them.`,
    );
  out.push(
    d.violations.length
      ? `Protocol violations the simulators reported: ${d.violations.length} (first: ${d.violations[0]}).`
      : 'The simulators reported no protocol violation.',
  );
  return out;
}

function memoryFacts(r: Results) {
  const m = r.roundtrip.memory;
  const rssGrowth = m.after.rssMB - m.before.rssMB;
  const heapGrowth = m.after.heapUsedMB - m.before.heapUsedMB;
  const agentRetained = m.withoutSim.heapUsedMB - m.withoutBoth.heapUsedMB;
  const simRetained = m.after.heapUsedMB - m.withoutSim.heapUsedMB;
  const perRecordKB = (agentRetained * 1e3) / Math.max(1, m.auditRecords);
  return { m, rssGrowth, heapGrowth, agentRetained, simRetained, perRecordKB };
}

function memoryTable(r: Results): Table {
  const { m, rssGrowth, heapGrowth, agentRetained, simRetained, perRecordKB } = memoryFacts(r);
  return {
    head: ['Measure', 'MB', 'Target', 'Result'],
    right: [1],
    rows: [
      ['RSS before', f1(m.before.rssMB), '', ''],
      [`RSS after ${m.calls} calls`, f1(m.after.rssMB), '', ''],
      ['RSS growth', f1(rssGrowth), '< 10 MB', met(rssGrowth < 10)],
      [
        'Heap used: before → after',
        `${f1(m.before.heapUsedMB)} → ${f1(m.after.heapUsedMB)}`,
        '',
        '',
      ],
      ['Heap growth', f1(heapGrowth), '', ''],
      [
        `Heap freed by letting go of the closed agent (${m.auditRecords} audit records in memory)`,
        `${f1(agentRetained)} (${f2(perRecordKB)} KB per record)`,
        '',
        '',
      ],
      ['Heap freed by letting go of the simulator', f1(simRetained), '', ''],
      ['RSS after letting go of both', f1(m.withoutBoth.rssMB), '', ''],
    ],
  };
}

function voiceTable(v: VoiceLatencyResult): Table {
  const row = (label: string, l: Latency, target = '', ok?: boolean): string[] => [
    label,
    String(l.n),
    ms(l.p50),
    ms(l.p95),
    ms(l.p99),
    ms(l.max),
    target,
    ok === undefined ? '' : met(ok),
  ];
  const after = v.heard.after;
  const before = v.heard.before;
  return {
    head: ['Measure', 'n', 'p50 ms', 'p95 ms', 'p99 ms', 'max ms', 'Target', 'Result'],
    right: [1, 2, 3, 4, 5],
    rows: [
      row(
        '(a) chunk: first sample captured → its AUDIO_FRAME written to the server socket',
        v.upload,
        'p50 < 30 ms',
        v.upload.p50 < 30,
      ),
      row('    of which: capture worklet → page, beyond the 20 ms of framing', v.workletToPage),
      row('    of which: page → AUDIO_FRAME written (bridge WebSocket, core)', v.pageToServer),
      row(
        "(a') the same, taking the chunk's last sample as captured when the page gets it",
        v.uploadFromPage,
      ),
      row(
        '(b) first reply AUDIO_FRAME written by the server → playback started in the page',
        v.reply,
      ),
      row('    of which: written → reply audio handed to the page’s player', v.replyToPage),
      row('    of which: handed to the player → playback started (jitter buffer)', v.replyBuffer),
      row('    first chunk, written → decoded by the core', v.hops.first.core),
      row('    first chunk, decoded → sent on the bridge WebSocket', v.hops.first.bridge),
      row('    first chunk, sent → received by the page’s bridge worker', v.hops.first.page),
      row('    first chunk, received → posted to the player', v.hops.first.player),
      row(
        '    every later chunk: behind the reply’s pace when posted to the player',
        v.hops.lateness.player,
      ),
      row(
        `(c) first reply AUDIO_FRAME written → first reply sample at the page's audio output; gaps: ${gapText(after)}`,
        after.latency,
        'p50 < 80 ms, no gaps',
        after.latency.p50 < 80 && after.gaps === 0 && after.missed === 0,
      ),
      row(
        `(c) the same with the player before the adaptive jitter buffer, same replies; gaps: ${gapText(before)}`,
        before.latency,
      ),
    ],
  };
}

function gapText(h: HeardStats): string {
  const missed = h.missed ? `, ${h.missed} replies not heard` : '';
  return h.gaps === 0
    ? `none${missed}`
    : `${h.gaps} (${ms(h.gapMs)} ms) in ${h.repliesWithGaps} of ${h.latency.n} replies${missed}`;
}

function voiceNotes(v: VoiceLatencyResult): string[] {
  return [
    `Voice, up: (a) counts from the chunk's first sample on the audio clock (chunk k's last sample at ` +
      `t0 + (k+1)·20 ms, t0 from the chunk the page got soonest), so the 20 ms of framing, the capture ` +
      `worklet's render quantum and its hop to the page are all in it; (a') starts the clock when the page ` +
      `gets the chunk, less 20 ms, which leaves out the worklet hop. From the page to the socket write ` +
      `takes ${ms(v.pageToServer.p50)} ms p50 (${v.lateChunks} of ${v.pageToServer.n} chunks took more than ` +
      `40 ms: at the start of a turn the page holds the audio until the press has lasted 0.3 s and ` +
      `voiceStart has answered, so a shorter press sends nothing; or a stall of a busy machine). ${v.mismatchedBytes === 0 ? 'Every captured byte was written, in order.' : `${v.mismatchedBytes} captured bytes did not line up with the bytes written.`}`,
    `Voice, down: (c) is what a listener hears: a tap on the AudioContext's destination (injected by ` +
      `the bench, test/bench/output-tap.ts) stamps the render frame of the reply's first non-silent ` +
      `sample and maps it to wall time with \`getOutputTimestamp()\`, which adds what the output holds ` +
      `after rendering (this context: ${f1(v.output.outputLatencyMs)} ms output latency, ` +
      `${f1(v.output.baseLatencyMs)} ms base latency, ${v.output.sampleRate} Hz). A gap is a run of at ` +
      `least 1 ms of exact silence inside a reply: the player ran dry. Two pages heard every reply, ` +
      `one with today's player and one with the player before (test/bench/playback-worklet-before.ts, ` +
      `which waited for 60 ms of audio, or 100 ms without more); they took turns talking.`,
    `Voice, down: (b) and its parts are the page's view, on the page with today's player. The core's ` +
      `FrameDecoder hands an AUDIO_FRAME that ends a read on at once (earlyAudio). The page's bridge ` +
      `socket lives in a worker of its own (renderer/bridge/bridge-worker.ts), which posts the reply the ` +
      `page's voice controller plays (or a reply nobody announced, which takes over as the controller ` +
      `would do it) straight to the playback worklet; the page hears of it afterwards. The first chunk ` +
      `of each reply, hop by hop (reply-hops.ts): written → decoded ${ms(v.hops.first.core.p50)} ms p50, → ` +
      `sent to the page ${ms(v.hops.first.bridge.p50)}, → received by the bridge worker ` +
      `${ms(v.hops.first.page.p50)} (p95 ${ms(v.hops.first.page.p95)}), → posted to the player ` +
      `${ms(v.hops.first.player.p50)}. The player's adaptive jitter buffer (renderer/audio/jitter-buffer.ts) ` +
      `then waits its start delay (10 ms; longer while the reply playing has been late, or when lateness ` +
      `recurred within the last 20 s and 3 replies, plus 20 ms for each underrun in such a window while ` +
      `lateness recurs in it: an isolated stall is forgotten with its window) plus one render burst (the context's ` +
      `baseLatency, ${f1(v.output.baseLatencyMs)} ms: the audio thread renders that much at once, which ` +
      `could pass the whole delay at one go): ${ms(v.replyBuffer.p50)} ms p50 here, with the wait for the ` +
      `audio thread's next burst. Playback start is estimated from the player's first report less what ` +
      `it says it had played by then. The context asks for \`latencyHint: 'interactive'\`, and the ` +
      `reply's rate is converted by linear interpolation, which holds back one source sample (62.5 µs ` +
      `at 16 kHz).`,
    ...(v.gapCauses.length
      ? [
          `Voice, gaps: the most (ms) any of the reply's chunks fell behind its pace at each hop, for each ` +
            `reply heard with a gap; lateness that is already there when written is the simulator's own ` +
            `timer on this busy machine (in a process of its own, test/bench/voice-sim.ts, frame k due at ` +
            `t0 + k·20 ms: what is left there is the CPUs being busy, not the host's event loop), ` +
            `lateness that appears at "page" arose between the host's send and the bridge worker ` +
            `(Chromium's processes waiting for a CPU): ${v.gapCauses.join('; ')}.`,
        ]
      : []),
    `Voice, clocks: page and Node both use \`performance.timeOrigin + performance.now()\`; the page's ` +
      `clock read ${f2(v.clockOffset.ms)} ms ± ${f2(v.clockOffset.within)} ms from Node's (not corrected ` +
      `for); the simulator's process read ${f2(v.simClockOffset.ms)} ms ± ${f2(v.simClockOffset.within)} ms ` +
      `from it. The simulator runs in a child process (test/bench/voice-sim.ts) so that its pacing ` +
      `timers do not wait behind the host's and the core's work, as a real server is another machine; ` +
      `it still paces 20 ms frames in real time. Chromium, the host, the core and the simulator share this machine's CPU, so a busy ` +
      `machine shows in the p99s. ${v.turns} push-to-talk turns of ${(v.holdMs / 1000).toFixed(1)} s, ` +
      `replies of ${v.replyMs} ms; Chromium ${v.chromium}.`,
  ];
}

function rowOf(r: Results, medium: string, mode: string) {
  return r.roundtrip.rows.find((x) => x.medium.name === medium && x.mode === mode);
}

function componentOf(r: Results, prefix: string, medium?: string) {
  return r.roundtrip.components.find((c) => c.label.startsWith(prefix) && c.medium === medium);
}

/** Observations computed from this run's numbers. */
function notes(r: Results): string[] {
  const out: string[] = [];
  const a = r.decode.find((c) => c.id === 'a');
  const b = r.decode.find((c) => c.id === 'b');
  const bl = r.decode.find((c) => c.id === 'b+');
  const ref = r.reference;
  if (a) {
    const nsPerFrame = (665 / (a.ours.mbps * 1e6)) * 1e9;
    out.push(
      `Decoding, 64 KiB chunks: ${nsPerFrame.toFixed(0)} ns per 665-byte audio frame. On this machine one ` +
        `\`Buffer.indexOf\` call from a random point of the stream costs ${ref.indexOfCallNs.toFixed(0)} ns, one ` +
        `\`subarray\` ${ref.subarrayNs.toFixed(0)} ns, and scanning runs at ${mbps(ref.scanMBps)} MB/s; ` +
        `1 GB/s leaves 665 ns per frame for everything. A CPU profile at the time of writing put about 40 % of ` +
        `decoding in \`Buffer.indexOf\`: each audio frame is scanned once for \`##START\` and once for \`##END\` ` +
        `(about four native calls per frame), plus a header string and a payload view per frame.`,
    );
  }
  if (b) {
    const nsPerByte = 1e3 / b.ours.mbps;
    out.push(
      `Decoding, one byte per chunk: ${nsPerByte.toFixed(0)} ns per byte for FrameDecoder, which is all fixed ` +
        `cost per \`push\` (at the time of writing: a view of the pending bytes, a one-byte copy, and two ` +
        `\`Buffer.indexOf\` calls per byte). The baseline's extra work per byte is proportional to the frame ` +
        `being assembled, and a 665-byte frame is short enough that its copies and rescans cost about the same ` +
        `as that fixed cost, so the ratio stays near 1×` +
        (bl
          ? `. With 1-second frames (32 000 bytes) the quadratic cost shows: ${f1(bl.ratio)}× in (b+).`
          : '.'),
    );
  }
  const seqDisk = rowOf(r, 'disk', 'sequential');
  const seqTmp = rowOf(r, 'tmpfs', 'sequential');
  const concDisk = rowOf(r, 'disk', 'concurrent');
  const service = componentOf(r, 'service:');
  const auditDisk = componentOf(r, 'audit:', 'disk');
  const auditTmp = componentOf(r, 'audit:', 'tmpfs');
  const gateTmp = componentOf(r, 'gate:', 'tmpfs');
  const gateDisk = componentOf(r, 'gate:', 'disk');
  if (seqDisk && auditDisk) {
    out.push(
      `Round trip, sequential, audit on disk: p50 ${ms(seqDisk.latency.p50)} ms. Every call appends one audit ` +
        `record and waits for the fsync that covers it (appends arriving meanwhile share one write + fsync) — ` +
        `${ms(auditDisk.latency.p50)} ms p50 / ${ms(auditDisk.latency.p99)} ms p99 on its own here` +
        (auditTmp ? ` (${ms(auditTmp.latency.p50)} ms on tmpfs, where fsync is free)` : '') +
        (gateDisk && gateTmp
          ? `; the gate without the wire takes ${ms(gateDisk.latency.p50)} ms p50 with the log on disk and ` +
            `${ms(gateTmp.latency.p50)} ms on tmpfs, so the disk costs about ` +
            `${ms(gateDisk.latency.p50 - gateTmp.latency.p50)} ms per call`
          : '') +
        '. The audit is part of the gate, so it is part of every round trip.',
    );
  }
  if (seqTmp && service && gateTmp) {
    out.push(
      `With the audit on tmpfs the round trip is still ${ms(seqTmp.latency.p50)} ms p50: the gate alone takes ` +
        `${ms(gateTmp.latency.p50)} ms, of which get_current_time itself (preview + run, no gate) is ` +
        `${ms(service.latency.p50)} ms. The rest is the wire and the simulator, which share the event loop.`,
    );
  }
  if (concDisk) {
    out.push(
      `Concurrent calls: audit appends are group-committed (the records that arrive while one fsync runs go ` +
        `to disk together in the next), so a batch of 100 costs a few fsyncs, not 100: p50 ` +
        `${ms(concDisk.latency.p50)} ms on disk. Throughput is ${concDisk.callsPerSec.toFixed(0)} calls/s on disk` +
        (rowOf(r, 'tmpfs', 'concurrent')
          ? ` and ${rowOf(r, 'tmpfs', 'concurrent')!.callsPerSec.toFixed(0)} calls/s on tmpfs.`
          : '.'),
    );
  }
  out.push(...gateTargets(r));
  const mem = memoryFacts(r);
  out.push(
    `Memory: the heap grew ${f1(mem.heapGrowth)} MB over ${mem.m.calls} calls, and ${f1(mem.agentRetained)} MB ` +
      `came back when the closed agent was let go (${f2(mem.perRecordKB)} KB per record): the audit log keeps ` +
      `a compact index of every record (about 34 bytes each) and only the newest 1 000 records whole; queries ` +
      `read the rest from disk. RSS growth also includes V8's young generation growing under allocation ` +
      `pressure and allocator memory not returned to the OS at once.`,
  );
  return out;
}

/** How the log's flushes of a run were made, and the stalls that sent them to the thread pool. */
function flushesText(f: FlushCounts): string {
  const all = f.inline + f.pool;
  return (
    `Of that run's ${all} audit flushes, ${f.inline} were made inline and ${f.pool} in the thread pool ` +
    `(a disk's flushes go to the pool until a window of them has proved quick, and for ` +
    `${FLUSH_PACE.coolMs / 1000} s after an inline one that took ${FLUSH_PACE.stallMs} ms or more: ` +
    `app/audit/flush-pace.ts); ${f.stalls} took ${FLUSH_PACE.stallMs} ms or more, ${f.inlineStalls} of them inline.`
  );
}

/**
 * Issue 9 §7's targets, against references measured in this run: the gate alone on tmpfs
 * ≤ 0.06 ms p50, and the sequential round trip with the audit on disk ≤ a bare MCP SDK round trip
 * + one fsync p50 (made inline, as the log makes it on a quick disk) + 0.1 ms. The write-ahead path (two durable records per call) is shown beside.
 */
function gateTargets(r: Results): string[] {
  const out: string[] = [];
  const gateTmp = componentOf(r, 'gate:', 'tmpfs');
  const writeTmp = componentOf(r, 'gate (write-ahead):', 'tmpfs');
  const writeDisk = componentOf(r, 'gate (write-ahead):', 'disk');
  const fsyncDisk = componentOf(r, 'fsync:', 'disk');
  const fsyncTmp = componentOf(r, 'fsync:', 'tmpfs');
  const bare = componentOf(r, 'bare MCP SDK:');
  const seqDisk = rowOf(r, 'disk', 'sequential');
  if (gateTmp) {
    out.push(
      `Gate alone on tmpfs (a read: one record, durable before the result leaves): ` +
        `${ms(gateTmp.latency.p50)} ms p50 against the target of 0.06 ms: ${gateTmp.latency.p50 <= 0.06 ? 'met' : 'not met'}` +
        (fsyncTmp
          ? `; the log's flush there is made inline (a RAM file system has no disk to wait for), while one write + fdatasync ` +
            `through the thread pool, as on a disk, takes ${ms(fsyncTmp.latency.p50)} ms p50`
          : '') +
        (writeTmp
          ? `. A service that can change something costs ${ms(writeTmp.latency.p50)} ms p50: its intent and its outcome are each durable before the next step`
          : '') +
        '.',
    );
  }
  if (seqDisk && bare && fsyncDisk) {
    // The log flushes a disk inline once it has proved quick (app/audit/flush-pace.ts), so the
    // fsync it pays is the inline one; the thread pool's, hand-off included, is shown beside.
    const fsyncInline = componentOf(r, 'fsync inline:', 'disk');
    const fsync = fsyncInline ?? fsyncDisk;
    const bound = bare.latency.p50 + fsync.latency.p50 + 0.1;
    const bareDurable = componentOf(r, 'bare MCP SDK + fsync:', 'disk');
    // The log writes its records over room made ready (app/audit/append.ts): its own flush.
    const own = componentOf(r, 'fsync in place:', 'disk');
    const ownBound = own && bare.latency.p50 + own.latency.p50 + 0.1;
    out.push(
      `Sequential round trip with the audit on disk: ${ms(seqDisk.latency.p50)} ms p50 against the bare MCP SDK ` +
        `round trip (${ms(bare.latency.p50)} ms, in-memory transport, no gate) + one fsync ` +
        `(${ms(fsync.latency.p50)} ms${fsyncInline ? `, made inline as the log makes it; ${ms(fsyncDisk.latency.p50)} ms through the thread pool` : ''}) ` +
        `+ 0.1 ms = ${ms(bound)} ms: ${seqDisk.latency.p50 <= bound ? 'met' : 'not met'}` +
        (bareDurable
          ? `. The bare server whose tool makes that same fsync answers in ${ms(bareDurable.latency.p50)} ms p50, ` +
            `${ms(bareDurable.latency.p50 - bare.latency.p50 - fsync.latency.p50)} ms beyond the sum of the two apart`
          : '') +
        (own && ownBound !== undefined
          ? `. The log writes each record over room made ready past its end (app/audit/append.ts), so its ` +
            `flush changes no file size and fdatasync has only the data to write: ${ms(own.latency.p50)} ms p50 ` +
            `for the same line written so. Counted against that flush instead, the bound is ${ms(ownBound)} ms: ` +
            `${seqDisk.latency.p50 <= ownBound ? 'met' : 'not met'}`
          : '') +
        (writeDisk
          ? `. A write-ahead call through the gate alone (two fsyncs) takes ${ms(writeDisk.latency.p50)} ms p50 on disk`
          : '') +
        '.' +
        (seqDisk.flushes ? ` ${flushesText(seqDisk.flushes)}` : ''),
    );
    const seqTmp = rowOf(r, 'tmpfs', 'sequential');
    const warm = componentOf(r, 'CPU: one audit record', 'disk');
    const woken = componentOf(r, 'CPU: the same, right after', 'disk');
    const gateDisk = componentOf(r, 'gate:', 'disk');
    if (seqTmp && gateTmp) {
      // Beyond the log's own flush (in place), which the busy-wait below stands for.
      const flush = own ?? fsync;
      const beyond = seqDisk.latency.p50 - flush.latency.p50;
      const wire = seqTmp.latency.p50 - gateTmp.latency.p50;
      const busy = componentOf(r, 'round trip, each flush a busy-wait', 'disk');
      out.push(
        `Beyond its fsync, the round trip on disk spends ${ms(beyond)} ms p50. The same round trip with the log in RAM ` +
          `takes ${ms(seqTmp.latency.p50)} ms, of which the gate is ${ms(gateTmp.latency.p50)} ms and the wire ` +
          `${ms(wire)} ms (both ends: the simulator's frames, JSON and promise, TCP over loopback twice, the agent's ` +
          `decoding, session and reply), against 0.1 ms allowed for everything but the fsync.` +
          (busy
            ? ` With each flush replaced by a busy-wait as long as that flush's p50 (no I/O, nothing durable), the ` +
              `round trip on disk takes ${ms(busy.latency.p50)} ms p50, ${ms(busy.latency.p50 - flush.latency.p50)} ms ` +
              `beyond the wait: the same code and the same time spent waiting cost that much. The real fsync costs ` +
              `${ms(Math.max(0, seqDisk.latency.p50 - busy.latency.p50))} ms more than the wait: what the disk flush ` +
              `does to the code around it, beyond its own time` +
              (warm && woken
                ? ` (building and hashing one audit record takes ${us(warm.latency.p50)} µs p50 warm and ` +
                  `${us(woken.latency.p50)} µs right after an fsync, ${(woken.latency.p50 / warm.latency.p50).toFixed(1)}×` +
                  (gateDisk
                    ? `; the gate alone spends ${ms(Math.max(0, gateDisk.latency.p50 - flush.latency.p50))} ms beyond ` +
                      `its fsync on disk, against ${ms(gateTmp.latency.p50)} ms in all in RAM`
                    : '') +
                  ')'
                : '') +
              `. A CPU left idle through a flush costs the code after it: ` +
              `${r.machine.idle ? `this machine's idle driver is ${r.machine.idle}, and` : 'on a virtual machine'} a halted ` +
              `vCPU wakes on cold caches. Keeping a CPU busy through the flush instead (the flush on a thread of its ` +
              `own, the event loop polling for its answer) was tried on this machine (2026-11-24, not part of this bench): ` +
              `faster in this back-to-back loop, ` +
              `but a call after an idle moment, as a voice server's calls come, then waited 1–3 ms for the woken thread ` +
              `to get a CPU, against 0.3 ms inline, so the log flushes inline.`
            : ''),
      );
    }
  }
  return out;
}

/** The load averages at start and end: other processes on the machine share its cores. */
function loadText(r: Pick<Results, 'load'>): string {
  const l = (v: number[]) => v.map((x) => x.toFixed(2)).join(' / ');
  return `${l(r.load.start)} at the start, ${l(r.load.end)} at the end (the bench itself keeps about one core busy)`;
}

function machineText(r: DecodeResults): string {
  const m = r.machine;
  return `${m.cpu}, ${m.cores} cores, ${f1(m.memoryGB)} GB, Node ${m.node}, ${m.platform}, ${m.date}`;
}

function printDecodeText(
  r: Pick<Results, 'decode' | 'decodeProcesses'>,
  write: (s: string) => void,
): void {
  const pooled = r.decodeProcesses > 1 ? `, pooled from ${r.decodeProcesses} processes` : '';
  write(`\n1. Frame decoding (MB/s = 10^6 bytes/s, median of the timed runs${pooled})\n`);
  write(`${textTable(decodeTable(r))}\n`);
  for (const c of r.decode) if (c.note) write(`(${c.id}) ${c.note}\n`);
  write('\nFrameDecoder now against before its rewrite as named states (same runs, same bytes)\n');
  write(`${textTable(sinceBeforeTable(r))}\n`);
}

/** `--only decode`: the machine, the load and section 1. */
export function printDecodeOnly(r: DecodeResults, write: (s: string) => void): void {
  write(`\nMachine: ${machineText(r)}\n`);
  write(`Load average (1/5/15 min): ${loadText(r)}\n`);
  printDecodeText(r, write);
  write(`\nDecoding bench time ${f1(r.elapsedS)} s\n`);
}

export function printText(r: Results, write: (s: string) => void): void {
  write(`\nMachine: ${machineText(r)}\n`);
  write(`Load average (1/5/15 min): ${loadText(r)}\n`);
  printDecodeText(r, write);
  write('\n2. MCP call round trip on loopback (get_current_time, auto-allowed, audited)\n');
  write(`${textTable(latencyTable(r))}\n\n`);
  write(`${textTable(componentTable(r))}\n`);
  write(
    '\n3. Call round trip per dialect (get_current_time from each simulator, one agent, turns rotated)\n',
  );
  write(`${textTable(dialectTable(r))}\n`);
  for (const n of dialectNotes(r)) write(`- ${n}\n`);
  printVoiceTable(r.voice, write);
  write(`\n5. Memory (${r.roundtrip.memory.how}; audit on ${r.roundtrip.memory.medium.name})\n`);
  write(`${textTable(memoryTable(r))}\n`);
  write('\nNotes\n');
  for (const n of notes(r)) write(`- ${n}\n`);
  if (r.voice.ran) for (const n of voiceNotes(r.voice.result)) write(`- ${n}\n`);
  write(
    `\nTotal bench time ${f1(r.elapsedS)} s${r.gc ? '' : ' (no --expose-gc: memory readings without a forced GC)'}\n`,
  );
}

function printVoiceTable(v: VoiceLatencyOutcome, write: (s: string) => void): void {
  write('\n4. Voice latency (Chromium + fake microphone, browser host, simulator)\n');
  if (v.ran) write(`${textTable(voiceTable(v.result))}\n`);
  else write(`not measured: ${v.reason}\n`);
}

/** The voice section alone (`npm run bench -- --only voice`). */
export function printVoiceOnly(v: VoiceLatencyOutcome, write: (s: string) => void): void {
  printVoiceTable(v, write);
  if (v.ran) for (const n of voiceNotes(v.result)) write(`- ${n}\n`);
}

const VOICE_HEADING = '## 4. Voice latency';

/** Section 4 of docs/PERFORMANCE.md. `alone`: from a run of this section only. */
export function voiceMarkdown(v: VoiceLatencyOutcome, alone = false): string {
  const when = alone
    ? `Measured on its own (\`--only voice\`, ${new Date().toISOString().slice(0, 10)}, load average ` +
      `${os
        .loadavg()
        .map((x) => x.toFixed(2))
        .join(' / ')}); the other sections are from the last full run.\n\n`
    : '';
  return `${VOICE_HEADING}

${
  v.ran
    ? `${when}Wall-clock ms between the two events of each row, over every 20 ms chunk of every turn (a) and
every reply (b, c). The targets: (a) from issue 4 §5 (it includes the 20 ms of framing), (c) from
issue 14 item 22 (heard at the output, without gaps).

${mdTable(voiceTable(v.result))}

${voiceNotes(v.result)
  .map((n) => `- ${n}`)
  .join('\n')}`
    : `Not measured in this run: ${v.reason}.`
}
`;
}

/** `doc` with its voice section replaced by `section`. */
export function spliceVoiceSection(doc: string, section: string): string {
  const from = doc.indexOf(`${VOICE_HEADING}\n`);
  const to = doc.indexOf('\n## ', from + VOICE_HEADING.length);
  if (from < 0 || to < 0) throw new Error(`no '${VOICE_HEADING}' section to replace`);
  return `${doc.slice(0, from)}${section}\n${doc.slice(to + 1)}`;
}

const DECODE_HEADING = '## 1. Frame decoding';

/**
 * Section 1 of docs/PERFORMANCE.md. `alone`: from a run of this section only, which says when it
 * ran and under what load, since the Machine table at the top is from another run.
 */
export function decodeMarkdown(r: DecodeResults, alone = false): string {
  const runs = Math.max(...r.decode.map((c) => c.ours.runs));
  const pooled =
    r.decodeProcesses > 1
      ? `${runs} timed runs per case pooled from ${r.decodeProcesses} processes run one after the other`
      : `${runs} timed runs per case`;
  return `${DECODE_HEADING}
${
  alone
    ? `
This section was measured on its own (\`npm run bench -- --only decode\`) on ${r.machine.date}: ` +
      `${pooled}, ${f1(r.elapsedS)} s in all; load average (1/5/15 min) ${loadText(r)}.
`
    : r.decodeProcesses > 1
      ? `\n${pooled[0]!.toUpperCase()}${pooled.slice(1)}.\n`
      : ''
}
MB/s are 10^6 bytes per second of stream (headers included), the median of the timed runs after a
warm-up (best run in brackets). 20 ms audio frames carry 640 bytes of PCM, nudged so no marker
hides inside. Case (b) uses a small stream because the baseline's work per byte grows with the
frame being assembled; the ratio is taken on that same stream for both decoders, and ours also ran
alone on a larger one.

${mdTable(decodeTable(r))}

${r.decode
  .filter((c) => c.note)
  .map((c) => `(${c.id}) ${c.note}.`)
  .join('\n')}

Reference costs on this machine: one \`Buffer.indexOf('##END')\` from a random point of an audio
stream ${r.reference.indexOfCallNs.toFixed(0)} ns, one \`subarray\` ${r.reference.subarrayNs.toFixed(0)} ns,
\`indexOf\` scanning ${mbps(r.reference.scanMBps)} MB/s.

### FrameDecoder now and before its rewrite as named states

Issue 9 §6 rewrote \`FrameDecoder\` as named states (seek header, text body, binary body, skip)
and asked that it stay within 10 % of the decoder before it on (a), (b) and (c). The decoder as it
was before is kept, frozen, in test/bench/frame-decoder-before.ts, and runs in the same
interleaved runs on the same bytes (case (b): the larger stream, whose runs are long enough to be
steadier), the two back to back in every run and in alternating order. Each "now ÷ before" is the
median of the per-run ratios (wall time), so a busy moment of a shared machine weighs on both
sides of one ratio; the MB/s columns are each side's own median. The same ratio by the CPU time the
process spent (getrusage: the decoding thread and V8's helpers) is shown beside it as a second
reading: it leaves out the moments the process waited for a core, but counts V8's background
compilation and collection. On a loaded machine the figures of one process move together (each has
its own JIT history), which is why \`--processes\` pools runs from several.

${mdTable(sinceBeforeTable(r))}
`;
}

/** `doc` with its section 1 replaced by `section` (a run of `--only decode`). */
export function spliceDecodeSection(doc: string, section: string): string {
  const from = doc.indexOf(`${DECODE_HEADING}\n`);
  const to = doc.indexOf('\n## ', from + DECODE_HEADING.length);
  if (from < 0 || to < 0) throw new Error(`no '${DECODE_HEADING}' section to replace`);
  return `${doc.slice(0, from)}${section}\n${doc.slice(to + 1)}`;
}

export function markdown(r: Results): string {
  const m = r.machine;
  const mem = r.roundtrip.memory;
  return `# Performance

What is measured, on one machine, by \`npm run bench\` (\`test/bench/run.ts\`). These are
**benchmarks, not tests**: the numbers vary by machine and by run, nothing fails when a target is
missed, and this file is rewritten with the latest numbers on every run.

- **Frame decoding**: \`FrameDecoder\` (app/wire/advent/frame.ts) against a baseline written the
  naive way, as the vendor's sample Python client does (test/bench/naive-decoder.ts: \`Buffer.concat\`
  per chunk, \`##START\`/\`##END\` searched from the start of the buffer, a copy per frame and per
  remainder). Both decode the same bytes split the same way; before timing, both must find exactly
  the frames and payload bytes the stream was built from. Runs alternate between the two.
- **Call round trip**: an Agent (temp data dir, memory secret store, the tests' FAST timing)
  connected over loopback to the simulator (\`AdventSim\`, \`demo: false\`, no frame log), which
  sends \`get_current_time\` (risk read, so auto-allowed) and waits for the result. A read is
  recorded once, its record written and fdatasync'd before its result is sent (a service that can
  change something is recorded twice: its intent durable before it runs, its outcome before the
  reply; the "gate (write-ahead)" rows measure that path with a no-op write service). The audit is
  part of the gate, so it is part of the round trip. The same runs are repeated with the audit log
  on tmpfs (\`/dev/shm\`), labelled as such, so the gate's own cost is visible without the disk.
  The references of issue 9 §7 are measured in the same run: one write + fdatasync of a line as
  long as the call's audit record (measured: the log writes one record for this call) on
  each medium, through the thread pool and inline (the log flushes inline in RAM, and on a disk
  once its flushes have proved quick: app/audit/flush-pace.ts), appended as a plain durable
  write does and, beside it, written over room made ready past the end, as the log writes its
  records (app/audit/append.ts: no size changes, so fdatasync has only the data), and a bare
  \`@modelcontextprotocol/sdk\` tool server (McpServer + Client over the SDK's in-memory
  transport, no gate, no audit), alone and with its tool making the same inline fsync.
- **Call round trip per dialect**: the same call from a simulator of each dialect the agent
  speaks — Advent (the baseline), XiaoZhi device, XiaoZhi MCP endpoint, robot JSON-RPC (each
  execute sent once, and twice as the reference server does) — all connected to one agent at
  once, taking turns, with the audit log on disk and on tmpfs.
- **Voice latency**: the e2e setup (test/e2e/voice.test.ts): Chromium with the fake microphone
  playing test/fixtures/what-time-is-it.wav, the browser host serving the built renderer, and
  the simulator (in a process of its own, test/bench/voice-sim.ts, as a real server is another
  machine) answering each push-to-talk turn with a spoken reply streamed as 20 ms
  AUDIO_FRAMEs at real-time pace (frame k due at t0 + k·20 ms). The page stamps each captured chunk and the start of playback
  (\`window.__adventAudio.timings\`, renderer/audio/engine.ts); Node stamps the core's socket
  write of each AUDIO_FRAME and the simulator's write of the first reply frame; a tap on the
  page's audio output (test/bench/output-tap.ts) hears when each reply reaches it, with today's
  player and the one before it (two pages, the same replies). Skipped when no Chromium is found.
- **Memory**: RSS and heap (after a forced GC) before and after ${mem.calls} calls.

Run: \`npm run bench\` (about two minutes on two cores, voice turns included).

## Machine

| | |
| --- | --- |
| CPU | ${m.cpu} |
| Cores | ${m.cores} |
| Memory | ${f1(m.memoryGB)} GB |
| Node | ${m.node} |
| Platform | ${m.platform} |
| Date | ${m.date} |
| CPU idle driver | ${m.idle ?? 'unknown'} |
| Bench time | ${f1(r.elapsedS)} s |
| Load average (1/5/15 min) | ${loadText(r)} |

${decodeMarkdown(r)}
## 2. Call round trip

Latency of each call from send to result, in ms. "100 at a time": batches of 100 calls sent back
to back (as \`peer.callMany\` does), each call timed on its own. 10 000 calls per row unless shown.

${mdTable(latencyTable(r))}

Each part alone, for reading the round trip as a sum:

${mdTable(componentTable(r))}

## 3. Call round trip per dialect

The same \`get_current_time\` round trip as in §2, from each dialect's simulator (\`AdventSim\`,
\`XiaozhiSim.callTool\`, \`EndpointSim.callTool\`, \`RobotSim.execute\`) through the one gate and
audit log, in ms. The last column divides each row's p50 by Advent's p50 of the same medium and
mode in this run.

${mdTable(wireTable())}

${mdTable(dialectTable(r))}

${dialectNotes(r)
  .map((n) => `- ${n}`)
  .join('\n')}

${voiceMarkdown(r.voice)}
## 5. Memory

Between the two readings: ${mem.how}; audit log on ${mem.medium.name} (${mem.medium.base}).
Readings after a forced GC (\`--expose-gc\`${r.gc ? '' : ', not available in this run'}).

${mdTable(memoryTable(r))}

## What dominates

${notes(r)
  .map((n) => `- ${n}`)
  .join('\n')}
`;
}
