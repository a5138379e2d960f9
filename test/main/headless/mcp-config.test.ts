/**
 * `--mcp-config FILE` on the terminal host: the servers in the file are started for this run and
 * their tools offered to the voice server, behind the same gate (`--allow` names an imported tool
 * before its server has even listed it).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseCliArgs } from '../../../main/headless/args.js';
import { main } from '../../../main/headless/cli.js';
import type { CliIo } from '../../../main/headless/io.js';
import { AdventSim } from '../../../sim/advent/server.js';
import { FAST } from '../../helpers/agent-harness.js';
import { until } from '../../helpers/wait.js';
import { fixtureEntry } from '../../services/mcp/helpers.js';

let dir: string;
let sim: AdventSim | undefined;
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'advent-cli-mcp-'));
});
afterEach(async () => {
  await sim?.stop();
  sim = undefined;
  await rm(dir, { recursive: true, force: true });
});

function start(argv: string[]) {
  const text = { out: '', err: '' };
  const stdout = new PassThrough().on('data', (c: Buffer) => (text.out += c.toString()));
  const stderr = new PassThrough().on('data', (c: Buffer) => (text.err += c.toString()));
  let handler: (() => void) | undefined;
  const io: CliIo = {
    stdin: new PassThrough(),
    stdout,
    stderr,
    onSignal: (h) => {
      handler = h;
      return () => (handler = undefined);
    },
    dataDir: () => path.join(dir, 'data'),
    filesRoot: () => path.join(dir, 'files'),
    version: '0.0.0-test',
    timing: FAST,
  };
  return { text, signal: () => handler?.(), exit: main(argv, io) };
}

describe('--mcp-config', () => {
  it('is repeatable for run and ui', () => {
    const parsed = parseCliArgs(['ui', '--mcp-config', 'a.json', '--mcp-config', 'b.json']);
    expect(parsed.ok && parsed.args.command === 'ui' && parsed.args.mcpConfigs).toEqual([
      'a.json',
      'b.json',
    ]);
  });

  it("offers the file's servers for this run; --allow applies to an imported tool", async () => {
    sim = await AdventSim.start({ demo: false, disconnectCloseMs: 10 });
    const file = path.join(dir, 'claude_desktop_config.json');
    await writeFile(file, JSON.stringify({ mcpServers: { fixture: fixtureEntry() } }));
    const r = start([
      'run',
      '--server',
      `127.0.0.1:${sim.port}`,
      '--token',
      'tok',
      '--data-dir',
      path.join(dir, 'data'),
      '--mcp-config',
      file,
      '--allow',
      'fixture_add',
      '--no-chat',
    ]);
    await until(() => r.text.out.includes('MCP server fixture: ready, 10 tools'), 'ready', 20_000);
    await until(
      () => Object.hasOwn(sim!.registrations().at(-1) ?? {}, 'fixture_add'),
      'fixture_add registered',
      10_000,
    );
    expect(await sim.peer().call('fixture_add', { a: 20, b: 22 })).toMatchObject({
      success: true,
      data: '42',
    });
    // Nobody at a terminal: a tool without --allow is refused, and the user is told why.
    expect(await sim.peer().call('fixture_echo', { text: 'x' })).toMatchObject({ success: false });
    await until(() => (r.text.out + r.text.err).includes('--allow fixture_echo'), 'the hint');
    r.signal();
    expect(await r.exit).toBe(0);
    // Run-only: nothing of it was saved.
    const { readFile } = await import('node:fs/promises');
    const settings = await readFile(path.join(dir, 'data', 'settings.json'), 'utf8').catch(
      () => '{}',
    );
    expect(JSON.parse(settings).mcpServers ?? []).toEqual([]);
  });

  it('says which file it cannot read and exits 2', async () => {
    sim = await AdventSim.start({ demo: false });
    const r = start([
      'run',
      '--server',
      `127.0.0.1:${sim.port}`,
      '--token',
      'tok',
      '--data-dir',
      path.join(dir, 'data'),
      '--mcp-config',
      path.join(dir, 'missing.json'),
    ]);
    expect(await r.exit).toBe(2);
    expect(r.text.err).toContain(
      `--mcp-config: there is no file at ${path.join(dir, 'missing.json')}`,
    );
  });
});
