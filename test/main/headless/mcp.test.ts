import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CoreApi } from '../../../app/api.js';
import { MAX_MESSAGE_BYTES } from '../../../app/mcp-serve/limits.js';
import { defaultSettings } from '../../../app/settings/schema.js';
import { MemorySecretStore } from '../../../app/settings/secrets.js';
import { headlessMcpLaunch } from '../../../main/headless/mcp-launch.js';
import { nextEvent, until } from '../../helpers/wait.js';
import { initializeRequest, textOf } from '../../mcp-serve/helpers.js';

// The built command as an MCP app launches it: `node bin/advent-agent.js mcp --data-dir DIR`,
// spoken to by the SDK's own stdio client. Needs `npm run build` first (npm test does).
const repo = path.resolve(import.meta.dirname, '..', '..', '..');
const bin = path.join(repo, 'bin', 'advent-agent.js');

let dir: string;
const clients: Client[] = [];
const children: ChildProcess[] = [];
let api: CoreApi | undefined;

beforeAll(() => {
  if (!existsSync(path.join(repo, 'dist', 'main', 'headless', 'cli.js')))
    throw new Error('run `npm run build` first: dist/main/headless/cli.js not found');
});

afterEach(async () => {
  for (const c of clients.splice(0)) await c.close().catch(() => undefined);
  for (const c of children.splice(0)) c.kill('SIGKILL');
  await api?.close();
  api = undefined;
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function freshDir(policies: Record<string, 'allow' | 'deny'> = {}): Promise<string> {
  dir = await mkdtemp(path.join(os.tmpdir(), 'advent-mcp-cli-'));
  const dataDir = path.join(dir, 'data');
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  const settings = defaultSettings(path.join(dir, 'files'));
  for (const [name, policy] of Object.entries(policies)) settings.services[name] = { policy };
  await writeFile(path.join(dataDir, 'settings.json'), JSON.stringify(settings));
  return dataDir;
}

/** An agent (as a window's host would run one) holding `dataDir`: `mcp` relays to it. */
function holdFolder(dataDir: string): Promise<CoreApi> {
  return CoreApi.open({
    dataDir,
    defaultFilesRoot: path.join(dir, 'files'),
    secrets: new MemorySecretStore(),
    host: 'browser',
    version: '0.0.1',
  });
}

async function launch(
  dataDir: string,
  info = { name: 'claude-ai', title: 'Claude Desktop' },
): Promise<{ client: Client; stderr: () => string }> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [bin, 'mcp', '--data-dir', dataDir],
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (c: Buffer) => (stderr += c.toString()));
  const client = new Client({ ...info, version: '1' });
  await client.connect(transport);
  clients.push(client);
  return { client, stderr: () => stderr };
}

function run(args: string[]): Promise<{ code: number | null; stdout: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [bin, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.on('close', (code) => resolve({ code, stdout }));
  });
}

