/**
 * Two MCP apps launching `advent-agent mcp` on one data folder at the same moment (both at login):
 * neither finds an agent to relay to, both race for the folder's lock, and the one refused waits
 * for the winner's socket instead of exiting. In-process (`main` with its io), real lock and socket.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { relayOrOpen } from '../../../app/mcp-serve/relay.js';
import { lockDataDir } from '../../../app/settings/lock.js';
import { main } from '../../../main/headless/cli.js';
import type { CliIo } from '../../../main/headless/io.js';
import { Capture } from '../../helpers/capture.js';
import { until } from '../../helpers/wait.js';

let dir: string;
afterEach(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

const initialize = (name: string) =>
  `${JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name, version: '1' } },
  })}\n`;

function launch(dataDir: string, name: string) {
  const stdin = new PassThrough();
  const stdout = new Capture();
  const stderr = new Capture();
  const io: CliIo = {
    stdin,
    stdout,
    stderr,
    onSignal: () => () => undefined,
    dataDir: () => dataDir,
    filesRoot: () => path.join(dir, 'files'),
    version: '0.0.0-test',
  };
  const exit = main(['mcp', '--data-dir', dataDir], io);
  stdin.write(initialize(name));
  return { stdin, stdout, stderr, exit };
}

describe('two `advent-agent mcp` started together on one data folder', () => {
  it('the one refused the lock relays to the other once it answers: both clients are served', async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'advent-mcp-together-'));
    for (let round = 0; round < 2; round++) {
      const dataDir = path.join(dir, `data-${round}`);
      const a = launch(dataDir, 'app-a');
      const b = launch(dataDir, 'app-b');
      await until(
        () => [a, b].every((x) => x.stdout.text.includes('"id":1')),
        'both clients answered',
        15_000,
      );
      const relayed = [a, b].filter((x) => /relaying to the Advent Agent/.test(x.stderr.text));
      expect(relayed).toHaveLength(1);
      // The relay ends first; the agent it relayed to then ends with its own client.
      relayed[0]!.stdin.end();
      expect(await relayed[0]!.exit).toBe(0);
      const own = a === relayed[0] ? b : a;
      own.stdin.end();
      expect(await own.exit).toBe(0);
    }
  });

  it('an agent that holds the folder but never answers is waited for a bounded time, then the lock refusal stands', async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'advent-mcp-together-'));
    const dataDir = path.join(dir, 'data');
    const lock = await lockDataDir(dataDir);
    let opened = 0;
    try {
      await expect(
        relayOrOpen(
          dataDir,
          async () => {
            opened += 1;
            // The refusal the real open makes: this process holds the lock above.
            return lockDataDir(dataDir);
          },
          300,
        ),
      ).rejects.toThrow(/another Advent Agent \(process \d+\) is already using/);
      expect(opened).toBe(1);
    } finally {
      await lock.release();
    }
  });
});
