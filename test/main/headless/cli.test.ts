import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AdventSim } from '../../../sim/advent/server.js';
import { EndpointSim } from '../../../sim/endpoint/server.js';
import { RobotSim } from '../../../sim/robot/server.js';
import { XiaozhiSim } from '../../../sim/xiaozhi/server.js';
import { FrameType } from '../../../app/wire/advent/frame.js';
import { CoreApi } from '../../../app/api.js';
import { FileSecretStore } from '../../../app/settings/secrets.js';
import { main } from '../../../main/headless/cli.js';
import { overridesOf, parseCliArgs } from '../../../main/headless/args.js';
import { DEFAULT_CALL_PACE } from '../../../app/call-pace.js';
import type { CliIo } from '../../../main/headless/io.js';
import { PROMPT_ARM_MS } from '../../../main/headless/run.js';
import { FAST } from '../../helpers/agent-harness.js';
import { until } from '../../helpers/wait.js';
import { freePort } from '../../e2e/harness.js';
import { BUILTIN_NAMES, builtinsWithout } from '../../helpers/builtins.js';
import { Capture } from '../../helpers/capture.js';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

interface Run {
  stdin: PassThrough & { isTTY?: boolean };
  stdout: Capture;
  stderr: Capture;
  signal(): void;
  exit: Promise<number>;
}

let dir: string;
let sim: AdventSim | undefined;
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'advent-cli-'));
});
afterEach(async () => {
  await sim?.stop();
  sim = undefined;
  await rm(dir, { recursive: true, force: true });
});

function start(argv: string[], opts: { tty?: boolean; promptArmMs?: number } = {}): Run {
  const stdin = new PassThrough() as PassThrough & { isTTY?: boolean };
  if (opts.tty) stdin.isTTY = true;
  const stdout = new Capture();
  const stderr = new Capture();
  let handler: (() => void) | undefined;
  const io: CliIo = {
    stdin,
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
    ...(opts.promptArmMs !== undefined && { promptArmMs: opts.promptArmMs }),
  };
  return { stdin, stdout, stderr, signal: () => handler?.(), exit: main(argv, io) };
}

const runArgs = (port: number, ...more: string[]) => [
  'run',
  '--server',
  `127.0.0.1:${port}`,
  '--token',
  'tok',
  '--data-dir',
  path.join(dir, 'data'),
  '--files',
  path.join(dir, 'files'),
  ...more,
];

