import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CoreApi } from '../../app/api.js';
import type { McpHttpState } from '../../app/contract/index.js';
import { checkCommand } from '../../app/contract/validate.js';
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
      hasToken: false,
    });
    expect(states.map((s) => s.status)).toEqual(['starting', 'listening']);
    await core.saveSettings({ mcpHttp: { enabled: false, port } });
    expect((await core.snapshot()).mcpHttp).toEqual({ status: 'off' });
  });

  it('the token is shown once: handed out when made, never readable through the contract again', async () => {
    const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
    const { StreamableHTTPClientTransport } =
      await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
    const port = await freePort();
    const core = await open();
    await core.saveSettings({ mcpHttp: { enabled: true, port } });
    const url = new URL(`http://127.0.0.1:${port}/mcp`);
    const connect = async (token: string) => {
      const client = new Client({ name: 'once-client', version: '1' });
      await client.connect(
        new StreamableHTTPClientTransport(url, {
          requestInit: { headers: { authorization: `Bearer ${token}` } },
        }),
      );
      return client;
    };
    // Switched on, no token was made: nothing can connect, and the page is told there is none.
    expect((await core.snapshot()).mcpHttp).toMatchObject({ hasToken: false });
    await expect(connect('a-guess')).rejects.toThrow(/a valid bearer token is needed/);

    const states: McpHttpState[] = [];
    core.events.on('mcpHttp', (s) => states.push(s));
    const first = await core.resetMcpHttpToken();
    expect(states).toEqual([expect.objectContaining({ status: 'listening', hasToken: true })]);
    const client = await connect(first);
    expect((await client.listTools()).tools.length).toBeGreaterThan(0);
    await client.close();

    // No page can ask for it again: the only command is to make a new one.
    for (const name of ['getMcpHttpToken', 'mcpHttpToken', 'showMcpHttpToken'])
      expect(checkCommand(name, [])).toMatchObject({ ok: false, code: 'unknown_command' });
    expect(JSON.stringify(await core.snapshot())).not.toContain(first);

    const second = await core.resetMcpHttpToken();
    expect(second).not.toBe(first);
    await expect(connect(first)).rejects.toThrow(/a valid bearer token is needed/);
    await (await connect(second)).close();
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

describe('what MCP apps are offered (Services → Offered to each connection → MCP apps)', () => {
  it('lists only the chosen services, tells the client when the choice changes, and the gate refuses (and records) the others', async () => {
    const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
    const { StreamableHTTPClientTransport } =
      await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
    const { ToolListChangedNotificationSchema } =
      await import('@modelcontextprotocol/sdk/types.js');
    const port = await freePort();
    const core = await open({ mcpHttp: { port } });
    await core.setOffer('mcp-clients', { only: ['get_current_time'] });
    const client = new Client({ name: 'offer-client', title: 'Offer Client', version: '1' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${await core.resetMcpHttpToken()}` } },
      }),
    );
    try {
      expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['get_current_time']);

      // As unknown as a name never listed (-32602, MCP's unknown tool), and still on the record.
      await expect(client.callTool({ name: 'create_file', arguments: {} })).rejects.toThrow(
        /no service named 'create_file'; available services: get_current_time$/,
      );
      const records = (await core.queryAudit({ service: 'create_file' })).records;
      expect(records).toMatchObject([
        { connection: 'Offer Client', dialect: 'mcp', decision: 'invalid', outcome: 'refused' },
      ]);

      const changed = new Promise<void>((resolve) =>
        client.setNotificationHandler(ToolListChangedNotificationSchema, () => resolve()),
      );
      await core.setOffer('mcp-clients', { only: ['get_current_time', 'list_directory'] });
      await changed;
      expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual([
        'get_current_time',
        'list_directory',
      ]);
    } finally {
      await client.close();
    }
  });
});
