import { parseArgs } from 'node:util';
import { AdventSim } from './advent/server.js';
import {
  DEMO_HINT,
  type SimCliIo,
  logConnLines,
  parseSimFlags,
  processIo,
  serveUntilSignal,
  simFlags,
  startSim,
  warnIfExposed,
} from './kit/cli-common.js';
import { hostPort } from './kit/listen.js';
import { main as robotMain } from './robot/cli.js';
import { endpointMain, xiaozhiMain } from './ws-cli.js';
import type { AuthMode, SimEvents } from './advent/records.js';

/**
 * `advent-sim`: the demo server a newcomer can point the agent at without an account. It accepts
 * any token, so it binds loopback unless told otherwise, and its log never shows a whole token.
 */

/** Where it always was, for its callers; the commands share it from cli-common.ts. */
export { isLoopback } from './kit/cli-common.js';

export interface CliIo extends SimCliIo {
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
  const values = parseSimFlags(
    'advent-sim',
    USAGE,
    io,
    () =>
      parseArgs({
        args: [...argv],
        options: { ...simFlags('8009'), reject: { type: 'string' } },
        strict: true,
        allowPositionals: false,
      }).values,
  );
  if (typeof values === 'number') return values;
  const port = Number(values.port);
  const host = values.host ?? '127.0.0.1';
  warnIfExposed(io, host, '; it accepts any token');
  const auth: AuthMode = values.reject !== undefined ? { reject: values.reject } : 'accept';

  const sim = await startSim('advent-sim', host, port, io, () =>
    AdventSim.start({ port, host, auth, record: false }),
  );
  if (!sim) return 1;
  const policy =
    values.reject !== undefined
      ? `every token is rejected with ${JSON.stringify(values.reject)}`
      : 'any token is accepted';
  io.out(`Advent demo server listening on ${hostPort(host, sim.port)} (${policy})`);
  if (!values.quiet) {
    io.out(DEMO_HINT);
    logEvents(sim, io);
  }
  io.started?.(sim);
  return serveUntilSignal(sim, io, values.quiet);
}

function logEvents(sim: AdventSim, io: CliIo): void {
  logConnLines<SimEvents>(sim.events, io.out, {
    auth: (e) => {
      const params = Object.entries(e.params).map(([k, v]) => ` ${k}=${v}`);
      const decision = typeof e.decision === 'string' ? e.decision : `reject ${e.decision.reject}`;
      return `AUTH token ${maskToken(e.token)}${params.join('')} → ${decision}`;
    },
    register: (e) => `register: ${e.services.join(', ') || '(no services)'}`,
    turn: (e) =>
      e.text
        ? `turn ${e.taskId}: ${JSON.stringify(e.text)}`
        : `turn ${e.taskId}: ${e.audioBytes} bytes of audio`,
    call: (e) => `call ${e.callId} ${e.method} ${JSON.stringify(e.params)}`,
    result: (e) =>
      e.result.success
        ? `result ${e.callId} ok ${JSON.stringify(e.result.data)}`
        : `result ${e.callId} failed: ${e.result.error ?? '(no error text)'}`,
    status: (e) => `status ${e.text}`,
    idle: (e) => `idle for ${e.ms} ms: dropped`,
  });
}

/** Enough of a token to tell two apart, never enough to use one. */
export function maskToken(token: string): string {
  return `${token.slice(0, Math.min(4, token.length >> 1))}…`;
}
