/**
 * The voice bench's server, in a process of its own (voice-latency.ts): the same AdventSim,
 * answering every turn the same way (a text line, then a tone as 20 ms AUDIO_FRAMEs at real-time
 * pace, then END_FRAME), but with its pacing timers on an event loop that the host and the core
 * under test do not share, as a real server is another machine. Frame k of a reply is due at
 * t0 + k·20 ms (absolute, as a streaming server paces), never "20 ms after the last one", so one
 * late timer does not push every later frame back.
 *
 * `startSimProcess` forks this file and speaks to it over the IPC channel; the child reports each
 * turn when it reaches it and, once a reply is written, the wall-clock stamps of its writes
 * (`performance.timeOrigin + performance.now()`, the clock the rest of the bench uses; how far the
 * two processes' clocks are apart is measured and reported).
 */
import { type ChildProcess, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { AdventSim } from '../../sim/advent/server.js';
import type { SimPeer } from '../../sim/advent/peer.js';
import type { Turn } from '../../sim/advent/records.js';
import { sineTone } from '../../sim/kit/tone.js';
import type { Stamp } from './reply-hops.js';

const CHUNK_MS = 20;
const CHUNK_BYTES = 640;
/** Replies kept by the parent (the bench runs 16 turns). */
const MAX_TURNS = 1000;

/** Parent → child. */
type Request = { id: number; op: 'registrations' | 'now' | 'stop' };
/** Child → parent. */
type Message =
  | { type: 'ready'; port: number }
  | { type: 'answer'; id: number; value: number }
  | { type: 'turn'; taskId: string }
  | { type: 'reply'; taskId: string; written: Stamp[] };

const wallNow = (): number => performance.timeOrigin + performance.now();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The child's side: start the simulator, answer turns, report. */
async function child(replyMs: number): Promise<void> {
  const send = (m: Message) => process.send?.(m);
  const onTurn = async (turn: Turn, peer: SimPeer) => {
    send({ type: 'turn', taskId: turn.taskId });
    await peer.text(turn.taskId, ['Bench reply.']);
    const tone = sineTone(replyMs, 330, 0.2);
    const written: Stamp[] = [];
    const start = wallNow();
    for (let i = 0, at = 0; at < tone.length && !peer.closed; i++, at += CHUNK_BYTES) {
      const wait = start + i * CHUNK_MS - wallNow();
      if (wait > 0) await sleep(wait);
      written.push({ task: turn.taskId.trim(), at: wallNow() });
      await peer.audio(turn.taskId, tone.subarray(at, at + CHUNK_BYTES));
    }
    await peer.end(turn.taskId);
    send({ type: 'reply', taskId: turn.taskId, written });
  };
  const sim = await AdventSim.start({ demo: false, onTurn, record: false });
  process.on('message', (req: Request) => {
    if (req.op === 'stop') {
      void sim.stop().finally(() => {
        send({ type: 'answer', id: req.id, value: 0 });
        process.disconnect();
      });
      return;
    }
    const value = req.op === 'now' ? wallNow() : sim.registrations().length;
    send({ type: 'answer', id: req.id, value });
  });
  send({ type: 'ready', port: sim.port });
}

/** The parent's handle on the simulator process. */
export interface SimProcess {
  port: number;
  /** Turns the simulator has reached, in order. */
  turns: Array<{ taskId: string }>;
  /** Wall time of the first reply AUDIO_FRAME write of each task written in full. */
  firstReplyWrite: Map<string, number>;
  /** Every reply chunk's write, for the hops (appended as each reply is written in full). */
  written: Stamp[];
  registrations(): Promise<number>;
  /** Child clock − this process's clock, ms, ± half the best round trip it was read with. */
  clockOffset(): Promise<{ ms: number; within: number }>;
  stop(): Promise<void>;
}

export async function startSimProcess(replyMs: number): Promise<SimProcess> {
  const proc: ChildProcess = fork(fileURLToPath(import.meta.url), ['--child', String(replyMs)], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const turns: Array<{ taskId: string }> = [];
  const firstReplyWrite = new Map<string, number>();
  const written: Stamp[] = [];
  const pending = new Map<number, (v: number) => void>();
  let nextId = 1;
  let exited: Error | undefined;
  const port = await new Promise<number>((resolve, reject) => {
    proc.on('message', (m: Message) => {
      if (m.type === 'ready') resolve(m.port);
      else if (m.type === 'answer') {
        pending.get(m.id)?.(m.value);
        pending.delete(m.id);
      } else if (m.type === 'turn') {
        if (turns.length < MAX_TURNS) turns.push({ taskId: m.taskId });
      } else if (m.type === 'reply' && firstReplyWrite.size < MAX_TURNS) {
        const first = m.written[0];
        if (first) firstReplyWrite.set(m.taskId, first.at);
        written.push(...m.written);
      }
    });
    proc.once('exit', (code, signal) => {
      exited = new Error(`the simulator process ended (${signal ?? code})`);
      reject(exited);
      for (const [, done] of pending) done(Number.NaN);
      pending.clear();
    });
  });
  const ask = (op: Request['op']) =>
    new Promise<number>((resolve, reject) => {
      if (exited) return reject(exited);
      const id = nextId++;
      pending.set(id, resolve);
      proc.send({ id, op } satisfies Request);
    });
  return {
    port,
    turns,
    firstReplyWrite,
    written,
    registrations: () => ask('registrations'),
    async clockOffset() {
      let best = { ms: Number.NaN, within: Number.POSITIVE_INFINITY };
      for (let i = 0; i < 20; i++) {
        const before = wallNow();
        const there = await ask('now');
        const after = wallNow();
        if ((after - before) / 2 < best.within)
          best = { ms: there - (before + after) / 2, within: (after - before) / 2 };
      }
      return best;
    },
    async stop() {
      if (exited) return;
      const gone = new Promise((r) => proc.once('exit', r));
      await Promise.race([ask('stop').catch(() => 0), sleep(5000)]);
      await Promise.race([gone, sleep(2000)]);
      if (!exited) {
        proc.kill();
        await gone;
      }
    },
  };
}

if (process.argv[2] === '--child') await child(Number(process.argv[3]));
