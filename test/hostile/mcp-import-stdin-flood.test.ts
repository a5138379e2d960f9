/**
 * A real MCP server (a child process) stops reading its stdin and sends requests with ids of a
 * megabyte: every answer the SDK writes back waited in the agent's memory, without end (202 MB to
 * 3.7 GB of heap in a minute). Past a bound the server is closed with the reason on its row, and
 * restarted with backoff like a server that crashed.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { MAX_QUEUED_BYTES } from '../../app/services/mcp/process-transport.js';
import { type McpAgent, importConfig, openMcpAgent, serverState } from '../services/mcp/helpers.js';

const SERVER = path.join(path.dirname(fileURLToPath(import.meta.url)), 'mcp-import-server.mjs');

let rig: McpAgent | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

describe('hostile MCP server: requests it never reads the answers to', () => {
  it('is closed once the unread answers pass the bound, the reason on its row, and restarted', async () => {
    rig = await openMcpAgent();
    const { agent, dir } = rig;
    const idBytes = 1024 * 1024;
    // Twice as many answers as the bound holds.
    const count = Math.ceil((2 * MAX_QUEUED_BYTES) / idBytes);
    await importConfig(agent, dir, {
      h: {
        command: process.execPath,
        args: [SERVER],
        env: { FLOOD: String(count), FLOOD_ID_BYTES: String(idBytes) },
      },
    });
    const view = await serverState(agent, 'h', (v) => v.state.status === 'restarting', 30_000);
    expect(view.state).toMatchObject({
      status: 'restarting',
      reason: expect.stringMatching(/^it is not reading its input/),
    });
    expect(agent.mcp.log(view.id).map((l) => l.text)).toContainEqual(
      expect.stringMatching(/^it is not reading its input/),
    );
  });
});
