import { existsSync } from 'node:fs';
import { copyFile, cp, mkdir, mkdtemp, readFile, rm, symlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// `AdventAgent mcp` on the BUILT main bundle, laid out as in a packaged app (runAsNode is off
// there, so the executable itself must serve MCP), under the recording Electron fake of
// smoke/electron.mjs, spoken to by the SDK's stdio client. Needs `npm run build` first.
const root = path.resolve(import.meta.dirname, '..', '..', '..');
const smokeDir = path.join(import.meta.dirname, 'smoke');
let tmp: string;
let main: string;

beforeAll(async () => {
  if (!existsSync(path.join(root, 'dist', 'main', 'electron', 'main.js')))
    throw new Error('run `npm run build` first: dist/main/electron/main.js not found');
  tmp = await mkdtemp(path.join(os.tmpdir(), 'advent-smoke-mcp-'));
  const appDir = path.join(tmp, 'resources', 'app.asar');
  await cp(path.join(root, 'dist', 'main'), path.join(appDir, 'dist', 'main'), {
    recursive: true,
    filter: (src) => !src.endsWith('.map'),
  });
  for (const part of ['app', 'sim'])
    await cp(path.join(root, 'dist', part), path.join(appDir, 'dist', part), {
      recursive: true,
      filter: (src) => !src.endsWith('.map'),
    });
  await copyFile(path.join(root, 'package.json'), path.join(appDir, 'package.json'));
  await symlink(path.join(root, 'node_modules'), path.join(appDir, 'node_modules'), 'dir');
  await mkdir(path.join(tmp, 'home'), { recursive: true });
  main = path.join(appDir, 'dist', 'main', 'electron', 'main.js');
});

afterAll(async () => {
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

describe('AdventAgent mcp (the packaged executable as a stdio MCP server)', () => {
  it('serves MCP on stdio with no window, no single-instance lock, and exits when the client leaves', async () => {
    const home = path.join(tmp, 'home');
    const record = path.join(tmp, 'record.jsonl');
    const dataDir = path.join(tmp, 'data');
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: ['--import', path.join(smokeDir, 'register.mjs'), main, 'mcp', '--data-dir', dataDir],
      cwd: tmp,
      stderr: 'pipe',
      env: {
        PATH: process.env.PATH ?? '',
        HOME: home,
        XDG_DATA_HOME: path.join(home, '.local', 'share'),
        XDG_CONFIG_HOME: path.join(home, '.config'),
        ADVENT_LOG_CONSOLE: '0',
        ADVENT_SMOKE_RECORD: record,
        ADVENT_SMOKE_HOME: home,
      },
    });
    let stderr = '';
    transport.stderr?.on('data', (c: Buffer) => (stderr += c.toString()));
    const client = new Client({ name: 'claude-ai', title: 'Claude Desktop', version: '1' });
    await client.connect(transport);
    expect(client.getServerVersion()?.name).toBe('advent-agent');
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toContain('get_current_time');
    const time = await client.callTool({ name: 'get_current_time', arguments: {} });
    expect(time.isError, stderr).toBeFalsy();
    const exited = new Promise<void>((resolve) => {
      transport.onclose = () => resolve();
    });
    await client.close();
    await exited;

    const records = (await readFile(record, 'utf8'))
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { type: string; code?: number });
    const types = records.map((r) => r.type);
    expect(types).not.toContain('app.requestSingleInstanceLock');
    expect(types).not.toContain('BrowserWindow');
    expect(types).not.toContain('timeout');
    expect(records.find((r) => r.type === 'app.exit')).toMatchObject({ code: 0 });
    // Its own agent wrote the call into the folder's audit log.
    expect(existsSync(path.join(dataDir, 'audit'))).toBe(true);
  });
});