describe('advent-agent mcp (stdio)', () => {
  it('--help says what it is for', async () => {
    const help = await run(['mcp', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/advent-agent mcp \[--data-dir DIR\]/);
    expect(help.stdout).toMatch(/Claude Desktop, Cursor/);
  });

  it('answers an old protocol version with that version, and nothing but MCP reaches stdout', async () => {
    const dataDir = await freshDir();
    const child = spawn(process.execPath, [bin, 'mcp', '--data-dir', dataDir], {
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    children.push(child);
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stdin.write(
      `${JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: {
          protocolVersion: '2024-11-05',
          capabilities: {},
          clientInfo: { name: 'old', version: '0' },
        },
      })}\n`,
    );
    await until(() => out.includes('\n'), 'the initialize answer', 15_000);
    const lines = out.trim().split('\n');
    expect(lines).toHaveLength(1);
    const answer = JSON.parse(lines[0]!) as {
      id: number;
      result: { protocolVersion: string; serverInfo: { name: string } };
    };
    expect(answer).toMatchObject({
      id: 1,
      result: { protocolVersion: '2024-11-05', serverInfo: { name: 'advent-agent' } },
    });
    child.stdin.end();
    const code = await new Promise((r) => child.once('close', r));
    expect(code).toBe(0);
  });

  it('runs its own agent: lists with annotations, calls allowed / denied / invalid / unknown, refuses what needs a window, and the audit verifies', async () => {
    const dataDir = await freshDir({ list_apps: 'deny' });
    const { client } = await launch(dataDir);
    const { tools } = await client.listTools();
    expect(tools.find((t) => t.name === 'create_file')?.annotations).toMatchObject({
      destructiveHint: true,
    });

    const time = await client.callTool({ name: 'get_current_time', arguments: {} });
    expect(time.isError).toBeFalsy();
    const denied = await client.callTool({ name: 'list_apps', arguments: {} });
    expect(textOf(denied)).toMatch(/blocked/);
    const invalid = await client.callTool({ name: 'get_current_time', arguments: { format: 7 } });
    expect(invalid.isError).toBe(true);
    await expect(client.callTool({ name: 'nope', arguments: {} })).rejects.toMatchObject({
      code: -32602,
    });
    const asks = await client.callTool({
      name: 'create_file',
      arguments: { filename: 'x.txt', content: 'x' },
    });
    expect(textOf(asks)).toMatch(/open Advent Agent to approve it/);
    await client.close();

    // The agent let go of the folder: the log is read by another command, one intact chain.
    await until(() => !existsSync(path.join(dataDir, 'agent.lock')), 'the lock released', 10_000);
    const verify = await run(['audit', '--data-dir', dataDir, '--verify']);
    expect(verify.code).toBe(0);
    expect(verify.stdout).toMatch(/audit log intact: 5 record\(s\)/);
    const json = await run(['audit', '--data-dir', dataDir, '--json']);
    const records = json.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { connection: string; dialect: string; service: string });
    expect(records.map((r) => r.service)).toEqual([
      'get_current_time',
      'list_apps',
      'get_current_time',
      'nope',
      'create_file',
    ]);
    expect(new Set(records.map((r) => `${r.connection}/${r.dialect}`))).toEqual(
      new Set(['Claude Desktop/mcp']),
    );
  });

  it('relays to the agent holding the data folder: its window is asked, the list change is told, one chain records', async () => {
    const dataDir = await freshDir();
    api = await holdFolder(dataDir);
    api.attachUi('test window');
    const { client, stderr } = await launch(dataDir, { name: 'cursor', title: 'Cursor' });
    expect(stderr()).toMatch(/relaying to the Advent Agent that holds/);

    const prompt = nextEvent(api.events, 'prompt', () => true, 10_000);
    const call = client.callTool({
      name: 'create_file',
      arguments: { filename: 'relayed.txt', content: 'through the socket' },
    });
    const p = await prompt;
    expect(p.connection).toEqual({ id: 'mcp:cursor', name: 'Cursor' });
    await api.answerPrompt(p.id, 'once');
    expect((await call).isError).toBeFalsy();
    expect(await readFile(path.join(dir, 'files', 'relayed.txt'), 'utf8')).toBe(
      'through the socket',
    );

    let changed = 0;
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      changed += 1;
    });
    await client.listTools();
    await api.setServiceEnabled('get_current_time', false);
    await until(() => changed === 1, 'tools/list_changed through the relay', 10_000);

    const verified = await api.verifyAudit();
    expect(verified.ok).toBe(true);
    const page = await api.queryAudit({ service: 'create_file' });
    expect(page.records).toHaveLength(1);
    expect(page.records[0]).toMatchObject({ connection: 'Cursor', decision: 'allowed-once' });
  });

  it('a second `mcp` on the same folder relays into the first; a socket left by a killed agent is cleared', async () => {
    const dataDir = await freshDir();
    // A socket file nobody answers on, as an agent killed with SIGKILL leaves it.
    const sock = path.join(dataDir, 'mcp.sock');
    await new Promise<void>((resolve) => {
      const child = spawn(process.execPath, [
        '-e',
        `require('net').createServer().listen(${JSON.stringify(sock)}, () => process.kill(process.pid, 'SIGKILL'))`,
      ]);
      child.once('close', () => resolve());
    });
    expect(existsSync(sock)).toBe(true);

    const first = await launch(dataDir, { name: 'one', title: 'One' });
    expect(first.stderr()).not.toMatch(/relaying/);
    const second = await launch(dataDir, { name: 'two', title: 'Two' });
    await until(() => /relaying/.test(second.stderr()), 'the second relays', 10_000);
    expect(
      (await second.client.callTool({ name: 'get_current_time', arguments: {} })).isError,
    ).toBeFalsy();
    expect(
      (await first.client.callTool({ name: 'get_current_time', arguments: {} })).isError,
    ).toBeFalsy();
  });

  it('the launch command for MCP apps is this Node and the bin, with the folder when not the default', () => {
    expect(
      headlessMcpLaunch('/d/default', '/d/default', '/usr/bin/node', '/pkg/bin/advent-agent.js'),
    ).toEqual({
      command: '/usr/bin/node',
      args: ['/pkg/bin/advent-agent.js', 'mcp'],
    });
    expect(
      headlessMcpLaunch('/d/other', '/d/default', '/usr/bin/node', '/pkg/bin/advent-agent.js'),
    ).toEqual({
      command: '/usr/bin/node',
      args: ['/pkg/bin/advent-agent.js', 'mcp', '--data-dir', '/d/other'],
    });
    expect(headlessMcpLaunch('/d', '/e').args[0]).toBe(bin);
  });
});

