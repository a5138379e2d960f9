import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import {
  DEMO_HINT,
  type SimCliIo,
  parseSimFlags,
  serveUntilSignal,
  simFlags,
  startSim,
  warnIfExposed,
} from './kit/cli-common.js';
import { EndpointSim } from './endpoint/server.js';
import { logEndpointSim } from './endpoint/log.js';
import { XiaozhiSim } from './xiaozhi/server.js';
import { logXiaozhiEvents } from './xiaozhi/log.js';

/**
 * `npm run sim -- xiaozhi` and `npm run sim -- endpoint`: the simulated XiaoZhi server (B) and
 * MCP endpoint (B′) for trying the agent without an account. Both bind loopback unless told
 * otherwise; neither log ever shows a whole token.
 */

export interface WsCliIo extends SimCliIo {
  /** Lines typed at the endpoint simulator (`TOOL {json args}` calls that tool). */
  stdin?: NodeJS.ReadableStream;
}

const XIAOZHI_USAGE = `usage: advent-sim xiaozhi [--port 8000] [--host 127.0.0.1] [--token T] [--quiet]

  --port N     TCP port (default 8000; 0 picks a free one); the address is ws://HOST:PORT/xiaozhi/v1/
  --host H     address to bind (default 127.0.0.1; anything else exposes the demo)
  --token T    require this bearer token (default: any device is welcome)
  --quiet      print only the listening line and errors`;

const ENDPOINT_USAGE = `usage: advent-sim endpoint [--port 8004] [--host 127.0.0.1] [--token T] [--quiet]

  --port N     TCP port (default 8004; 0 picks a free one)
  --host H     address to bind (default 127.0.0.1; anything else exposes the demo)
  --token T    the token the address carries (default: demo)
  --quiet      print only the listening line and errors
Type a line such as   get_current_time {}   to call that tool on the connected agent.`;

type Options = { port: string; host?: string; token?: string; quiet: boolean; help: boolean };

/** The flags both commands take, or the exit code when the command ends here. */
function parse(
  argv: readonly string[],
  defaultPort: string,
  name: string,
  usage: string,
  io: WsCliIo,
): Options | number {
  const values = parseSimFlags<Options>(
    name,
    usage,
    io,
    () =>
      parseArgs({
        args: [...argv],
        options: { ...simFlags(defaultPort), token: { type: 'string' } },
        strict: true,
        allowPositionals: false,
      }).values,
  );
  if (typeof values !== 'number') warnIfExposed(io, values.host ?? '127.0.0.1');
  return values;
}

export async function xiaozhiMain(argv: readonly string[], io: WsCliIo): Promise<number> {
  const o = parse(argv, '8000', 'xiaozhi-sim', XIAOZHI_USAGE, io);
  if (typeof o === 'number') return o;
  const host = o.host ?? '127.0.0.1';
  const sim = await startSim('xiaozhi-sim', host, o.port, io, () =>
    XiaozhiSim.start({ port: Number(o.port), host, token: o.token, record: false }),
  );
  if (!sim) return 1;
  io.out(`XiaoZhi demo server listening on ${sim.url}`);
  const unlog = o.quiet ? () => undefined : logXiaozhiEvents(sim, io.out);
  if (!o.quiet) io.out(DEMO_HINT);
  return serveUntilSignal(sim, io, o.quiet, unlog);
}

export async function endpointMain(argv: readonly string[], io: WsCliIo): Promise<number> {
  const o = parse(argv, '8004', 'endpoint-sim', ENDPOINT_USAGE, io);
  if (typeof o === 'number') return o;
  const host = o.host ?? '127.0.0.1';
  const sim = await startSim('endpoint-sim', host, o.port, io, () =>
    EndpointSim.start({ port: Number(o.port), host, token: o.token ?? 'demo', record: false }),
  );
  if (!sim) return 1;
  io.out(`XiaoZhi MCP endpoint demo listening on ${sim.url}`);
  const unlog = o.quiet ? () => undefined : logEndpointSim(sim, io.out);
  // The endpoint has no AI of its own: a person types the calls an AI would make.
  const lines = io.stdin ? createInterface({ input: io.stdin, terminal: false }) : undefined;
  lines?.on('line', (raw) => {
    const m = /^\s*([a-z][a-z0-9_]*)\s*(.*)$/.exec(raw);
    if (!m) return;
    let args: unknown = {};
    try {
      args = m[2] ? JSON.parse(m[2]) : {};
    } catch {
      io.err(`not JSON: ${m[2]}`);
      return;
    }
    sim.callTool(m[1]!, args).then(
      (r) => io.out(`${r.isError ? '✗' : '✓'} ${m[1]}: ${r.text}`),
      (err: unknown) => io.err(`${m[1]}: ${(err as Error).message}`),
    );
  });
  return serveUntilSignal(sim, io, o.quiet, () => {
    lines?.close();
    unlog();
  });
}
