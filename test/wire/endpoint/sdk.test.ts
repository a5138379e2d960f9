/**
 * Conformance: the endpoint session driven by a peer nobody here wrote — the official MCP
 * TypeScript SDK's `Client`. The SDK's own WebSocket transport (`client/websocket.js`) dials out,
 * but here the agent dials and the MCP client sits on the *accepting* side of the socket, so the
 * SDK offers no transport for this direction: a ten-line adapter around the accepted `ws` socket
 * implements the SDK's `Transport` interface, and everything above it (handshake, version
 * negotiation, schema validation of our replies) is the SDK's.
 */
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  type JSONRPCMessage,
  JSONRPCMessageSchema,
  McpError,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type WebSocket, WebSocketServer } from 'ws';
import type { Agent } from '../../../app/agent.js';
import { EndpointSession } from '../../../app/wire/endpoint/session.js';
import { until } from '../../helpers/wait.js';
import { type TempAgent, openTempAgent } from '../../helpers/ws-agent.js';
import { BUILTIN_NAMES, builtinsWithout } from '../../helpers/builtins.js';

/** The SDK `Transport` over a socket the server side accepted. */
class AcceptedSocketTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  constructor(private readonly ws: WebSocket) {}

  async start(): Promise<void> {
    this.ws.on('message', (data) => {
      let message: JSONRPCMessage;
      try {
        message = JSONRPCMessageSchema.parse(JSON.parse(String(data)));
      } catch (err) {
        this.onerror?.(err as Error);
        return;
      }
      this.onmessage?.(message);
    });
    this.ws.on('close', () => this.onclose?.());
    this.ws.on('error', (err) => this.onerror?.(err));
  }

  async send(message: JSONRPCMessage): Promise<void> {
    this.ws.send(JSON.stringify(message));
  }

  async close(): Promise<void> {
    this.ws.close();
  }
}

let temp: TempAgent;
let agent: Agent;
let wss: WebSocketServer;
let session: EndpointSession;
let client: Client;
let transportErrors: Error[];

beforeEach(async () => {
  temp = await openTempAgent('advent-endpoint-sdk-');
  agent = temp.agent;
  wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise<void>((r) => wss.once('listening', () => r()));
  const accepted = new Promise<WebSocket>((r) => wss.once('connection', (ws) => r(ws)));
  session = new EndpointSession({
    id: 'p-sdk',
    name: 'SDK peer',
    url: () => `ws://127.0.0.1:${(wss.address() as AddressInfo).port}/mcp/?token=sdk-token`,
    gate: agent.gate,
    tools: () => agent.toolEntries(),
    serverInfo: { name: 'advent-agent', version: '1.2.3' },
    timing: { pingIntervalMs: 0 },
  });
  agent.registry.events.on('changed', () => session.reregister());
  session.start();
  transportErrors = [];
  const transport = new AcceptedSocketTransport(await accepted);
  client = new Client({ name: 'sdk-conformance', version: '1.0.0' });
  client.onerror = (err) => transportErrors.push(err);
  await client.connect(transport);
});

afterEach(async () => {
  await client.close();
  await session.stop();
  await new Promise<void>((r) => wss.close(() => r()));
  await temp.close();
});

/** Every page of tools/list, as a client that follows nextCursor sees them. */
async function listAll() {
  const tools = [];
  let cursor: string | undefined;
  do {
    const page = await client.listTools(cursor === undefined ? {} : { cursor });
    tools.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return tools;
}

describe('endpoint session as seen by the official MCP SDK client', () => {
  it('completes the initialize handshake and announces tools with listChanged', () => {
    expect(client.getServerCapabilities()).toMatchObject({ tools: { listChanged: true } });
    expect(client.getServerVersion()).toEqual({ name: 'advent-agent', version: '1.2.3' });
  });

  it('lists our tools with their schemas, and the session shows them as registered', async () => {
    const tools = await listAll();
    expect(tools.map((t) => t.name)).toEqual(BUILTIN_NAMES);
    const expected = agent.toolEntries();
    for (const tool of tools) {
      const entry = expected.find((e) => e.name === tool.name)!;
      expect(tool.inputSchema).toEqual(entry.inputSchema);
      expect(tool.description).toBe(entry.description);
    }
    await until(() => session.registrationState.state === 'registered', 'registered');
    expect(session.registrationState).toMatchObject({ services: BUILTIN_NAMES });
  });

  it('runs an allowed call and returns its text content', async () => {
    const result = await client.callTool({
      name: 'get_current_time',
      arguments: { format: 'detailed' },
    });
    expect(result.isError).toBe(false);
    const content = result.content as { type: string; text: string }[];
    expect(content[0]!.type).toBe('text');
    expect(JSON.parse(content[0]!.text)).toHaveProperty('timezone');
    expect((await agent.queryAudit({ service: 'get_current_time' })).records[0]).toMatchObject({
      dialect: 'endpoint',
      connection: 'SDK peer',
      outcome: 'ok',
    });
  });

  it('returns a denied call as isError with the refusal text', async () => {
    agent.broker.attach({ name: 'test' });
    agent.events.on('prompt', (p) => agent.answerPrompt(p.id, 'deny'));
    const result = await client.callTool({
      name: 'create_file',
      arguments: { filename: 'x.txt', content: 'x' },
    });
    expect(result.isError).toBe(true);
    const content = result.content as { type: string; text: string }[];
    expect(content[0]!.text).toMatch(/the user declined to let 'create_file' run/);
  });

  it('rejects invalid arguments with McpError -32602', async () => {
    const err = await client
      .callTool({ name: 'create_file', arguments: { filename: 5 } })
      .then(() => undefined)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(McpError);
    expect((err as McpError).code).toBe(-32602);
    expect((err as McpError).message).toMatch(/invalid call to 'create_file'/);
  });

  it('answers ping', async () => {
    expect(await client.ping()).toEqual({});
  });

  it('notifies tools/list_changed in a shape the SDK accepts when a service is switched off', async () => {
    let changed = 0;
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      changed += 1;
    });
    await listAll();
    await agent.setServiceEnabled('create_file', false);
    await until(() => changed === 1, 'the list_changed notification');
    const tools = await listAll();
    expect(tools.map((t) => t.name)).toEqual(builtinsWithout('create_file'));
    await until(() => session.registrationState.state === 'registered', 'registered again');
    expect(transportErrors).toEqual([]);
  });
});
