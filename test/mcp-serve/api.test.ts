import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CoreApi } from '../../app/api.js';
import type { McpHttpState } from '../../app/contract/index.js';
import { MemorySecretStore } from '../../app/settings/secrets.js';
import { parseCliArgs } from '../../main/headless/args.js';
import { freePort } from '../e2e/harness.js';

let dir: string | undefined;
let api: CoreApi | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
  if (dir) await rm(dir, { recursive: true, force: true });
  dir = undefined;
});

async function open(options: Partial<Parameters<typeof CoreApi.open>[0]> = {}): Promise<CoreApi> {
  dir = await mkdtemp(path.join(os.tmpdir(), 'advent-serve-api-'));
  api = await CoreApi.open({
    dataDir: path.join(dir, 'data'),
    defaultFilesRoot: path.join(dir, 'files'),
    secrets: new MemorySecretStore(),
    host: 'browser',
    version: '1.0.0',
    ...options,
  });
  return api;
}

describe('the MCP HTTP endpoint through the contract', () => {
  it('off by default; saved on, it listens (snapshot, event, settings), and saved off it stops', async () => {
    const core = await open();
    expect((await core.snapshot()).mcpHttp).toEqual({ status: 'off' });
    expect((await core.getSettings()).mcpHttp).toEqual({ enabled: false, port: 8931 });
    const states: McpHttpState[] = [];
    core.events.on('mcpHttp', (s) => states.push(s));
    const port = await freePort();
    const view = await core.saveSettings({ mcpHttp: { enabled: true, port } });
    expect(view.mcpHttp).toEqual({ enabled: true, port });
    expect((await core.snapshot()).mcpHttp).toEqual({
      status: 'listening',
      port,
      url: `http://127.0.0.1:${port}/mcp`,
    });
    expect(states.map((s) => s.status)).toEqual(['starting', 'listening']);
    const token = await core.getMcpHttpToken();
    expect(await core.getMcpHttpToken()).toBe(token);
    expect(await core.resetMcpHttpToken()).not.toBe(token);
    await core.saveSettings({ mcpHttp: { enabled: false, port } });
    expect((await core.snapshot()).mcpHttp).toEqual({ status: 'off' });
  });

  it('`--mcp-http PORT` turns it on for the run without saving it', async () => {
    const port = await freePort();
    const core = await open({ mcpHttp: { port } });
    expect((await core.snapshot()).mcpHttp).toMatchObject({ status: 'listening', port });
    expect((await core.getSettings()).mcpHttp).toEqual({ enabled: true, port });
    expect(core.agent.getSettings().mcpHttp).toBeUndefined();
  });

  it('parses --mcp-http with or without a port, on ui and run', () => {
    const ui = parseCliArgs(['ui', '--mcp-http', '--port', '0']);
    expect(ui).toMatchObject({ ok: true, args: { command: 'ui', mcpHttp: {}, listenPort: 0 } });
    expect(parseCliArgs(['ui', '--mcp-http', '9000'])).toMatchObject({
      ok: true,
      args: { mcpHttp: { port: 9000 } },
    });
    expect(
      parseCliArgs(['run', '--server', '127.0.0.1:1', '--token', 't', '--mcp-http=9001']),
    ).toMatchObject({
      args: { mcpHttp: { port: 9001 } },
    });
    expect(parseCliArgs(['ui', '--mcp-http=80'])).toMatchObject({
      ok: false,
      message: expect.stringMatching(/--mcp-http takes a port from 1024 to 65535/),
    });
    expect(parseCliArgs(['ui'])).toMatchObject({ ok: true });
    expect((parseCliArgs(['ui']) as { args: object }).args).not.toHaveProperty('mcpHttp');
  });
});
