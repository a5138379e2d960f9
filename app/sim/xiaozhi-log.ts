/**
 * One line per thing the XiaoZhi simulator sees, for `npm run sim` (the CLI host wires it).
 * Events carry no token, so nothing here can print one.
 */
import type { XiaozhiSim } from './xiaozhi-sim.js';
import type { XzSimEvents } from './xiaozhi-records.js';

export function logXiaozhiEvents(sim: XiaozhiSim, out: (line: string) => void): () => void {
  const offs: Array<() => void> = [];
  const log = <K extends keyof XzSimEvents>(event: K, fmt: (e: XzSimEvents[K]) => string): void => {
    offs.push(sim.events.on(event, (e) => out(oneLine(fmt(e)))));
  };
  log('connection', (e) => `[${e.conn}] connected from ${e.remote}`);
  log('refused', (e) => `refused an upgrade: HTTP ${e.status} ${e.reason}`);
  log('hello', (e) => `[${e.conn}] device hello (protocol version ${String(e.version)})`);
  log('tools', (e) => `[${e.conn}] tools: ${e.tools.map((t) => t.name).join(', ') || '(none)'}`);
  log('listChanged', (e) => `[${e.conn}] tools/list_changed (ignored, as real servers do)`);
  log('call', (e) => `[${e.conn}] call ${String(e.id)} ${e.name} ${JSON.stringify(e.args)}`);
  log(
    'result',
    (e) =>
      `[${e.conn}] result ${String(e.id)} ${e.result.isError ? 'error' : 'ok'}: ${e.result.text}`,
  );
  log('turn', (e) =>
    e.voice
      ? `[${e.conn}] voice turn: ${e.audioBytes} bytes of audio`
      : `[${e.conn}] typed turn: ${JSON.stringify(e.text)}`,
  );
  log('abort', (e) => `[${e.conn}] abort${e.reason ? ` (${e.reason})` : ''}`);
  log('violation', (e) => `[${e.conn}] protocol violation: ${e.message}`);
  log('error', (e) => `[${e.conn}] error: ${e.message}`);
  log('close', (e) => `[${e.conn}] closed`);
  return () => offs.forEach((off) => off());
}

function oneLine(text: string, max = 200): string {
  const flat = text.replace(/\s*\n\s*/g, ' ');
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}
