/**
 * `npm run bench`: frame decoding throughput, MCP call round trip through the simulator, the same
 * round trip in every dialect (Advent, XiaoZhi device, XiaoZhi MCP endpoint, robot), memory, an
 * imported MCP tool against the SDK Client calling its server directly, and voice latency in the e2e setup (Chromium + browser host + simulator; skipped without Chromium).
 * Prints tables and rewrites docs/PERFORMANCE.md. Benchmarks, not tests: nothing here fails on a
 * number; it fails only when a decoder decodes the wrong frames or a call does not succeed,
 * because then the timing would be of the wrong work.
 *
 *   node --expose-gc --import tsx test/bench/run.ts [--quick] [--no-write] [--only decode]
 *     [--runs N] [--processes K]
 *
 * --quick runs much smaller workloads (to check the bench itself; numbers are not comparable),
 * and does not touch docs/PERFORMANCE.md unless --write is given.
 * --only decode runs section 1 alone (about half a minute) and, when writing, replaces only that
 * section of docs/PERFORMANCE.md; --only voice does the same for section 4 (about two minutes,
 * needs the built renderer); --only mcp runs sections 5 and 6 (the MCP hub both ways; needs the
 * built command) and, only with --write, replaces them, the end of docs/PERFORMANCE.md. --runs N times each decoding case N times (default 5).
 * --processes K runs the decoding section in K fresh processes one after the other and pools
 * their timed runs: each process has its own JIT history, which moves a process's figures as a
 * whole, so repeating within one process alone does not average it out.
 */
import { execFileSync } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  DEFAULT_DECODE,
  type DecodeCase,
  type Reference,
  medianReference,
  poolDecodeCases,
  referenceCosts,
  runDecodeBench,
} from './decode.js';
import { DEFAULT_DIALECTS, runDialectBench } from './dialects.js';
import {
  type Results,
  decodeMarkdown,
  markdown,
  printDecodeOnly,
  printText,
  printVoiceOnly,
  spliceDecodeSection,
  spliceVoiceSection,
  voiceMarkdown,
} from './report.js';
import { DEFAULT_MCP, mcpMarkdown, mcpText, runMcpBench } from './mcp.js';
import {
  DEFAULT_MCP_SERVE,
  mcpServeMarkdown,
  mcpServeText,
  runMcpServeBench,
} from './mcp-serve.js';
import { DEFAULT_ROUNDTRIP, runRoundTripBench } from './roundtrip.js';
import { media } from './rig.js';
import { KiB, MiB, hasGc, machine, nowMs } from './stats.js';
import { DEFAULT_VOICE, type VoiceLatencyOutcome, runVoiceLatencyBench } from './voice-latency.js';

const argv = process.argv.slice(2);
const args = new Set(argv);
/** The value of `--name value` or `--name=value`. */
function option(name: string): string | undefined {
  const at = argv.indexOf(name);
  if (at >= 0) return argv[at + 1];
  return argv.find((a) => a.startsWith(`${name}=`))?.slice(name.length + 1);
}
const quick = args.has('--quick');
const write = args.has('--write') || (!quick && !args.has('--no-write'));
const only = option('--only');
if (only !== undefined && only !== 'decode' && only !== 'voice' && only !== 'mcp')
  throw new Error(`--only: 'decode', 'voice' or 'mcp'`);
const runsOption = option('--runs');
const runs = runsOption === undefined ? undefined : Number(runsOption);
if (runs !== undefined && !(Number.isInteger(runs) && runs > 0))
  throw new Error(`--runs: a positive whole number, not '${runsOption}'`);
const processes = Number(option('--processes') ?? 1);
if (!(Number.isInteger(processes) && processes > 0))
  throw new Error(`--processes: a positive whole number, not '${option('--processes')}'`);
/** A child of --processes: print the decoding results as JSON and stop. */
const json = args.has('--json');
const docPath = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '../../docs/PERFORMANCE.md',
);
const t0 = nowMs();
const loadStart = os.loadavg();
const log = (line: string) =>
  process.stderr.write(`[${((nowMs() - t0) / 1000).toFixed(0).padStart(3)} s] ${line}\n`);

if (!hasGc) log('note: run with node --expose-gc for memory readings after a forced GC');

/** Section 4, in the e2e setup; last in a full run, so Chromium does not share the CPU with the rest. */
async function voiceSection(): Promise<VoiceLatencyOutcome> {
  log('4. voice latency');
  let voice: VoiceLatencyOutcome;
  try {
    voice = await runVoiceLatencyBench(
      quick ? { turns: 4, holdMs: 1000, replyMs: 600 } : DEFAULT_VOICE,
      log,
    );
  } catch (err) {
    voice = { ran: false, reason: `failed: ${err instanceof Error ? err.message : String(err)}` };
  }
  if (!voice.ran) log(`   skipped: ${voice.reason}`);
  return voice;
}

if (only === 'voice') {
  const voice = await voiceSection();
  printVoiceOnly(voice, (s) => process.stdout.write(s));
  if (write) {
    const doc = await readFile(docPath, 'utf8');
    await writeFile(docPath, spliceVoiceSection(doc, voiceMarkdown(voice, true)));
    log(`wrote section 4 of ${path.relative(process.cwd(), docPath)}`);
  }
  process.exit(0);
}

