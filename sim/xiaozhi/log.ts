/**
 * One line per thing the XiaoZhi simulator sees, for `npm run sim` (the CLI host wires it).
 * Events carry no token, so nothing here can print one.
 */
import { logLines } from '../kit/cli-common.js';
import type { XiaozhiSim } from './server.js';
import type { XzSimEvents } from './records.js';

export function logXiaozhiEvents(sim: XiaozhiSim, out: (line: string) => void): () => void {
  return logLines<XzSimEvents>(sim.events, out, {
    connection: (e) => `[${e.conn}] connected from ${e.remote}`,
    refused: (e) => `refused an upgrade: HTTP ${e.status} ${e.reason}`,
    hello: (e) => `[${e.conn}] device hello (protocol version ${String(e.version)})`,
    tools: (e) => `[${e.conn}] tools: ${e.tools.map((t) => t.name).join(', ') || '(none)'}`,
    listChanged: (e) => `[${e.conn}] tools/list_changed (ignored, as real servers do)`,
    call: (e) => `[${e.conn}] call ${String(e.id)} ${e.name} ${JSON.stringify(e.args)}`,
    result: (e) =>
      `[${e.conn}] result ${String(e.id)} ${e.result.isError ? 'error' : 'ok'}: ${e.result.text}`,
    turn: (e) =>
      e.voice
        ? `[${e.conn}] voice turn: ${e.audioBytes} bytes of audio`
        : `[${e.conn}] typed turn: ${JSON.stringify(e.text)}`,
    abort: (e) => `[${e.conn}] abort${e.reason ? ` (${e.reason})` : ''}`,
    violation: (e) => `[${e.conn}] protocol violation: ${e.message}`,
    error: (e) => `[${e.conn}] error: ${e.message}`,
    close: (e) => `[${e.conn}] closed`,
  });
}
