/**
 * What the hostile wire suite runs: a hostile Advent server under the test's control (raw TCP,
 * frames written by hand) and the real agent as a child process (`bin/advent-agent.js run
 * --no-chat`, from the build in dist/), whose memory is read from outside with `ps`.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import {
  type Frame,
  FrameDecoder,
  FrameType,
  type KnownFrameType,
  encodeFrame,
} from '../../app/wire/advent/frame.js';

export const ROOT = path.resolve(import.meta.dirname, '../..');
const BIN = path.join(ROOT, 'bin', 'advent-agent.js');
const TIME_SCALE_PRELOAD = path.join(import.meta.dirname, 'wire-timescale.mjs');

/** The suite runs the built agent; say so plainly when there is none. */
export function requireBuild(): void {
  if (!existsSync(path.join(ROOT, 'dist', 'main', 'headless', 'cli.js')))
    throw new Error('the hostile wire suite runs the built agent: run `npm run build` first');
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Poll `check` every 20 ms until true; a clear error after `timeoutMs`. */
export async function waitFor(check: () => boolean, what: string, timeoutMs = 10_000) {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

interface Conn {
  socket: net.Socket;
  frames: Frame[];
}

/** A TCP server speaking just enough Advent to be hostile: it records frames, writes raw bytes. */
export class HostileAdvent {
  readonly conns: Conn[] = [];
  private constructor(
    private readonly server: net.Server,
    readonly port: number,
  ) {}

  static async start(): Promise<HostileAdvent> {
    const server = net.createServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const hostile = new HostileAdvent(server, (server.address() as net.AddressInfo).port);
    server.on('connection', (socket) => {
      socket.on('error', () => undefined);
      const conn: Conn = { socket, frames: [] };
      hostile.conns.push(conn);
      const decoder = new FrameDecoder({});
      socket.on('data', (chunk) => conn.frames.push(...decoder.push(chunk)));
    });
    return hostile;
  }

  /** Connection `n` (1-based) once the agent has logged in and registered on it. */
  async registered(n: number, timeoutMs = 15_000): Promise<net.Socket> {
    await waitFor(
      () =>
        (this.conns[n - 1]?.frames ?? []).some(
          (f) => f.type === FrameType.MCP && f.payload.toString('utf8').includes('"register"'),
        ),
      `the agent to register on connection ${n}`,
      timeoutMs,
    );
    return this.conns[n - 1]!.socket;
  }

  frames(n: number): Frame[] {
    return this.conns[n - 1]?.frames ?? [];
  }

  /** The MCP results connection `n` has sent, parsed. */
  results(n: number): Array<{ call_id: unknown; result: { success: boolean; error?: string } }> {
    return this.frames(n)
      .filter((f) => f.type === FrameType.MCP)
      .map((f) => JSON.parse(f.payload.toString('utf8')) as { type: string; data: never })
      .filter((m) => m.type === 'result')
      .map((m) => m.data);
  }

  /** Write one frame, waiting while the socket's buffer is full (the test must not balloon). */
  async send(
    socket: net.Socket,
    type: KnownFrameType,
    taskId: string,
    seq: number,
    payload?: string | Uint8Array,
  ): Promise<void> {
    if (!socket.write(encodeFrame(type, taskId, seq, payload)))
      await new Promise<void>((resolve) => {
        const done = () => {
          socket.off('drain', done);
          socket.off('close', done);
          resolve();
        };
        socket.on('drain', done);
        socket.on('close', done);
      });
  }

  /** An MCP call frame. */
  static call(callId: string, method: string, params: unknown = {}): string {
    return JSON.stringify({ type: 'call', data: { call_id: callId, method, params } });
  }

  async close(): Promise<void> {
    for (const { socket } of this.conns) socket.destroy();
    await new Promise<void>((r) => this.server.close(() => r()));
  }
}

export interface AgentChild {
  child: ChildProcess;
  dir: string;
  /** Resident memory of the child now, in bytes. */
  rss(): number;
  /** The exit code once it has exited (null while it runs). */
  readonly exitCode: number | null;
  readonly exited: Promise<number | null>;
  /** What it wrote to stderr, for failure messages. */
  stderr(): string;
  /** SIGTERM, then the exit code (SIGKILL after 5 s), and its files removed. */
  stop(): Promise<number | null>;
}

/**
 * `advent-agent run --no-chat` against an Advent server at `port`, in a home and data dir of its
 * own. `timeScale` > 1 runs the child's timers that much faster (wire-timescale.mjs) so a test of
 * several backoff periods fits its time budget; the process, sockets and code are the real ones.
 */
export async function spawnAgent(
  port: number,
  options: { timeScale?: number; args?: string[] } = {},
): Promise<AgentChild> {
  requireBuild();
  const dir = await mkdtemp(path.join(os.tmpdir(), 'advent-hostile-'));
  const args = [
    ...(options.timeScale ? ['--import', TIME_SCALE_PRELOAD] : []),
    BIN,
    'run',
    '--no-chat',
    '--server',
    `127.0.0.1:${port}`,
    '--token',
    'hostile-test-token',
    '--data-dir',
    path.join(dir, 'data'),
    ...(options.args ?? []),
  ];
  const child = spawn(process.execPath, args, {
    cwd: dir,
    env: {
      PATH: process.env.PATH,
      HOME: dir,
      XDG_DATA_HOME: path.join(dir, 'xdg-data'),
      XDG_CONFIG_HOME: path.join(dir, 'xdg-config'),
      XDG_DOCUMENTS_DIR: path.join(dir, 'Documents'),
      ADVENT_TEST_TIME_SCALE: String(options.timeScale ?? 1),
    },
    // Reply text is printed: nobody reads it here, and a full pipe must not hold the child back.
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => {
    if (stderr.length < 64 * 1024) stderr += d.toString('utf8');
  });
  let exitCode: number | null = null;
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code, signal) => {
      exitCode = code ?? (signal ? 128 : null);
      resolve(exitCode);
    }),
  );
  return {
    child,
    dir,
    rss: () => rssOf(child.pid!),
    get exitCode() {
      return exitCode;
    },
    exited,
    stderr: () => stderr,
    async stop() {
      if (exitCode === null) {
        child.kill('SIGTERM');
        const killer = setTimeout(() => child.kill('SIGKILL'), 5000);
        await exited;
        clearTimeout(killer);
      }
      await rm(dir, { recursive: true, force: true });
      return exitCode;
    },
  };
}

/** Resident set size of a process, in bytes (`ps` reports KiB on Linux and macOS). */
export function rssOf(pid: number): number {
  const out = execFileSync('ps', ['-o', 'rss=', '-p', String(pid)], { encoding: 'utf8' });
  return Number(out.trim()) * 1024;
}

/** Bytes of every file under `dir`. */
/**
 * The bytes of the audit log in `dir`: its files, less the room of NULs a running agent keeps
 * past the end of its month file (app/audit/append.ts ROOM_BYTES), which is no record's.
 */
export async function auditBytes(dir: string): Promise<number> {
  let total = 0;
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const bytes = await readFile(path.join(dir, entry.name));
    let end = bytes.length;
    if (entry.name.endsWith('.jsonl')) while (end > 0 && bytes[end - 1] === 0) end -= 1;
    total += end;
  }
  return total;
}

export const MiB = 1024 * 1024;