/** Sections 5 and 6: an imported MCP tool, and the agent as an MCP server. */
async function mcpSections() {
  log('5. imported MCP tool round trip');
  const mcp = await runMcpBench(
    quick
      ? { warmup: 20, calls: 200, block: 25, concurrent: 100, waitMs: 50, pauseMs: 1 }
      : DEFAULT_MCP,
    log,
  );
  log('6. the agent as an MCP server (stdio, HTTP)');
  const mcpServe = await runMcpServeBench(
    quick ? { warmup: 20, calls: 100, block: 25, pauseMs: 1 } : DEFAULT_MCP_SERVE,
    log,
  );
  return { mcp, mcpServe };
}

if (only === 'mcp') {
  const { mcp, mcpServe } = await mcpSections();
  process.stdout.write(mcpText(mcp));
  process.stdout.write(mcpServeText(mcpServe));
  if (args.has('--write')) {
    // Sections 5 and 6 end the document (see the full run's write below).
    const doc = await readFile(docPath, 'utf8');
    const at = doc.indexOf('\n## Imported MCP tools');
    if (at < 0) throw new Error(`no "## Imported MCP tools" section in ${docPath}`);
    await writeFile(docPath, doc.slice(0, at) + mcpMarkdown(mcp) + mcpServeMarkdown(mcpServe));
    log(`wrote sections 5 and 6 of ${path.relative(process.cwd(), docPath)}`);
  }
  process.exit(0);
}

log('1. frame decoding');
let decode: DecodeCase[];
let reference: Reference;
if (processes > 1) {
  const outcomes: { decode: DecodeCase[]; reference: Reference }[] = [];
  for (let i = 1; i <= processes; i++) {
    log(`   process ${i} of ${processes}`);
    const out = execFileSync(
      process.execPath,
      [
        ...process.execArgv,
        fileURLToPath(import.meta.url),
        '--only',
        'decode',
        '--json',
        '--no-write',
        ...(quick ? ['--quick'] : []),
        ...(runs === undefined ? [] : ['--runs', String(runs)]),
      ],
      { stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 64 * MiB, encoding: 'utf8' },
    );
    outcomes.push(JSON.parse(out) as { decode: DecodeCase[]; reference: Reference });
  }
  decode = poolDecodeCases(outcomes.map((o) => o.decode));
  reference = medianReference(outcomes.map((o) => o.reference));
} else {
  decode = runDecodeBench(
    quick
      ? {
          audioBytes: 2 * MiB,
          oneByteOurs: 32 * KiB,
          oneByteBaseline: 16 * KiB,
          longPayload: 32_000,
          longBytes: 33 * KiB,
          textBytes: 1 * MiB,
          runs: runs ?? 2,
        }
      : { ...DEFAULT_DECODE, runs: runs ?? DEFAULT_DECODE.runs },
    log,
  );
  reference = referenceCosts();
}
if (json) {
  process.stdout.write(JSON.stringify({ decode, reference }));
  process.exit(0);
}

if (only === 'decode') {
  const results = {
    machine: machine(),
    decode,
    decodeProcesses: processes,
    reference,
    elapsedS: (nowMs() - t0) / 1000,
    load: { start: loadStart, end: os.loadavg() },
  };
  printDecodeOnly(results, (s) => process.stdout.write(s));
  if (write) {
    const doc = await readFile(docPath, 'utf8');
    await writeFile(docPath, spliceDecodeSection(doc, decodeMarkdown(results, true)));
    log(`wrote section 1 of ${path.relative(process.cwd(), docPath)}`);
  }
  process.exit(0);
}

log('2. call round trip');
const roundtrip = await runRoundTripBench(
  quick
    ? {
        warmup: 50,
        sequential: 300,
        concurrent: 300,
        batch: 100,
        components: 200,
        memoryCalls: 1_000,
      }
    : DEFAULT_ROUNDTRIP,
  log,
);

log('3. call round trip per dialect');
const dialects = await runDialectBench(
  media(),
  quick
    ? { warmup: 20, sequential: 100, concurrent: 200, batch: 100, block: 25 }
    : DEFAULT_DIALECTS,
  log,
);

const { mcp, mcpServe } = await mcpSections();

const voice = await voiceSection();

const results: Results = {
  machine: machine(),
  gc: hasGc,
  decode,
  decodeProcesses: processes,
  reference,
  roundtrip,
  dialects,
  voice,
  elapsedS: (nowMs() - t0) / 1000,
  load: { start: loadStart, end: os.loadavg() },
};
printText(results, (s) => process.stdout.write(s));
process.stdout.write(mcpText(mcp));
process.stdout.write(mcpServeText(mcpServe));
if (write) {
  await writeFile(docPath, markdown(results) + mcpMarkdown(mcp) + mcpServeMarkdown(mcpServe));
  log(`wrote ${path.relative(process.cwd(), docPath)}`);
}
