/**
 * One line per thing the simulated endpoint server saw, for a terminal (`npm run sim`): what a
 * newcomer needs to see that the agent connected, which services it offered and how calls went.
 * The token is part of the address the user pastes; it is never repeated in these lines.
 */
import type { EndpointSim, EndpointSimEvents } from './endpoint-sim.js';

/** Subscribe `out` to the simulator's events; returns the unsubscribe function. */
export function logEndpointSim(sim: EndpointSim, out: (line: string) => void): () => void {
  const offs: Array<() => void> = [];
  const log = <K extends keyof EndpointSimEvents>(
    event: K,
    fmt: (e: EndpointSimEvents[K]) => string,
  ): void => {
    offs.push(sim.events.on(event, (e) => out(oneLine(fmt(e)))));
  };
  log('connection', (e) => `[${e.conn}] connected`);
  log('refused', (e) => `refused a connection: HTTP ${e.status} ${e.reason}`);
  log(
    'tools',
    (e) => `[${e.conn}] tools: ${e.tools.map((t) => t.name).join(', ') || '(no services)'}`,
  );
  log('listChanged', (e) => `[${e.conn}] the agent says its tools changed`);
  log('call', (e) => `[${e.conn}] call ${e.name} ${JSON.stringify(e.args)}`);
  log(
    'result',
    (e) => `[${e.conn}] ${e.result.isError ? 'error' : 'result'} ${e.name}: ${e.result.text}`,
  );
  log('violation', (e) => `[${e.conn}] protocol violation: ${e.message}`);
  log('error', (e) => `[${e.conn}] error: ${e.message}`);
  log('close', (e) => `[${e.conn}] closed`);
  return () => offs.forEach((off) => off());
}

function oneLine(text: string, max = 200): string {
  const flat = text.replace(/\s*\n\s*/g, ' ');
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}
