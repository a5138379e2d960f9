/**
 * One line per thing the simulated endpoint server saw, for a terminal (`npm run sim`): what a
 * newcomer needs to see that the agent connected, which services it offered and how calls went.
 * The token is part of the address the user pastes; it is never repeated in these lines.
 */
import { logLines } from '../kit/cli-common.js';
import type { EndpointSim, EndpointSimEvents } from './server.js';

/** Subscribe `out` to the simulator's events; returns the unsubscribe function. */
export function logEndpointSim(sim: EndpointSim, out: (line: string) => void): () => void {
  return logLines<EndpointSimEvents>(sim.events, out, {
    connection: (e) => `[${e.conn}] connected`,
    refused: (e) => `refused a connection: HTTP ${e.status} ${e.reason}`,
    tools: (e) => `[${e.conn}] tools: ${e.tools.map((t) => t.name).join(', ') || '(no services)'}`,
    listChanged: (e) => `[${e.conn}] the agent says its tools changed`,
    call: (e) => `[${e.conn}] call ${e.name} ${JSON.stringify(e.args)}`,
    result: (e) =>
      `[${e.conn}] ${e.result.isError ? 'error' : 'result'} ${e.name}: ${e.result.text}`,
    violation: (e) => `[${e.conn}] protocol violation: ${e.message}`,
    error: (e) => `[${e.conn}] error: ${e.message}`,
    close: (e) => `[${e.conn}] closed`,
  });
}
