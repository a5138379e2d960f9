import { parseArgs } from 'node:util';
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
} from '../kit/cli-common.js';
import { RobotSim, type RobotSimEvents } from './server.js';

/**
 * `robot-sim`: the robot demo server (protocols/robot-rpc.md) a newcomer can point a robot
 * connection at. It trusts anyone, so it binds loopback unless told otherwise.
 */

export interface RobotCliIo extends SimCliIo {
  /** Told the running simulator, for tests. */
  started?(sim: RobotSim): void;
}

const USAGE = `usage: robot-sim [--port 8888] [--host 127.0.0.1] [--ack registered|success|none]
                 [--no-duplicates] [--idless-first] [--vad-ms N] [--quiet]

  --port N          TCP port (default 8888; 0 picks a free one); the endpoint is ws://HOST:PORT/ws
  --host H          address to bind (default 127.0.0.1; anything else exposes the demo)
  --ack SHAPE       registration ack: the doc's (registered), the server code's (success), or none
  --no-duplicates   send each execute once (the reference server sends it twice)
  --idless-first    send the id-less copy of each execute before the one with the id
  --vad-ms N        end each voice upload with stop_stream after N ms of audio
  --quiet           print only the listening line and errors`;

/** Run the robot demo server until SIGINT/SIGTERM; resolves with the exit code. */
export async function main(argv: readonly string[], io: RobotCliIo = processIo): Promise<number> {
  const values = parseSimFlags(
    'robot-sim',
    USAGE,
    io,
    () =>
      parseArgs({
        args: [...argv],
        options: {
          ...simFlags('8888'),
          ack: { type: 'string', default: 'registered' },
          'no-duplicates': { type: 'boolean', default: false },
          'idless-first': { type: 'boolean', default: false },
          'vad-ms': { type: 'string' },
        },
        strict: true,
        allowPositionals: false,
      }).values,
  );
  if (typeof values === 'number') return values;
  const port = Number(values.port);
  if (!['registered', 'success', 'none'].includes(values.ack)) {
    io.err(`robot-sim: --ack must be registered, success or none, got '${values.ack}'`);
    return 2;
  }
  const vad = values['vad-ms'];
  if (vad !== undefined && (!/^\d+$/.test(vad) || Number(vad) === 0)) {
    io.err(`robot-sim: --vad-ms must be a positive number of milliseconds, got '${vad}'`);
    return 2;
  }
  const host = values.host ?? '127.0.0.1';
  warnIfExposed(io, host);

  const sim = await startSim('robot-sim', host, port, io, () =>
    RobotSim.start({
      port,
      host,
      ackShape: values.ack === 'success' ? 'success' : 'registered',
      noAck: values.ack === 'none',
      duplicateExecutes: !values['no-duplicates'],
      duplicateOrder: values['idless-first'] ? 'idless-first' : 'id-first',
      vadStopAfterMs: vad === undefined ? undefined : Number(vad),
    }),
  );
  if (!sim) return 1;
  io.out(`Robot demo server listening on ${sim.url}`);
  if (!values.quiet) {
    io.out(DEMO_HINT);
    logEvents(sim, io);
  }
  io.started?.(sim);
  return serveUntilSignal(sim, io, values.quiet);
}

function logEvents(sim: RobotSim, io: RobotCliIo): void {
  logConnLines<RobotSimEvents>(sim.events, io.out, {
    register: (e) =>
      `registerTools ${e.macAddr ?? '(no mac_addr)'}: ${e.tools.join(', ') || '(no tools)'}`,
    text: (e) => `text turn: ${JSON.stringify(e.text)}`,
    stream: (e) => `voice upload: ${e.bytes} bytes (${e.end})`,
    execute: (e) => `execute ${String(e.id)} ${e.tool} ${JSON.stringify(e.input)}`,
    response: (e) =>
      e.outcome.error
        ? `response ${String(e.id)} error ${e.outcome.error.code}: ${e.outcome.error.message}`
        : `response ${String(e.id)} ${JSON.stringify(e.outcome.result)}`,
  });
}
