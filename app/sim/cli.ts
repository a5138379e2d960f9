import { parseArgs } from 'node:util';
import { AdventSim } from './advent-sim.js';
import { main as robotMain } from './robot-cli.js';
import { endpointMain, xiaozhiMain } from './ws-cli.js';
import type { AuthMode, SimEvents } from './records.js';

/**
 * `advent-sim`: the demo server a newcomer can point the agent at without an account. It accepts
 * any token, so it binds loopback unless told otherwise, and its log never shows a whole token.
 */

export interface CliIo {
  out(line: string): void;
  err(line: string): void;
  /** Where SIGINT/SIGTERM arrive (the process; an EventEmitter in tests). */
  signals: {
    once(event: 'SIGINT' | 'SIGTERM', listener: () => void): unknown;
    off(event: 'SIGINT' | 'SIGTERM', listener: () => void): unknown;
  };
  /** Told the running simulator, for tests. */
  started?(sim: AdventSim): void;
  /** Lines typed at the endpoint simulator. */
  stdin?: NodeJS.ReadableStream;
}

const USAGE = `usage: advent-sim [--port 8009] [--host 127.0.0.1] [--reject TEXT] [--quiet]
       advent-sim xiaozhi|endpoint|robot [--help]   (the other simulated servers)

  --port N       TCP port (default 8009; 0 picks a free one)
  --host H       address to bind (default 127.0.0.1; anything else exposes the demo to your network)
  --reject TEXT  answer every AUTH with this STATUS text, then close (e.g. "##ERROR:invalid token")
  --quiet        print only the listening line and errors`;

const processIo: CliIo = {
  out: (line) => console.log(line),
  err: (line) => console.error(line),
  signals: process,
};

/**
 * Run a demo server until SIGINT/SIGTERM; resolves with the exit code. The first argument picks
 * the kind: `xiaozhi`, `endpoint` or `robot`; anything else is the Advent server's flags.
 */
export async function main(argv: readonly string[], io: CliIo = processIo): Promise<number> {
  const [kind, ...rest] = argv;
  const plain = { out: io.out, err: io.err, signals: io.signals };
  if (kind === 'robot') return robotMain(rest, plain);
  if (kind === 'xiaozhi') return xiaozhiMain(rest, plain);
  if (kind === 'endpoint')
    return endpointMain(rest, { ...plain, stdin: io.stdin ?? process.stdin });
  return adventMain(argv, io);
}

async function adventMain(argv: readonly string[], io: CliIo): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      options: {
        port: { type: 'string', default: '8009' },
        host: { type: 'string' },
        reject: { type: 'string' },
        quiet: { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (err) {
    io.err(`advent-sim: ${(err as Error).message}`);
    io.err(USAGE);
    return 2;
  }
  if (values.help) {
    io.out(USAGE);
    return 0;
  }
  const port = Number(values.port);
  if (!/^\d+$/.test(values.port) || port > 65_535) {
    io.err(`advent-sim: --port must be 0..65535, got '${values.port}'`);
    return 2;
  }
  const host = values.host ?? '127.0.0.1';
  if (!isLoopback(host)) {
    io.err(
      `warning: listening on ${host} lets anyone who can reach it use this demo server; it accepts any token.`,
    );
  }
  const auth: AuthMode = values.reject !== undefined ? { reject: values.reject } : 'accept';

  let sim: AdventSim;
  try {
    sim = await AdventSim.start({ port, host, auth, record: false });
  } catch (err) {
    io.err(`advent-sim: cannot listen on ${host}:${port}: ${(err as Error).message}`);
    return 1;
  }
  const policy =
    values.reject !== undefined
      ? `every token is rejected with ${JSON.stringify(values.reject)}`
      : 'any token is accepted';
  io.out(`Advent demo server listening on ${hostPort(host, sim.port)} (${policy})`);
  if (!values.quiet) {
    io.out('Try "what time is it" or "write a note: buy milk". Ctrl+C stops it.');
    logEvents(sim, io);
  }
  io.started?.(sim);

  await new Promise<void>((resolve) => {
    const stop = (): void => {
      io.signals.off('SIGINT', stop);
      io.signals.off('SIGTERM', stop);
      resolve();
    };
    io.signals.once('SIGINT', stop);
    io.signals.once('SIGTERM', stop);
  });
  await sim.stop();
  if (!values.quiet) io.out('stopped');
  return 0;
}

function logEvents(sim: AdventSim, io: CliIo): void {
  const log = <K extends keyof SimEvents>(event: K, fmt: (e: SimEvents[K]) => string): void => {
    sim.events.on(event, (e) => io.out(`[${e.conn}] ${oneLine(fmt(e))}`));
  };
  log('connection', (e) => `connected from ${e.remote}`);
  log('auth', (e) => {
    const params = Object.entries(e.params).map(([k, v]) => ` ${k}=${v}`);
    const decision = typeof e.decision === 'string' ? e.decision : `reject ${e.decision.reject}`;
    return `AUTH token ${maskToken(e.token)}${params.join('')} → ${decision}`;
  });
  log('register', (e) => `register: ${e.services.join(', ') || '(no services)'}`);
  log('turn', (e) =>
    e.text
      ? `turn ${e.taskId}: ${JSON.stringify(e.text)}`
      : `turn ${e.taskId}: ${e.audioBytes} bytes of audio`,
  );
  log('call', (e) => `call ${e.callId} ${e.method} ${JSON.stringify(e.params)}`);
  log('result', (e) =>
    e.result.success
      ? `result ${e.callId} ok ${JSON.stringify(e.result.data)}`
      : `result ${e.callId} failed: ${e.result.error ?? '(no error text)'}`,
  );
  log('status', (e) => `status ${e.text}`);
  log('violation', (e) => `protocol violation: ${e.message}`);
  log('idle', (e) => `idle for ${e.ms} ms: dropped`);
  log('error', (e) => `error: ${e.error.message}`);
  log('close', () => 'closed');
}

/** Enough of a token to tell two apart, never enough to use one. */
export function maskToken(token: string): string {
  return `${token.slice(0, Math.min(4, token.length >> 1))}…`;
}

function oneLine(text: string, max = 200): string {
  const flat = text.replace(/\s*\n\s*/g, ' ');
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

function hostPort(host: string, port: number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}