describe('advent-agent command line', () => {
  it('prints help and exits 0', async () => {
    const r = start(['--help']);
    expect(await r.exit).toBe(0);
    expect(r.stdout.text).toMatch(
      /advent-agent run \[--server HOST:PORT \(--token TOKEN \| --token-file FILE\)/,
    );
    for (const flag of [
      '--xiaozhi WS_URL',
      '--xiaozhi-token T',
      '--device-id MAC',
      '--client-id UUID',
      '--protocol-version 1|2|3',
      '--endpoint WS_URL',
      '--robot WS_URL',
      '--mac MAC',
    ])
      expect(r.stdout.text).toContain(flag);
    expect(r.stdout.text).toMatch(
      /advent-agent audit \[--data-dir DIR\] \[--service NAME\] \[--json\] \[--verify\]/,
    );
  });

  it.each([
    [['run', '--help'], /advent-agent run \[--server HOST:PORT/, /--no-chat/],
    [['run', '-h'], /advent-agent run \[--server HOST:PORT/, /--prompt-timeout SECONDS/],
    [['run', '--server', 'h:1', '--token', 't', '--help'], /advent-agent run /, /--allow NAME/],
    [['ui', '--help'], /advent-agent ui \[--port N\] \[--open\]/, /--server HOST:PORT/],
    [['ui', '-h'], /advent-agent ui /, /--open /],
    [['audit', '--help'], /advent-agent audit \[--data-dir DIR\]/, /--verify/],
    [['audit', '-h'], /advent-agent audit /, /--json/],
  ])('%j prints that command’s own usage and exits 0', async (argv, synopsis, flag) => {
    const r = start(argv as string[]);
    expect(await r.exit).toBe(0);
    expect(r.stderr.text).toBe('');
    expect(r.stdout.text).toMatch(synopsis as RegExp);
    expect(r.stdout.text).toMatch(flag as RegExp);
    // Only that command: the others' synopses are left out.
    const others = ['run', 'ui', 'audit'].filter((c) => c !== argv[0]);
    for (const other of others) expect(r.stdout.text).not.toContain(`  advent-agent ${other} `);
  });

  it.each([
    [['run'], /give at least one server: --server, --xiaozhi, --endpoint, --robot/],
    [['run', '--token', 't', '--robot', 'ws://h/ws'], /--token applies only with --server/],
    [['run', '--server', 'h:1'], /--server needs --token or --token-file/],
    [['run', '--xiaozhi', 'http://h/x'], /--xiaozhi must be a ws:\/\/ or wss:\/\/ address/],
    [
      ['run', '--robot', 'ws://h/ws', '--device-id', 'aa'],
      /--device-id applies only with --xiaozhi/,
    ],
    [
      ['run', '--xiaozhi', 'ws://h/x', '--device-id', 'nope'],
      /--device-id: A MAC address looks like aa:bb:cc:dd:ee:ff\. \(got 'nope'\)/,
    ],
    [
      ['run', '--xiaozhi', 'ws://h/x', '--protocol-version', '4'],
      /--protocol-version must be one of: 1, 2, 3/,
    ],
    [['run', '--endpoint', 'wss://h/mcp/'], /--endpoint needs the whole address with its token/],
    [
      ['run', '--xiaozhi', 'ws://h/x', '--mac', 'AA-BB-CC-DD-EE-FF'],
      /--mac applies only with --robot/,
    ],
    [['run', '--server', 'h:99999', '--token', 't'], /port must be 1-65535/],
    [
      ['run', '--server', 'h:1', '--token', 't', '--format', 'mp3'],
      /--format must be one of: pcm, opus/,
    ],
    [
      ['run', '--server', 'h:1', '--token', 't', '--allow', 'x', '--deny', 'x'],
      /both --allow and --deny/,
    ],
    [
      ['run', '--server', 'h:1', '--token', 't', '--prompt-timeout', '0'],
      /--prompt-timeout must be/,
    ],
    [['run', '--server', 'h:1', '--token', 't', '--voice-id', 'a##b'], /cannot contain “##”/],
    [
      ['run', '--server', 'h:1', '--token', 't', '--calls-per-second', '0'],
      /--calls-per-second must be a whole number from 1 to 100000 \(got '0'\)/,
    ],
    [['mcp', '--calls-per-second', '2.5'], /--calls-per-second must be a whole number/],
    [['frobnicate'], /unknown command 'frobnicate'/],
    [['run', '--bogus'], /Unknown option '--bogus'/],
  ])('refuses bad arguments %j with a clear message and exit 2', async (argv, message) => {
    const r = start(argv as string[]);
    expect(await r.exit).toBe(2);
    expect(r.stderr.text).toMatch(message as RegExp);
  });

  it("follows a bad line with that command's usage only, or a pointer to --help", async () => {
    const run = start(['run', '--bogus']);
    expect(await run.exit).toBe(2);
    expect(run.stderr.text).toMatch(/advent-agent run /);
    expect(run.stderr.text).not.toMatch(/advent-agent audit |mcp-setup/);
    const unknown = start(['frobnicate']);
    expect(await unknown.exit).toBe(2);
    expect(unknown.stderr.text).toMatch(/Run `advent-agent --help` for the commands/);
    expect(unknown.stderr.text.split('\n').length).toBeLessThan(6);
  });

  it('paces calls as --calls-per-second says, this run only, keeping at least the default burst', () => {
    const paceOf = (argv: string[]) => {
      const parsed = parseCliArgs(argv);
      if (!parsed.ok || (parsed.args.command !== 'run' && parsed.args.command !== 'mcp'))
        throw new Error(JSON.stringify(parsed));
      return overridesOf({ files: [], policies: {}, disabled: [], ...parsed.args }).callPace;
    };
    expect(paceOf(['run', '--server', 'h:1', '--token', 't'])).toBeUndefined();
    expect(paceOf(['run', '--server', 'h:1', '--token', 't', '--calls-per-second', '5'])).toEqual({
      burst: DEFAULT_CALL_PACE.burst,
      perSecond: 5,
    });
    expect(paceOf(['mcp', '--calls-per-second', '500'])).toEqual({ burst: 500, perSecond: 500 });
  });

  it('refuses an unknown service name in --allow', async () => {
    sim = await AdventSim.start({ demo: true });
    const r = start(runArgs(sim.port, '--allow', 'nope'));
    expect(await r.exit).toBe(2);
    expect(r.stderr.text).toMatch(/no service named 'nope'/);
  });

  it('holds a session: a typed line is a turn, the reply and the tool call print, EOF says goodbye and exits 0', async () => {
    sim = await AdventSim.start({ demo: true, disconnectCloseMs: 10 });
    const r = start(runArgs(sim.port));
    await until(
      () => r.stdout.text.includes(`registered ${BUILTIN_NAMES.length} service(s)`),
      'registered',
    );
    r.stdin.write('what time is it\n');
    await until(() => /assistant› It's .+\n/.test(r.stdout.text), 'reply');
    expect(r.stdout.text).toMatch(/⚙ get_current_time — .* — auto — ok/);
    r.stdin.end();
    expect(await r.exit).toBe(0);
    expect(sim.received.some((f) => f.type === FrameType.STATUS && f.text === '##DISCONNECT')).toBe(
      true,
    );
    expect(r.stdout.text).toMatch(/bye/);
  });

  it('several servers at once: Advent, XiaoZhi, an MCP endpoint and a robot, one gate, lines to the Advent chat', async () => {
    sim = await AdventSim.start({ demo: true, disconnectCloseMs: 10 });
    const xz = await XiaozhiSim.start({});
    const ep = await EndpointSim.start({ token: 'ep-tok' });
    const rb = await RobotSim.start({});
    try {
      const r = start(
        runArgs(
          sim.port,
          '--xiaozhi',
          xz.url,
          '--endpoint',
          ep.url,
          '--robot',
          rb.url,
          '--mac',
          'aa-bb-cc-dd-ee-01',
          '--allow',
          'create_file',
        ),
      );
      await until(
        () =>
          (
            r.stdout.text.match(
              new RegExp(`✓ registered ${BUILTIN_NAMES.length} service\\(s\\) with `, 'g'),
            ) ?? []
          ).length === 4,
        'all four registered',
        10_000,
      );
      // Each server uses our services through the same gate; each call is printed and audited.
      expect(await ep.callTool('get_current_time', {})).toMatchObject({ isError: false });
      expect((await rb.execute('get_current_time', {})).result).toBeDefined();
      expect((await xz.callTool('create_file', { filename: 'x.txt', content: 'x' })).isError).toBe(
        false,
      );
      expect(rb.registrations.at(-1)?.macAddr).toBe('AA-BB-CC-DD-EE-01');
      r.stdin.write('what time is it\n');
      await until(() => /assistant› It's .+\n/.test(r.stdout.text), 'reply');
      expect(sim.received.some((f) => f.type === FrameType.TEXT)).toBe(true);
      expect(xz.turns.length).toBe(0);
      r.stdin.end();
      expect(await r.exit).toBe(0);
      // The endpoint's token never reaches the terminal.
      expect(r.stdout.text + r.stderr.text).not.toContain('ep-tok');
      const identity = JSON.parse(await readFile(path.join(dir, 'data', 'identity.json'), 'utf8'));
      expect(identity.xiaozhi.deviceId).toMatch(/^([0-9a-f]{2}:){5}[0-9a-f]{2}$/);
      expect(xz.connections[0]?.deviceId).toBe(identity.xiaozhi.deviceId);
    } finally {
      await Promise.all([xz.stop(), ep.stop(), rb.stop()]);
    }
  });

  it('piped input: lines that arrive before login wait for it, and end of input waits for their replies', async () => {
    sim = await AdventSim.start({ demo: true, disconnectCloseMs: 10 });
    const r = start(runArgs(sim.port));
    r.stdin.end('what time is it\nhello there\n');
    expect(await r.exit).toBe(0);
    expect(r.stdout.text).toMatch(/assistant› It's .+\n/);
    expect(r.stdout.text).toMatch(/assistant› You said: hello there/);
    const turns = sim.received.filter((f) => f.type === FrameType.TEXT).map((f) => f.text);
    expect(turns).toEqual(['what time is it', 'hello there']);
    // Each reply once: the next turn superseding an ended reply's task does not print it again.
    expect(r.stdout.text.match(/assistant› /g)).toHaveLength(2);
    expect(r.stdout.text).not.toMatch(/\[interrupted\]/);
  });

  it('piped input: a /quit after turns ends the run once they are answered, as the end of input would', async () => {
    sim = await AdventSim.start({ demo: true, disconnectCloseMs: 10 });
    const r = start(runArgs(sim.port));
    r.stdin.write('what time is it\nhello there\n/quit\nnot sent\n');
    expect(await r.exit).toBe(0);
    const turns = sim.received.filter((f) => f.type === FrameType.TEXT).map((f) => f.text);
    expect(turns).toEqual(['what time is it', 'hello there']);
    expect(r.stdout.text).toMatch(/assistant› You said: hello there/);
  });

  it('without a terminal nobody can answer: a write call is denied at once and the user is told why', async () => {
    sim = await AdventSim.start({ demo: true, disconnectCloseMs: 10 });
    const r = start(runArgs(sim.port));
    await until(() => r.stdout.text.includes('registered'), 'registered');
    r.stdin.write('write a note: buy milk\n');
    await until(
      () => /No window was open to ask you, so I didn't save the note/.test(r.stdout.text),
      'denied reply',
    );
    expect(r.stderr.text).toMatch(
      /create_file needs your permission, but nobody can answer here \(stdin is not a terminal\)/,
    );
    expect(r.stderr.text).toMatch(/--allow create_file/);
    // The reply's mood is printed once, after the words the server sent before it, not inside them.
    await until(() => r.stdout.text.includes('(mood: sad)'), 'the mood line');
    expect(r.stdout.text.match(/\(mood: sad\)/g)).toHaveLength(1);
    r.stdin.end();
    expect(await r.exit).toBe(0);
  });

  it('in a terminal it asks; "y" allows once and the file is written', async () => {
    sim = await AdventSim.start({ demo: true, disconnectCloseMs: 10 });
    const r = start(runArgs(sim.port), { tty: true });
    await until(() => r.stdout.text.includes('registered'), 'registered');
    r.stdin.write('write a note: buy milk\n');
    await until(() => /wants to run create_file: Create file notes/.test(r.stdout.text), 'prompt');
    expect(r.stdout.text).toMatch(/\[y\] once {2}\[s\] this session {2}\[a\] always {2}\[n\] deny/);
    r.stdin.write('maybe\n');
    await until(() => /answer y \(once\)/.test(r.stdout.text), 're-ask');
    // A person reads the question first: a "y" within PROMPT_ARM_MS of it would not be taken.
    await new Promise((resolve) => setTimeout(resolve, PROMPT_ARM_MS + 100));
    r.stdin.write('y\n');
    await until(() => /Saved it/.test(r.stdout.text), 'saved');
    const written = /notes[/\\]note-[\d-]+\.txt/.exec(r.stdout.text);
    r.stdin.end();
    expect(await r.exit).toBe(0);
    expect(written).not.toBeNull();
    expect(await readFile(path.join(dir, 'files', written![0]), 'utf8')).toBe('buy milk');
  });

  it('in a terminal, a "yes" typed as a new question appears is not taken for it', async () => {
    // Two questions at once: the answer to the first, typed again, must not land on the second.
    sim = await AdventSim.start({ demo: true, disconnectCloseMs: 10 });
    const r = start(runArgs(sim.port), { tty: true, promptArmMs: 60_000 });
    await until(() => r.stdout.text.includes('registered'), 'registered');
    const peer = sim.peer();
    const first = peer.call('create_file', { filename: 'a.txt', content: 'a' });
    await until(() => /wants to run create_file/.test(r.stdout.text), 'the first question');
    const second = peer.call('create_file', { filename: 'b.txt', content: 'b' });
    r.stdin.write('n\n'); // "n" is always taken
    expect(await first).toMatchObject({ success: false });
    await until(() => /b\.txt/.test(r.stdout.text), 'the second question');
    r.stdin.write('a\n');
    await until(() => /answer it again/.test(r.stderr.text), 'the answer refused');
    r.stdin.write('n\n');
    expect(await second).toMatchObject({ success: false });
    r.stdin.end();
    expect(await r.exit).toBe(0);
    const auditDir = path.join(dir, 'data', 'audit');
    const months = (await readdir(auditDir)).filter((f) => f.endsWith('.jsonl'));
    const audit = (
      await Promise.all(months.map((f) => readFile(path.join(auditDir, f), 'utf8')))
    ).join('');
    expect(audit.match(/"decision":"denied"/g)).toHaveLength(2);
    expect(audit).not.toMatch(/"decision":"allowed/);
    expect(existsSync(path.join(dir, 'files', 'b.txt'))).toBe(false);
  });

  it('/disable re-registers at once, /services and /audit show state, /quit exits 0', async () => {
    sim = await AdventSim.start({ demo: true, disconnectCloseMs: 10 });
    const r = start(runArgs(sim.port, '--allow', 'create_file'));
    await until(() => r.stdout.text.includes(`registered ${BUILTIN_NAMES.length}`), 'registered');
    r.stdin.write('/disable create_file\n');
    await until(() => sim!.registrations().length === 2, 'second register');
    expect(Object.keys(sim.registrations()[1]!)).toEqual(builtinsWithout('create_file'));
    r.stdin.write('/services\n');
    await until(() => /○ create_file/.test(r.stdout.text), 'services list');
    expect(r.stdout.text).toMatch(/● get_current_time\s+read\s+policy allow/);
    expect(await sim.peer().call('create_file', { filename: 'x.txt', content: 'x' })).toMatchObject(
      { success: false },
    );
    r.stdin.write('/audit\n');
    await until(() => /#1 .* create_file disabled refused/.test(r.stdout.text), 'audit lines');
    r.stdin.write('/quit\n');
    expect(await r.exit).toBe(0);
  });

  it('holds only the servers its flags name: saved profiles stay unconnected, and the run leaves no profile behind', async () => {
    sim = await AdventSim.start({ demo: true, disconnectCloseMs: 10 });
    const other = await AdventSim.start({ demo: true, disconnectCloseMs: 10 });
    try {
      const dataDir = path.join(dir, 'data');
      const api = await CoreApi.open({
        dataDir,
        defaultFilesRoot: path.join(dir, 'files'),
        secrets: await FileSecretStore.open(path.join(dataDir, 'secrets.json')),
        host: 'browser',
        version: '0.0.0-test',
        autoConnect: false,
      });
      await api.saveConnection(
        { kind: 'advent', name: 'Saved', host: '127.0.0.1', port: other.port, autoConnect: true },
        'saved-tok',
      );
      await api.close();

      const r = start(runArgs(sim.port));
      r.stdin.end('what time is it\n');
      expect(await r.exit).toBe(0);
      expect(r.stdout.text).toMatch(/assistant› It's /);
      expect(other.connections).toBe(0);
      const settings = JSON.parse(await readFile(path.join(dataDir, 'settings.json'), 'utf8'));
      expect(settings.connections.map((c: { name: string }) => c.name)).toEqual(['Saved']);
    } finally {
      await other.stop();
    }
  });

  it('--no-chat ignores stdin and runs until a signal', async () => {
    sim = await AdventSim.start({ demo: true, disconnectCloseMs: 10 });
    const r = start(runArgs(sim.port, '--no-chat'));
    await until(() => r.stdout.text.includes('registered'), 'registered');
    r.stdin.write('ignored\n');
    r.stdin.end();
    await new Promise((res) => setTimeout(res, 100));
    expect(sim.received.some((f) => f.type === FrameType.TEXT)).toBe(false);
    r.signal();
    expect(await r.exit).toBe(0);
  });

  it('--mcp-http shows its bearer token once, when it is made, and --mcp-new-token makes another', async () => {
    sim = await AdventSim.start({ demo: true, disconnectCloseMs: 10 });
    const port = await freePort();
    const tokenOf = (text: string): string | undefined =>
      /Authorization: Bearer (\S+)\)/.exec(text)?.[1];
    const runOnce = async (...more: string[]): Promise<string> => {
      const r = start(runArgs(sim!.port, '--no-chat', '--mcp-http', String(port), ...more));
      await until(() => r.stderr.text.includes('MCP over HTTP at'), 'the MCP over HTTP line');
      await until(() => r.stdout.text.includes('registered'), 'registered');
      r.signal();
      expect(await r.exit).toBe(0);
      return r.stderr.text;
    };
    const first = await runOnce();
    const made = tokenOf(first);
    expect(made).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(first).toMatch(/this token is shown only now/);

    const again = await runOnce();
    expect(tokenOf(again)).toBeUndefined();
    expect(again).not.toContain(made);
    expect(again).toMatch(
      /with the bearer token shown when it was made \(--mcp-new-token makes a new one/,
    );

    const renewed = tokenOf(await runOnce('--mcp-new-token'));
    expect(renewed).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(renewed).not.toBe(made);

    const alone = start(['run', '--server', 'h:1', '--token', 't', '--mcp-new-token']);
    expect(await alone.exit).toBe(2);
    expect(alone.stderr.text).toMatch(/--mcp-new-token goes with --mcp-http/);
  });

  it('exits 1 with the server text when the login is refused', async () => {
    sim = await AdventSim.start({ auth: { reject: '##ERROR:token invalid' } });
    const r = start(runArgs(sim.port));
    expect(await r.exit).toBe(1);
    expect(r.stderr.text).toMatch(
      /login failed: the server refused the login: ##ERROR:token invalid/,
    );
  });

  it('reads the token from --token-file and never prints it', async () => {
    sim = await AdventSim.start({ demo: true, disconnectCloseMs: 10 });
    const tokenFile = path.join(dir, 'token.txt');
    await writeFile(tokenFile, 'very-secret-token\n');
    const r = start([
      'run',
      '--server',
      `127.0.0.1:${sim.port}`,
      '--token-file',
      tokenFile,
      '--data-dir',
      path.join(dir, 'data'),
    ]);
    await until(() => r.stdout.text.includes('registered'), 'registered');
    // "registered" prints when the frame is written; wait until the simulator has read it.
    await until(() => sim!.lastAuth() !== undefined, 'the login to reach the simulator');
    expect(sim.lastAuth()?.token).toBe('very-secret-token');
    r.stdin.end();
    expect(await r.exit).toBe(0);
    expect(r.stdout.text + r.stderr.text).not.toContain('very-secret-token');
  });

  it('says which token file it cannot read', async () => {
    const r = start(['run', '--server', '127.0.0.1:1', '--token-file', path.join(dir, 'missing')]);
    expect(await r.exit).toBe(2);
    expect(r.stderr.text).toMatch(/cannot read the token from .*missing/);
  });

  it('audit lists what a run recorded, as text or JSON, and verifies the chain', async () => {
    sim = await AdventSim.start({ demo: true, disconnectCloseMs: 10 });
    const r = start(runArgs(sim.port));
    await until(() => r.stdout.text.includes('registered'), 'registered');
    await sim.peer().call('get_current_time', { format: 'simple' });
    await sim.peer().call('create_file', { filename: 'a.txt', content: 'x' });
    r.stdin.end();
    expect(await r.exit).toBe(0);

    const text = start(['audit', '--data-dir', path.join(dir, 'data')]);
    expect(await text.exit).toBe(0);
    expect(text.stdout.text).toMatch(/#1 .* get_current_time auto ok/);
    expect(text.stdout.text).toMatch(/#2 .* create_file denied refused no_prompt_ui/);

    const json = start([
      'audit',
      '--data-dir',
      path.join(dir, 'data'),
      '--service',
      'create_file',
      '--json',
    ]);
    expect(await json.exit).toBe(0);
    const lines = json.stdout.text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { service: string; hash: string });
    expect(lines.map((l) => l.service)).toEqual(['create_file']);

    const verify = start(['audit', '--data-dir', path.join(dir, 'data'), '--verify']);
    expect(await verify.exit).toBe(0);
    expect(verify.stdout.text).toMatch(/audit log intact: 2 record\(s\).*keyed chain checked/);

    // Where the key is out of reach (the desktop app's keychain), everything else is still checked.
    await rm(path.join(dir, 'data', 'secrets.json'));
    const keyless = start(['audit', '--data-dir', path.join(dir, 'data'), '--verify']);
    expect(await keyless.exit).toBe(0);
    expect(keyless.stdout.text).toMatch(/audit log intact: 2 record\(s\)/);
    expect(keyless.stdout.text).toMatch(/keyed check was not possible/);
  });

  it('the installed bin runs as a real process: --help, then a session ended by EOF with exit 0', async () => {
    const bin = path.join(repo, 'bin', 'advent-agent.js');
    expect(existsSync(path.join(repo, 'dist', 'main', 'headless', 'cli.js'))).toBe(true);
    const help = await runProcess(bin, ['--help'], '');
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/Usage:/);

    sim = await AdventSim.start({ demo: true, disconnectCloseMs: 10 });
    const session = await runProcess(bin, runArgs(sim.port), 'what time is it\n', () =>
      until(
        () =>
          sim!.received.some(
            (f) => f.type === FrameType.MCP && (f.json as { type?: string })?.type === 'result',
          ),
        'result',
        10_000,
      ),
    );
    expect(session.code).toBe(0);
    expect(session.stdout).toMatch(/✓ connected/);
    expect(sim.received.some((f) => f.type === FrameType.STATUS && f.text === '##DISCONNECT')).toBe(
      true,
    );
  });
});

function runProcess(
  bin: string,
  args: string[],
  input: string,
  beforeEnd?: () => Promise<void>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const killer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(killer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.write(input);
    void (beforeEnd ? beforeEnd() : Promise.resolve()).finally(() => child.stdin.end());
  });
}
