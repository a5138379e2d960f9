import { parseArgs } from 'node:util';
import { isLoopback } from './cli.js';
import { RobotSim, type RobotSimEvents } from './robot-sim.js';

/**
 * `robot-sim`: the robot demo server (protocols/robot-rpc.md) a newcomer can point a robot
 * connection at. It trusts anyone, so it binds loopback unless told otherwise.
 */

export interface RobotCliIo {
  out(line: string): void;
  err(line: string): void;
  signals: {
    once(event: 'SIGINT' | 'SIGTERM', listener: () => void): unknown;
    off(event: 'SIGINT' | 'SIGTERM', listener: () => void): unknown;
  };
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

const processIo: RobotCliIo = {
  out: (line) => console.log(line),
  err: (line) => console.error(line),
  signals: process,
};

/** Run the robot demo server until SIGINT/SIGTERM; resolves with the exit code. */
export async function main(argv: readonly string[], io: RobotCliIo = processIo): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      options: {
        port: { type: 'string', default: '8888' },
        host: { type: 'string' },
        ack: { type: 'string', default: 'registered' },
        'no-duplicates': { type: 'boolean', default: false },
        'idless-first': { type: 'boolean', default: false },
        'vad-ms': { type: 'string' },
        quiet: { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (err) {
    io.err(`robot-sim: ${(err as Error).message}`);
    io.err(USAGE);
    return 2;
  }
  if (values.help) {
    io.out(USAGE);
    return 0;
  }
  const port = Number(values.port);
  if (!/^\d+$/.test(values.port) || port > 65_535) {
    io.err(`robot-sim: --port must be 0..65535, got '${values.port}'`);
    return 2;
  }
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
  if (!isLoopback(host))
    io.err(`warning: listening on ${host} lets anyone who can reach it use this demo server.`);

  let sim: RobotSim;
  try {
    sim = await RobotSim.start({
      port,
      host,
      ackShape: values.ack === 'success' ? 'success' : 'registered',
      noAck: values.ack === 'none',
      duplicateExecutes: !values['no-duplicates'],
      duplicateOrder: values['idless-first'] ? 'idless-first' : 'id-first',
      vadStopAfterMs: vad === undefined ? undefined : Number(vad),
    });
  } catch (err) {
    io.err(`robot-sim: cannot listen on ${host}:${port}: ${(err as Error).message}`);
    return 1;
  }
  io.out(`Robot demo server listening on ${sim.url}`);
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

function logEvents(sim: RobotSim, io: RobotCliIo): void {
  const log = <K extends keyof RobotSimEvents>(
    event: K,
    fmt: (e: RobotSimEvents[K]) => string,
  ): void => {
    sim.events.on(event, (e) => io.out(`[${e.conn}] ${oneLine(fmt(e))}`));
  };
  log('connection', (e) => `connected from ${e.remote}`);
  log(
    'register',
    (e) => `registerTools ${e.macAddr ?? '(no mac_addr)'}: ${e.tools.join(', ') || '(no tools)'}`,
  );
  log('text', (e) => `text turn: ${JSON.stringify(e.text)}`);
  log('stream', (e) => `voice upload: ${e.bytes} bytes (${e.end})`);
  log('execute', (e) => `execute ${String(e.id)} ${e.tool} ${JSON.stringify(e.input)}`);
  log('response', (e) =>
    e.outcome.error
      ? `response ${String(e.id)} error ${e.outcome.error.code}: ${e.outcome.error.message}`
      : `response ${String(e.id)} ${JSON.stringify(e.outcome.result)}`,
  );
  log('violation', (e) => `protocol violation: ${e.message}`);
  log('error', (e) => `error: ${e.error.message}`);
  log('close', () => 'closed');
}

function oneLine(text: string, max = 200): string {
  const flat = text.replace(/\s*\n\s*/g, ' ');
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}
