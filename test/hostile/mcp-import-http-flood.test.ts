/**
 * A Streamable HTTP server that sends requests (pings) on its event stream and never answers the
 * posts carrying our replies: the SDK opened one post per reply, with no limit and no timeout, and
 * the agent ran out of file descriptors within a second (its audit log could no longer be written).
 * Now only a bounded number wait at once; past it the connection fails with the reason on the
 * server's row, and every post it held is let go.
 */
import { type IncomingMessage, type ServerResponse, createServer } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_POST_LIMITS, boundedFetch } from '../../app/services/mcp/bounded-fetch.js';
import { MCP_LIMITS } from '../../app/services/mcp/limits.js';
import {
  type McpAgent,
  listenLoopback,
  openMcpAgent,
  serverState,
} from '../services/mcp/helpers.js';
import { waitFor } from './wire-peers.js';

const PINGS = 500;

interface Flooder {
  url: string;
  /** Posts held unanswered right now, and the most at once. */
  held(): number;
  mostHeld(): number;
  close(): Promise<void>;
}

async function flooder(): Promise<Flooder> {
  const open = new Set<ServerResponse>();
  let most = 0;
  const http = createServer((req: IncomingMessage, res: ServerResponse) => {
    if (req.method === 'GET') {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'mcp-session-id': 's1' });
      for (let n = 0; n < PINGS; n += 1)
        res.write(`data: ${JSON.stringify({ jsonrpc: '2.0', id: `p${n}`, method: 'ping' })}\n\n`);
      return;
    }
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const m = JSON.parse(body) as {
        id?: unknown;
        method?: string;
        params?: { protocolVersion?: string };
      };
      if (m.method === 'initialize') {
        res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 's1' });
        res.end(
          JSON.stringify({
            jsonrpc: '2.0',
            id: m.id,
            result: {
              protocolVersion: m.params?.protocolVersion,
              capabilities: { tools: {} },
              serverInfo: { name: 'flooder', version: '1' },
            },
          }),
        );
      } else if (m.method === 'tools/list') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ jsonrpc: '2.0', id: m.id, result: { tools: [] } }));
      } else if (m.method === undefined) {
        // Our answer to a ping: never answered.
        open.add(res);
        most = Math.max(most, open.size);
        res.on('close', () => open.delete(res));
      } else res.writeHead(202).end();
    });
  });
  const listening = await listenLoopback(http, '/mcp');
  return { ...listening, held: () => open.size, mostHeld: () => most };
}

let rig: McpAgent | undefined;
let server: Flooder | undefined;
afterEach(async () => {
  await rig?.close();
  await server?.close();
  rig = server = undefined;
});

describe('hostile MCP server at an address: requests whose answers it never takes', () => {
  it('leaves a bounded number of posts waiting, then fails the connection with the reason and lets them all go', async () => {
    server = await flooder();
    rig = await openMcpAgent();
    const { agent } = rig;
    const preview = await agent.mcp.previewImport({
      json: JSON.stringify({ mcpServers: { remote: { url: server.url, type: 'http' } } }),
    });
    await agent.mcp.confirmImport(preview.id, ['remote']);
    const view = await serverState(
      agent,
      'remote',
      (v) => v.state.status === 'failed' || v.state.status === 'restarting',
    );
    expect(view.state).toMatchObject({
      reason: `it does not answer what the agent sends it (${DEFAULT_POST_LIMITS.maxWaiting} messages were left waiting)`,
    });
    expect(server.mostHeld()).toBeLessThanOrEqual(DEFAULT_POST_LIMITS.maxWaiting);
    await waitFor(() => server!.held() === 0, 'every held post let go');
    // The agent still opens files: its own services work.
    expect(await agent.runService('get_current_time', {})).toMatchObject({ ok: true });
  });

  it('a post the server never answers fails after its time, and stops waiting', async () => {
    let closed = 0;
    const http = createServer((req, res) => {
      req.resume();
      res.on('close', () => (closed += 1));
    });
    const silent = await listenLoopback(http, '/mcp');
    try {
      const fetch = boundedFetch(globalThis.fetch, MCP_LIMITS.messageBytes, () => undefined, {
        maxWaiting: 4,
        timeoutMs: () => 200,
      });
      await expect(fetch(silent.url, { method: 'POST', body: '{}' })).rejects.toThrow(
        /did not answer within/,
      );
      await waitFor(() => closed === 1, 'the post closed');
    } finally {
      await silent.close();
    }
  });
});
