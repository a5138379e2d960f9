/**
 * A fifth connection kind added from outside: test/dialects/echo/ (its spec, session and
 * descriptor) plus one entry in each list given to the agent. No file of the app changes, and the
 * kind works everywhere kinds are used: the core, the gate and audit, the terminal flags.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CoreApi } from '../../app/api.js';
import type { ChatItem, ProfileInput } from '../../app/contract/index.js';
import { MemorySecretStore } from '../../app/settings/secrets.js';
import type { Dialect } from '../../app/wire/dialect.js';
import { DIALECTS } from '../../app/wire/dialects.js';
import { parseCliArgs, usage } from '../../main/headless/args.js';
import { main } from '../../main/headless/cli.js';
import { until } from '../helpers/wait.js';
import { echoDialect } from './echo/index.js';
import { EchoServer } from './echo/server.js';

const WITH_ECHO = [...DIALECTS, echoDialect];
const FAST = { backoffInitialMs: 20, backoffMaxMs: 100, pingIntervalMs: 0 };

let dir: string;
let server: EchoServer;
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'advent-echo-'));
  server = await EchoServer.start();
});
afterEach(async () => {
  await server.stop();
  await rm(dir, { recursive: true, force: true });
});

function open(dialects: readonly Dialect[] = WITH_ECHO): Promise<CoreApi> {
  return CoreApi.open({
    dataDir: path.join(dir, 'data'),
    defaultFilesRoot: path.join(dir, 'files'),
    secrets: new MemorySecretStore(),
    version: '0.0.0-test',
    host: 'browser',
    wsTiming: FAST,
    dialects,
  });
}

const echoInput = (url: string) =>
  ({ kind: 'echo', name: 'Echo', url, prefix: 'heard' }) as unknown as ProfileInput;

describe('a connection kind added as a folder plus two list entries', () => {
  it('is offered, saved, connected, chats and calls services through the one gate', async () => {
    const api = await open();
    try {
      const snap = await api.snapshot();
      expect(snap.kinds.map((k) => k.kind)).toEqual([
        'advent',
        'xiaozhi',
        'endpoint',
        'robot',
        'echo',
      ]);
      expect(snap.kinds.at(-1)?.title['zh-CN']).toBe('回声服务器');

      const profile = await api.saveConnection(echoInput(server.url));
      expect(profile).toMatchObject({ kind: 'echo', address: server.url, hasToken: false });
      await api.connect(profile.id);
      await until(() => server.hellos.length > 0, 'the hello');
      expect(server.hellos[0]).toContain('get_current_time');

      const chat: ChatItem[] = [];
      api.events.on('chat', (item) => chat.push(item));
      await api.sendText('hello there');
      await until(
        () => chat.some((i) => i.kind === 'assistant' && i.text === 'heard: hello there'),
        'the echo',
      );

      const result = (await server.call('get_current_time', {})) as { ok: boolean };
      expect(result.ok).toBe(true);
      const records = (await api.queryAudit({})).records;
      expect(records[0]).toMatchObject({
        service: 'get_current_time',
        dialect: 'echo',
        connection: 'Echo',
        connectionId: profile.id,
        decision: 'auto',
      });
    } finally {
      await api.close();
    }
  });

  it('an agent started without it refuses its profiles clearly', async () => {
    const api = await open(DIALECTS);
    try {
      await expect(api.saveConnection(echoInput(server.url))).rejects.toMatchObject({
        code: 'invalid_profile',
        message: expect.stringMatching(/there is no connection kind "echo"/),
      });
    } finally {
      await api.close();
    }
  });

  it('gets its own terminal flags: --echo URL and its field flags, in --help and in run', async () => {
    const kinds = WITH_ECHO.map((d) => d.profile);
    expect(usage(kinds)).toContain('--echo WS_URL [--echo-prefix VALUE]');
    const bad = parseCliArgs(['run', '--echo', server.url, '--echo-prefix', 'NO'], kinds);
    expect(bad).toEqual({
      ok: false,
      message: "--echo-prefix: Lowercase letters only. (got 'NO')",
    });

    const stdin = new PassThrough();
    const stdout = new PassThrough();
    let out = '';
    stdout.on('data', (b: Buffer) => (out += b.toString()));
    const exit = main(
      ['run', '--echo', server.url, '--echo-prefix', 'flag', '--data-dir', path.join(dir, 'cli')],
      {
        stdin,
        stdout,
        stderr: new PassThrough(),
        onSignal: () => () => {},
        dataDir: () => path.join(dir, 'cli'),
        filesRoot: () => path.join(dir, 'files'),
        version: '0.0.0-test',
        wsTiming: FAST,
        dialects: WITH_ECHO,
      },
    );
    stdin.end('hi from the terminal\n');
    expect(await exit).toBe(0);
    expect(server.said).toEqual(['hi from the terminal']);
    expect(out).toContain('flag: hi from the terminal');
  });
});
