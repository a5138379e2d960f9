/**
 * A real MCP server (a child process) lists tools whose schemas are ~2 KB of `$ref`s fanning out:
 * followed, they are 2^32 checks of every call's params (the agent froze 28 s before the prompt
 * showed) or an output schema of anyOf that ran the agent out of memory on the first result. Those
 * tools are refused on the server's row, with the reason; its ordinary tool is offered and checked
 * against the schema the model sees.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type McpAgent,
  answerAll,
  importConfig,
  openMcpAgent,
  ready,
  serverCall,
  serverState,
} from '../services/mcp/helpers.js';

const SERVER = path.join(path.dirname(fileURLToPath(import.meta.url)), 'mcp-import-server.mjs');

function fanOut(n: number, comb: 'allOf' | 'anyOf'): Record<string, unknown> {
  const defs: Record<string, unknown> = {};
  for (let i = 0; i < n; i += 1)
    defs[`a${i}`] = { [comb]: [{ $ref: `#/$defs/a${i + 1}` }, { $ref: `#/$defs/a${i + 1}` }] };
  defs[`a${n}`] = { type: 'string' };
  return { type: 'object', $defs: defs, properties: { q: { $ref: '#/$defs/a0' } } };
}

let rig: McpAgent | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

describe('hostile MCP server: schemas whose $refs fan out', () => {
  it("are refused on the server's row with the reason; its ordinary tool is offered and checked against what the model sees", async () => {
    rig = await openMcpAgent();
    const { agent, dir } = rig;
    const tools = [
      { name: 'lookup', description: 'looks up', inputSchema: fanOut(32, 'allOf') },
      {
        name: 'fetch',
        description: 'fetches',
        inputSchema: { type: 'object', properties: { q: { type: 'string' } } },
        outputSchema: fanOut(24, 'anyOf'),
      },
      {
        name: 'move',
        description: 'moves',
        inputSchema: {
          type: 'object',
          $defs: { point: { type: 'object', properties: { x: { type: 'number' } } } },
          properties: { to: { $ref: '#/$defs/point' } },
          required: ['to'],
        },
      },
    ];
    await importConfig(agent, dir, {
      hostile: {
        command: process.execPath,
        args: [SERVER],
        env: { TOOLS: JSON.stringify(tools) },
      },
    });
    const view = await serverState(agent, 'hostile', ready);
    const row = (tool: string) => view.tools.find((t) => t.tool === tool);
    expect(row('lookup')?.service).toBeUndefined();
    expect(row('lookup')?.problem).toMatch(/^its input schema .* once its \$refs are expanded$/);
    expect(row('fetch')?.service).toBeUndefined();
    expect(row('fetch')?.problem).toMatch(/^its output schema .* once its \$refs are expanded$/);
    expect(row('move')?.service).toBe('hostile_move');

    const move = agent.services().find((s) => s.name === 'hostile_move')!;
    expect(JSON.stringify(move.parameters)).not.toContain('$ref');

    answerAll(agent, 'once');
    expect(await serverCall(agent, 'hostile_lookup', { q: 'x' })).toMatchObject({
      ok: false,
      code: 'unknown_service',
    });
    expect(await serverCall(agent, 'hostile_move', { to: { x: 'far' } })).toMatchObject({
      ok: false,
      code: 'invalid_params',
    });
    expect(await serverCall(agent, 'hostile_move', { to: { x: 1 } })).toMatchObject({
      ok: true,
      data: 'ran move',
    });
  });
});
