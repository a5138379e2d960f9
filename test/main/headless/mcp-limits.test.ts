/**
 * `advent-agent mcp` (the built command, as an MCP app launches it) at its edges: a message past
 * MAX_MESSAGE_BYTES is refused with an answer and the session goes on, in both modes; and a
 * session that ends lets the process go, saying why when it was not the client that ended it.
 * Needs `npm run build` first (npm test does).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CoreApi } from '../../../app/api.js';
import { MAX_MESSAGE_BYTES } from '../../../app/mcp-serve/limits.js';
import { defaultSettings } from '../../../app/settings/schema.js';
import { MemorySecretStore } from '../../../app/settings/secrets.js';
import { until } from '../../helpers/wait.js';

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

async function freshDir(): Promise<string> {
  dir = await mkdtemp(path.join(os.tmpdir(), 'advent-mcp-limits-'));
  const dataDir = path.join(dir, 'data');
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  const settings = defaultSettings(path.join(dir, 'files'));
  settings.services.create_file = { policy: 'allow' };
  await writeFile(path.join(dataDir, 'settings.json'), JSON.stringify(settings));
  return dataDir;
}

async function launch(dataDir: string): Promise<{ client: Client; stderr: () => string }> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [bin, 'mcp', '--data-dir', dataDir],
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (c: Buffer) => (stderr += c.toString()));
  const client = new Client({ name: 'claude-ai', title: 'Claude Desktop', version: '1' });
  await client.connect(transport);
  clients.push(client);
  return { client, stderr: () => stderr };
}

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
  send({
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: {
      protocolVersion: '2025-06-18',
      capabilities: {},
      clientInfo: { name: 'raw', version: '1' },
    },
  });
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
    const dataDir = await freshDir();
    const { client, stderr } = await launch(dataDir);
    await refusedThenServed(client, path.join(dir, 'files'));
    expect(stderr()).toMatch(
      /advent-agent mcp: warn: an MCP client's message \(request \d+\) was refused: a message may be at most 4194304 bytes/,
    );
  });

  it('relayed into the agent holding the folder: a call past the bound is refused at once with an error, and the session goes on', async () => {
    const dataDir = await freshDir();
    api = await CoreApi.open({
      dataDir,
      defaultFilesRoot: path.join(dir, 'files'),
      secrets: new MemorySecretStore(),
      host: 'browser',
      version: '0.0.1',
    });
    const { client, stderr } = await launch(dataDir);
    expect(stderr()).toMatch(/relaying to the Advent Agent that holds/);
    await refusedThenServed(client, path.join(dir, 'files'));
  });

  it('its own agent, stopped by a signal while the client keeps stdin open: the process exits', async () => {
    const mcp = spawnMcp(await freshDir());
    await until(() => mcp.seen.out.includes('"id":0'), 'initialize answered', 15_000);
    mcp.child.kill('SIGTERM');
    await until(() => mcp.seen.exit !== undefined, 'the process exited', 10_000);
    expect(mcp.seen.exit).toBe(0);
  });

  it('relayed, when the agent ends the session: the process says so on stderr and exits', async () => {
    const dataDir = await freshDir();
    api = await CoreApi.open({
      dataDir,
      defaultFilesRoot: path.join(dir, 'files'),
      secrets: new MemorySecretStore(),
      host: 'browser',
      version: '0.0.1',
    });
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