// At its edges: a message past MAX_MESSAGE_BYTES is refused with an answer and the session goes
// on, in both modes; and a session that ends lets the process go, saying why when it was not the
// client that ended it.
/** The `mcp` process spoken to in raw lines, its output kept. */
function spawnMcp(dataDir: string) {
  const child = spawn(process.execPath, [bin, 'mcp', '--data-dir', dataDir], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  children.push(child);
  const seen = { out: '', err: '', exit: undefined as number | null | undefined };
  child.stdout.on('data', (c: Buffer) => (seen.out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (seen.err += c.toString()));
  child.once('exit', (code) => (seen.exit = code));
  const send = (message: unknown) => child.stdin.write(`${JSON.stringify(message)}\n`);
  send(initializeRequest('raw', 0));
  return { child, seen, send };
}

const tooLarge = { filename: 'big.txt', content: 'x'.repeat(MAX_MESSAGE_BYTES) };
const refusal = {
  code: -32600,
  message: expect.stringMatching(new RegExp(`at most ${MAX_MESSAGE_BYTES} bytes`)),
};

async function refusedThenServed(client: Client, files: string): Promise<void> {
  await expect(client.callTool({ name: 'create_file', arguments: tooLarge })).rejects.toMatchObject(
    refusal,
  );
  expect(existsSync(path.join(files, 'big.txt'))).toBe(false);
  const next = await client.callTool({
    name: 'create_file',
    arguments: { filename: 'small.txt', content: 'fits' },
  });
  expect(next.isError).toBeFalsy();
  expect(existsSync(path.join(files, 'small.txt'))).toBe(true);
}

describe('advent-agent mcp at its limits', () => {
  it('its own agent: a call past the bound is refused at once with an error, said on stderr, and the session goes on', async () => {
    const dataDir = await freshDir({ create_file: 'allow' });
    const { client, stderr } = await launch(dataDir);
    await refusedThenServed(client, path.join(dir, 'files'));
    expect(stderr()).toMatch(
      /advent-agent mcp: warn: an MCP client's message \(request \d+\) was refused: a message may be at most 4194304 bytes/,
    );
  });

  it('relayed into the agent holding the folder: a call past the bound is refused at once with an error, and the session goes on', async () => {
    const dataDir = await freshDir({ create_file: 'allow' });
    api = await holdFolder(dataDir);
    const { client, stderr } = await launch(dataDir);
    expect(stderr()).toMatch(/relaying to the Advent Agent that holds/);
    await refusedThenServed(client, path.join(dir, 'files'));
  });

  it('its own agent, stopped by a signal while the client keeps stdin open: the process exits', async () => {
    const mcp = spawnMcp(await freshDir({ create_file: 'allow' }));
    await until(() => mcp.seen.out.includes('"id":0'), 'initialize answered', 15_000);
    mcp.child.kill('SIGTERM');
    await until(() => mcp.seen.exit !== undefined, 'the process exited', 10_000);
    expect(mcp.seen.exit).toBe(0);
  });

  it('relayed, when the agent ends the session: the process says so on stderr and exits', async () => {
    const dataDir = await freshDir({ create_file: 'allow' });
    api = await holdFolder(dataDir);
    const mcp = spawnMcp(dataDir);
    await until(() => mcp.seen.out.includes('"id":0'), 'initialize answered', 15_000);
    await api.close();
    api = undefined;
    await until(() => mcp.seen.exit !== undefined, 'the process exited', 10_000);
    expect(mcp.seen.err).toMatch(
      /advent-agent mcp: warn: the Advent Agent that holds .* ended this session/,
    );
  });
});
