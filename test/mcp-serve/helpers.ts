/**
 * An agent in a temp folder serving MCP clients in this process: SDK Clients over the SDK's
 * in-memory transport pair, through the same McpServe every host uses.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { ElicitRequestSchema, type ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import { Agent, type AgentOptions } from '../../app/agent.js';
import { McpServe, type McpServeOptions } from '../../app/mcp-serve/mcp-serve.js';
import { MemorySecretStore } from '../../app/settings/secrets.js';

export interface ServeRig {
  dir: string;
  agent: Agent;
  serve: McpServe;
  secrets: MemorySecretStore;
  connect(opts?: ClientOptions): Promise<Client>;
  close(): Promise<void>;
}

export interface ClientOptions {
  name?: string;
  title?: string;
  /** Declare elicitation and answer each question with this (the request is handed over too). */
  elicit?: (request: { message: string; requestedSchema: unknown }) => Promise<ElicitResult>;
}

export async function startServe(
  agentOptions: Partial<AgentOptions> = {},
  serveOptions: Partial<McpServeOptions> = {},
): Promise<ServeRig> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'advent-serve-'));
  const secrets = new MemorySecretStore();
  const agent = await Agent.open({
    dataDir: path.join(dir, 'data'),
    defaultFilesRoot: path.join(dir, 'files'),
    secrets,
    version: '4.5.6',
    ...agentOptions,
  });
  const serve = new McpServe({
    agent,
    secrets,
    dataDir: path.join(dir, 'data'),
    version: '4.5.6',
    log: () => undefined,
    ...serveOptions,
  });
  const clients: Client[] = [];
  return {
    dir,
    agent,
    serve,
    secrets,
    async connect(opts = {}) {
      const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
      serve.serve(serverSide);
      const client = new Client(
        { name: opts.name ?? 'test-client', title: opts.title, version: '1.0.0' },
        { capabilities: opts.elicit ? { elicitation: {} } : {} },
      );
      if (opts.elicit) {
        const answer = opts.elicit;
        client.setRequestHandler(ElicitRequestSchema, (req) =>
          answer(req.params as { message: string; requestedSchema: unknown }),
        );
      }
      await client.connect(clientSide);
      clients.push(client);
      return client;
    },
    async close() {
      for (const c of clients) await c.close().catch(() => undefined);
      await serve.close();
      await agent.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** The text of a tool result's first content block. */
export function textOf(result: unknown): string {
  const content = (result as { content?: { type: string; text?: string }[] }).content ?? [];
  return content.find((c) => c.type === 'text')?.text ?? '';
}

/** One JSON-RPC message as a line of an MCP stream. */
export const line = (message: unknown): string => `${JSON.stringify(message)}\n`;

/** A raw client's initialize request (request `id`, client `name`). */
export function initializeRequest(name: string, id: number) {
  return {
    jsonrpc: '2.0' as const,
    id,
    method: 'initialize',
    params: {
      protocolVersion: '2025-06-18',
      capabilities: {},
      clientInfo: { name, version: '1' },
    },
  };
}

/** What a raw client sends first: initialize (request `id`, client `name`), then initialized. */
export function helloLines(name: string, id = 1): string {
  return (
    line(initializeRequest(name, id)) +
    line({ jsonrpc: '2.0', method: 'notifications/initialized' })
  );
}
