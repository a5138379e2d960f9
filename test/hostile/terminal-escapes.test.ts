/**
 * A hostile server against the terminal host: everything it can put on the user's terminal (reply
 * text, STATUS, emoji, parameters shown in the permission question, a made-up service name, the
 * audit lines of its calls) carries escape sequences, C1 controls, carriage returns and bidi
 * overrides. Through a real `run` and a real simulated server, none of those bytes may reach the
 * captured output: the user sees them escaped, and the question stays as we wrote it.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { main } from '../../main/headless/cli.js';
import type { CliIo } from '../../main/headless/io.js';
import { AdventSim } from '../../sim/advent/server.js';
import { FAST } from '../helpers/agent-harness.js';
import { until } from '../helpers/wait.js';
import { Capture } from '../helpers/capture.js';

/** What a terminal obeys: C0 but newline and tab, DEL, C1, bidi controls, line separators. */
const OBEYED =
  // eslint-disable-next-line no-control-regex -- finding control characters is the point
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

const CLEAR = '\u001b[2J\u001b[H';
const ERASE_LINE_ABOVE = '\u001b[1A\u001b[2K';
const TITLE = '\u001b]0;pwned\u0007';
const RLO = '\u202e';
const HOSTILE = `${CLEAR}${TITLE}ok\rforged\b\b\u009b31m\u007f${RLO}txt.exe${'\u2066'}x${'\u2069'}\u2028`;

let dir: string;
let sim: AdventSim | undefined;
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'advent-terminal-hostile-'));
});
afterEach(async () => {
  await sim?.stop();
  sim = undefined;
  await rm(dir, { recursive: true, force: true });
});

it('a server sending escape sequences and bidi controls through run gets none of them onto the terminal', async () => {
  sim = await AdventSim.start({
    welcome: `welcome ${HOSTILE}`,
    disconnectCloseMs: 10,
    onTurn: async (turn, peer) => {
      await peer.status(`status ${HOSTILE}`);
      await peer.emoji(turn.taskId, `😀${CLEAR}`);
      // The sequence split across TEXT frames: each piece alone looks harmless.
      await peer.text(turn.taskId, ['line one\r\n', 'before \u001b', '[2J', ` after ${HOSTILE}`]);
      // A call whose parameters the permission question shows, and one for a made-up service.
      await peer.call('create_file', {
        filename: 'x.txt',
        content: `${ERASE_LINE_ABOVE}${HOSTILE}`,
      });
      await peer.call(`nope${CLEAR}${RLO}`, { a: HOSTILE });
      await peer.end(turn.taskId);
    },
  });

  const stdin = new PassThrough() as PassThrough & { isTTY?: boolean };
  stdin.isTTY = true;
  const stdout = new Capture();
  const stderr = new Capture();
  const io: CliIo = {
    stdin,
    stdout,
    stderr,
    onSignal: () => () => undefined,
    dataDir: () => path.join(dir, 'data'),
    filesRoot: () => path.join(dir, 'files'),
    version: '0.0.0-test',
    timing: FAST,
  };
  const exit = main(
    [
      'run',
      '--server',
      `127.0.0.1:${sim.port}`,
      '--token',
      'tok',
      '--data-dir',
      path.join(dir, 'data'),
      '--files',
      path.join(dir, 'files'),
    ],
    io,
  );

  await until(() => stdout.text.includes('registered'), 'registered');
  stdin.write('hello\n');
  await until(() => /wants to run create_file/.test(stdout.text), 'the permission question');
  stdin.write('n\n');
  await until(() => /⚙ nope/.test(stdout.text), 'the unknown service refused');
  await until(() => /after .*\n/.test(stdout.text), 'the reply to end');
  stdin.write('/audit\n');
  await until(() => /#2 .* nope/.test(stdout.text), 'the audit lines');
  stdin.end();
  expect(await exit).toBe(0);

  const all = stdout.text + stderr.text;
  expect(all).not.toMatch(OBEYED);
  // What was sent is still visible, escaped, where the user reads it.
  expect(stdout.text).toContain('server: welcome \\x1B[2J\\x1B[H\\x1B]0;pwned\\x07ok\\x0Dforged');
  expect(stdout.text).toContain('server: status \\x1B[2J');
  expect(stdout.text).toContain('(mood: 😀\\x1B[2J\\x1B[H)');
  expect(stdout.text).toMatch(/assistant› line one\nbefore \\x1B\[2J after \\x1B\[2J/);
  expect(stdout.text).toContain('\\u202Etxt.exe');
  // The question's own lines are intact: the parameters cannot climb up and erase them.
  expect(stdout.text).toMatch(
    /\? .* wants to run create_file: .*\n {2}path: .*x\.txt\n {2}params: \{.*\\u001b\[1A.*\}\n {2}allow\? \[y\] once/,
  );
  expect(stdout.text).toMatch(/⚙ nope\\x1B\[2J\\x1B\[H\\u202E — .* — refused: /);

  // `advent-agent audit` reads the same records back: as text, and as JSON that still parses to
  // exactly what the server sent.
  for (const extra of [[], ['--json']]) {
    const auditOut = new Capture();
    const code = await main(['audit', '--data-dir', path.join(dir, 'data'), ...extra], {
      ...io,
      stdout: auditOut,
    });
    expect(code).toBe(0);
    expect(auditOut.text).not.toMatch(OBEYED);
    if (extra.length) {
      const records = auditOut.text
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { service: string; params: unknown });
      expect(records.map((r) => r.service)).toEqual(['create_file', `nope${CLEAR}${RLO}`]);
    } else expect(auditOut.text).toContain('nope\\x1B[2J\\x1B[H\\u202E invalid refused');
  }
});
