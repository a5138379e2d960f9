/**
 * Shared pieces of the MCP hub tests: the fixture server and the real `@modelcontextprotocol`
 * servers spawned as real children (by this Node and their bin file, never npx), and an agent in
 * a temp folder with fast restart timing.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import type { Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Agent, type AgentOptions } from '../../../app/agent.js';
import type { PendingPrompt, PromptAnswer } from '../../../app/contract/policy.js';
import type { McpServerInput, McpServerView } from '../../../app/contract/mcp.js';
import { MemorySecretStore } from '../../../app/settings/secrets.js';
import type { McpTiming } from '../../../app/services/mcp/server.js';
import { nextEvent } from '../../helpers/wait.js';

const here = path.dirname(fileURLToPath(import.meta.url));
export const FIXTURE = path.resolve(here, '../../fixtures/mcp-fixture-server.mjs');
const require = createRequire(import.meta.url);

/** The bin file of an installed MCP server package (read from its package.json). */
export function serverBin(pkg: string): string {
  const manifest = require.resolve(`${pkg}/package.json`);
  const { bin } = JSON.parse(require('node:fs').readFileSync(manifest, 'utf8')) as {
    bin: string | Record<string, string>;
  };
  const rel = typeof bin === 'string' ? bin : Object.values(bin)[0]!;
  return path.join(path.dirname(manifest), rel);
}

/** A Claude Desktop style entry that runs the fixture with `args`. */
export function fixtureEntry(args: string[] = [], env?: Record<string, string>) {
  return { command: process.execPath, args: [FIXTURE, ...args], ...(env ? { env } : {}) };
}

export const FAST_MCP: Partial<McpTiming> = {
  initializeTimeoutMs: 10_000,
  backoffInitialMs: 50,
  backoffMaxMs: 400,
  relistDelayMs: 10,
};

export interface McpAgent {
  agent: Agent;
  dir: string;
  dataDir: string;
  secrets: MemorySecretStore;
  close(): Promise<void>;
}

export async function openMcpAgent(opts: Partial<AgentOptions> = {}): Promise<McpAgent> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'advent-mcp-'));
  const dataDir = path.join(dir, 'data');
  const secrets = new MemorySecretStore();
  const agent = await Agent.open({
    dataDir,
    defaultFilesRoot: path.join(dir, 'files'),
    secrets,
    version: '9.9.9',
    ...opts,
    mcp: { timing: FAST_MCP, ...opts.mcp },
  });
  let closed = false;
  return {
    agent,
    dir,
    dataDir,
    secrets,
    async close() {
      if (!closed) await agent.close();
      closed = true;
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Import every server of a Claude-style config written to a file, as the UI does. */
export async function importConfig(
  agent: Agent,
  dir: string,
  mcpServers: Record<string, unknown>,
): Promise<McpServerView[]> {
  const file = path.join(dir, 'claude_desktop_config.json');
  await writeFile(file, JSON.stringify({ mcpServers }, null, 2));
  const preview = await agent.mcp.previewImport({ path: file });
  return agent.mcp.confirmImport(
    preview.id,
    preview.servers.map((s) => s.name),
  );
}

/** The server's view once it matches `pred` (now or later). */
export async function serverState(
  agent: Agent,
  name: string,
  pred: (v: McpServerView) => boolean,
  timeoutMs = 15_000,
): Promise<McpServerView> {
  const now = agent.mcp.list().find((v) => v.name === name);
  if (now && pred(now)) return now;
  return nextEvent(agent.mcp.events, 'server', (v) => v.name === name && pred(v), timeoutMs);
}

export const ready = (v: McpServerView) => v.state.status === 'ready';

export async function settingsText(dataDir: string): Promise<string> {
  return readFile(path.join(dataDir, 'settings.json'), 'utf8');
}

/** What the edit form would send back for a server, with some fields changed. */
export function inputOf(v: McpServerView, patch: Partial<McpServerInput> = {}): McpServerInput {
  return {
    id: v.id,
    name: v.name,
    transport: v.transport,
    ...(v.command !== undefined ? { command: v.command } : {}),
    args: v.args,
    ...(v.url !== undefined ? { url: v.url } : {}),
    env: v.env,
    secretEnv: v.secretEnv,
    headers: v.headers,
    secretHeaders: v.secretHeaders,
    trusted: v.trusted,
    timeoutSec: v.timeoutSec,
    ...patch,
  };
}

/** The voice server the calls below come from. */
export const VOICE_SERVER = { id: 'srv-1', name: 'Voice server' };
let calls = 0;

/** A call as a voice server makes it (not a user run): decided by the policy, asked if needed. */
export function serverCall(agent: Agent, service: string, params: Record<string, unknown>) {
  return agent.dispatch({
    connection: VOICE_SERVER,
    dialect: 'advent',
    callId: `c${++calls}`,
    service,
    params,
  });
}

/** Answer every prompt with `answer`, keeping what was asked. */
export function answerAll(agent: Agent, answer: PromptAnswer): PendingPrompt[] {
  const asked: PendingPrompt[] = [];
  agent.broker.attach({ name: 'test' });
  agent.events.on('prompt', (p) => {
    asked.push(p);
    agent.answerPrompt(p.id, answer);
  });
  return asked;
}

/** `server` listening on loopback: its address with `path`, and a close that ends every connection. */
export async function listenLoopback(
  server: HttpServer,
  path: string,
): Promise<{ url: string; close(): Promise<void> }> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${path}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
