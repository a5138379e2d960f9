/**
 * What the four simulator commands (`npm run sim` with no kind, `xiaozhi`, `endpoint`, `robot`)
 * share: the terminal they write to, the flags every one takes, the warning when a demo that
 * trusts anyone is exposed, running until Ctrl+C, and one log line per event. Kept apart from
 * cli.ts, which imports every command: the commands importing it back would make a cycle.
 */
import type { Emitter } from '../../app/events.js';

export interface SimCliIo {
  out(line: string): void;
  err(line: string): void;
  /** Where SIGINT/SIGTERM arrive (the process; an EventEmitter in tests). */
  signals: {
    once(event: 'SIGINT' | 'SIGTERM', listener: () => void): unknown;
    off(event: 'SIGINT' | 'SIGTERM', listener: () => void): unknown;
  };
}

/** Printed under the listening line unless `--quiet`: what to say to the demo first. */
export const DEMO_HINT = 'Try "what time is it" or "write a note: buy milk". Ctrl+C stops it.';

export const processIo: SimCliIo = {
  out: (line) => console.log(line),
  err: (line) => console.error(line),
  signals: process,
};

/** The flags every command takes (`parseArgs` options), beside its own. */
export function simFlags(defaultPort: string) {
  return {
    port: { type: 'string', default: defaultPort },
    host: { type: 'string' },
    quiet: { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  } as const;
}

/**
 * The flags as `parse` reads them (node:util `parseArgs`, strict), or the exit code when the
 * command ends here: 2 after a bad flag (told, with the usage) or a `--port` outside 0..65535,
 * 0 after `--help` (the usage on stdout).
 */
export function parseSimFlags<F extends { port: string; help: boolean }>(
  name: string,
  usage: string,
  io: SimCliIo,
  parse: () => F,
): F | number {
  let values: F;
  try {
    values = parse();
  } catch (err) {
    io.err(`${name}: ${(err as Error).message}`);
    io.err(usage);
    return 2;
  }
  if (values.help) {
    io.out(usage);
    return 0;
  }
  if (!/^\d+$/.test(values.port) || Number(values.port) > 65_535) {
    io.err(`${name}: --port must be 0..65535, got '${values.port}'`);
    return 2;
  }
  return values;
}

export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/** The demos trust anyone: binding beyond loopback is allowed, and said (`why` adds a reason). */
export function warnIfExposed(io: SimCliIo, host: string, why = ''): void {
  if (!isLoopback(host))
    io.err(
      `warning: listening on ${host} lets anyone who can reach it use this demo server${why}.`,
    );
}

/** The started simulator, or undefined once a failure to listen (a port in use) was told. */
export async function startSim<S>(
  name: string,
  host: string,
  port: number | string,
  io: SimCliIo,
  start: () => Promise<S>,
): Promise<S | undefined> {
  try {
    return await start();
  } catch (err) {
    io.err(`${name}: cannot listen on ${host}:${port}: ${(err as Error).message}`);
    return undefined;
  }
}

/**
 * Serve until SIGINT or SIGTERM, then `beforeStop` (unsubscribe logs, close stdin), stop the
 * simulator and say so unless quiet; resolves with the exit code, 0.
 */
export async function serveUntilSignal(
  sim: { stop(): Promise<void> },
  io: SimCliIo,
  quiet: boolean,
  beforeStop: () => void = () => undefined,
): Promise<number> {
  await new Promise<void>((resolve) => {
    const stop = (): void => {
      io.signals.off('SIGINT', stop);
      io.signals.off('SIGTERM', stop);
      resolve();
    };
    io.signals.once('SIGINT', stop);
    io.signals.once('SIGTERM', stop);
  });
  beforeStop();
  await sim.stop();
  if (!quiet) io.out('stopped');
  return 0;
}

/** How each event becomes a line (events left out are not logged). */
export type LineFormats<E extends Record<string, unknown>> = {
  [K in keyof E]?: (e: E[K]) => string;
};

/**
 * Print one line per event through `out`: `tag` (e.g. the connection) and then the formatted text
 * folded onto one line and cut at 200 characters, so a multi-line payload cannot flood a terminal.
 * Returns the unsubscribe function.
 */
export function logLines<E extends Record<string, unknown>>(
  events: Emitter<E>,
  out: (line: string) => void,
  formats: LineFormats<E>,
  tag: (e: E[keyof E]) => string = () => '',
): () => void {
  const offs = (Object.keys(formats) as Array<keyof E>).map((event) => {
    const fmt = formats[event] as (e: E[keyof E]) => string;
    return events.on(event, (e) => out(`${tag(e)}${oneLine(fmt(e))}`));
  });
  return () => offs.forEach((off) => off());
}

/** The events of a simulator whose log tells a connection's life the Advent way. */
type ConnEvents = {
  connection: { conn: number; remote: string };
  violation: { conn: number; message: string };
  error: { conn: number; error: Error };
  close: { conn: number };
};

/**
 * `logLines` with every line tagged `[conn] ` and the connection's life (connected from, protocol
 * violations, errors, closed) told the same way by the Advent and robot commands; `formats` adds
 * the lines of the simulator's own events.
 */
export function logConnLines<E extends ConnEvents & Record<string, unknown>>(
  events: Emitter<E>,
  out: (line: string) => void,
  formats: LineFormats<E>,
): () => void {
  const life: LineFormats<ConnEvents> = {
    connection: (e) => `connected from ${e.remote}`,
    violation: (e) => `protocol violation: ${e.message}`,
    error: (e) => `error: ${e.error.message}`,
    close: () => 'closed',
  };
  return logLines(
    events,
    out,
    { ...life, ...formats } as LineFormats<E>,
    (e) => `[${(e as { conn: number }).conn}] `,
  );
}

function oneLine(text: string, max = 200): string {
  const flat = text.replace(/\s*\n\s*/g, ' ');
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}
