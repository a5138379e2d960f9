/**
 * The MCP servers people actually run, as real child processes: the official filesystem, memory
 * and everything servers (installed as dev dependencies, started by this Node and their bin file).
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Agent } from '../../../app/agent.js';
import {
  type McpAgent,
  importConfig,
  openMcpAgent,
  ready,
  serverBin,
  serverState,
} from './helpers.js';

let h: McpAgent | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

let n = 0;
function asServer(agent: Agent, service: string, params: Record<string, unknown>) {
  return agent.dispatch({
    connection: { id: 'srv', name: 'Server' },
    dialect: 'xiaozhi',
    callId: `r${++n}`,
    service,
    params,
  });
}

const node = (pkg: string, ...args: string[]) => ({
  command: process.execPath,
  args: [serverBin(pkg), ...args],
});

describe('real MCP servers', () => {
  it('filesystem: reads only after asking (trust aside) and writes after asking, inside its folder', async () => {
    h = await openMcpAgent();
    const { agent, dir } = h;
    const root = path.join(dir, 'files');
    await import('node:fs/promises').then((fs) => fs.mkdir(root, { recursive: true }));
    await writeFile(path.join(root, 'todo.txt'), 'buy milk\n');
    const [view] = await importConfig(agent, dir, {
      filesystem: node('@modelcontextprotocol/server-filesystem', root),
    });
    const ok = await serverState(agent, 'filesystem', ready);
    const services = ok.tools.map((t) => t.service);
    expect(services).toEqual(
      expect.arrayContaining(['filesystem_read_text_file', 'filesystem_write_file']),
    );
    const asked: string[] = [];
    agent.broker.attach({ name: 'test' });
    agent.events.on('prompt', (p) => {
      asked.push(p.service);
      agent.answerPrompt(p.id, 'once');
    });
    const read = await asServer(agent, 'filesystem_read_text_file', {
      path: path.join(root, 'todo.txt'),
    });
    expect(read).toMatchObject({ ok: true, data: 'buy milk\n' });
    const written = await asServer(agent, 'filesystem_write_file', {
      path: path.join(root, 'note.txt'),
      content: 'hello',
    });
    expect(written.ok).toBe(true);
    expect(await readFile(path.join(root, 'note.txt'), 'utf8')).toBe('hello');
    expect(asked).toEqual(['filesystem_read_text_file', 'filesystem_write_file']);

    // Trusted: the read-only tools (the server says so) run unasked; writing still asks.
    await agent.mcp.setTrusted(view!.id, true);
    await asServer(agent, 'filesystem_list_directory', { path: root });
    await asServer(agent, 'filesystem_write_file', {
      path: path.join(root, 'b.txt'),
      content: 'b',
    });
    expect(asked).toEqual([
      'filesystem_read_text_file',
      'filesystem_write_file',
      'filesystem_write_file',
    ]);
    // Its own sandbox still holds: outside its folder is its refusal, told to the model.
    const outside = await asServer(agent, 'filesystem_read_text_file', { path: '/etc/hostname' });
    expect(outside).toMatchObject({ ok: false, code: 'service_error' });
    expect(outside.ok === false && outside.message).toMatch(/outside allowed directories/i);
  });

  it('memory: its tools keep state across calls', async () => {
    h = await openMcpAgent();
    const { agent, dir } = h;
    await importConfig(agent, dir, {
      memory: {
        ...node('@modelcontextprotocol/server-memory'),
        env: { MEMORY_FILE_PATH: path.join(dir, 'memory.jsonl') },
      },
    });
    await serverState(agent, 'memory', ready);
    const add = await agent.runService('memory_create_entities', {
      entities: [{ name: 'Ada', entityType: 'person', observations: ['likes tea'] }],
    });
    expect(add.ok).toBe(true);
    const found = await agent.runService('memory_search_nodes', { query: 'tea' });
    expect(found.ok && String(found.data)).toContain('Ada');
  });

  it('everything: annotations become hints, structured output is kept, pictures are described, list_changed at start is followed', async () => {
    h = await openMcpAgent();
    const { agent, dir } = h;
    await importConfig(agent, dir, {
      everything: node('@modelcontextprotocol/server-everything'),
    });
    // It registers more tools once initialized and says so with list_changed; the one that
    // needs MCP tasks is listed with why it is not offered.
    const view = await serverState(
      agent,
      'everything',
      (v) => ready(v) && v.tools.some((t) => t.tool === 'simulate-research-query'),
    );
    expect(view.tools.find((t) => t.tool === 'simulate-research-query')).toMatchObject({
      problem: 'it runs only as an MCP task, which the agent does not support yet',
    });
    expect(view.tools.find((t) => t.tool === 'simulate-research-query')!.service).toBeUndefined();
    const sum = agent.services().find((s) => s.name === 'everything_get_sum')!;
    expect(sum).toMatchObject({
      title: 'Get Sum Tool',
      hint: { readOnly: true, destructive: false, idempotent: true, openWorld: false },
      policy: 'ask',
      server: { name: 'everything', tool: 'get-sum' },
    });
    expect((await agent.runService('everything_get_sum', { a: 2, b: 3 })).ok).toBe(true);

    const weather = agent.services().find((s) => s.name === 'everything_get_structured_content')!;
    expect(weather.outputSchema).toMatchObject({ type: 'object' });
    const structured = await agent.runService('everything_get_structured_content', {
      location: 'Chicago',
    });
    expect(structured.ok).toBe(true);
    expect(JSON.parse(String(structured.ok && structured.data))).toMatchObject({
      temperature: expect.any(Number),
    });

    const image = await agent.runService('everything_get_tiny_image', {});
    expect(image.ok && image.data).toMatch(/\[image \(image\/png, [\d.]+ (B|KB)\) not shown/);
  });
});
