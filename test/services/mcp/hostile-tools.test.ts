/**
 * A real MCP server whose tool list is written to mislead (test/fixtures/mcp-hostile-tools-server.mjs),
 * imported into an agent that also serves MCP clients: a schema that inlines to 61 MB is refused on
 * the server's row instead of reaching every client's tools/list, and a title that imitates the
 * permission prompt reaches the question as one short plain line.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { wordsFor } from '../../../app/mcp-serve/words.js';
import { type ServeRig, startServe } from '../../mcp-serve/helpers.js';
import { importConfig, ready, serverState } from './helpers.js';

const HOSTILE = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '../../fixtures/mcp-hostile-tools-server.mjs',
);

let rig: ServeRig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

async function withHostileServer(): Promise<ServeRig> {
  rig = await startServe();
  await importConfig(rig.agent, rig.dir, {
    hostile: { command: process.execPath, args: [HOSTILE] },
  });
  await serverState(rig.agent, 'hostile', ready, 30_000);
  return rig;
}

/** Characters that reorder or hide text, and line breaks. */
const MISLEADING = /[\n\r\u200b-\u200f\u202a-\u202e\u2066-\u2069\u{e0000}-\u{e007f}]/u;

describe('what an imported server lists cannot overwhelm or mislead', () => {
  it("a tool whose $refs would inline to megabytes is refused on its server's row; an MCP client's tools/list stays small and offers the others", async () => {
    const r = await withHostileServer();
    const view = r.agent.mcp.list().find((v) => v.name === 'hostile')!;
    const expand = view.tools.find((t) => t.tool === 'expand');
    expect(expand?.service).toBeUndefined();
    expect(expand?.problem).toMatch(/grows past \d+ bytes once its \$refs are expanded/);
    expect(view.tools.find((t) => t.tool === 'echo')?.service).toBe('hostile_echo');

    const client = await r.connect({ name: 'claude' });
    const listed = await client.listTools();
    const names = listed.tools.map((t) => t.name);
    expect(names).toContain('hostile_echo');
    expect(names).not.toContain('hostile_expand');
    // Every client's list of every service, hostile server included, is well under a megabyte.
    expect(JSON.stringify(listed).length).toBeLessThan(1024 * 1024);
  });

  it('a title forging lines of the permission prompt reaches the question as one short plain line; the description keeps its lines for the model', async () => {
    const r = await withHostileServer();
    const asked: string[] = [];
    const client = await r.connect({
      name: 'claude',
      title: 'Claude',
      elicit: async (req) => {
        asked.push(req.message);
        return { action: 'decline' };
      },
    });
    const result = await client.callTool({ name: 'hostile_wipe', arguments: {} });
    expect(result.isError).toBe(true);
    expect(asked).toHaveLength(1);
    const lines = asked[0]!.split('\n');
    // Who asks, what runs, which server, how long: no forged or blank lines in between.
    expect(lines).toHaveLength(4);
    expect(lines.every((line) => line.trim() !== '')).toBe(true);
    expect(asked[0]).not.toMatch(/[\u200b-\u200f\u202a-\u202e\u2066-\u2069]/);
    expect(lines[0]).toMatch(/^“Claude” wants Advent Agent to run Read file .*\(hostile_wipe\)\.$/);
    expect(lines[2]).toBe(wordsFor('en').server('hostile'));

    const wipe = r.agent.services().find((s) => s.name === 'hostile_wipe')!;
    expect(wipe.title).not.toMatch(MISLEADING);
    expect(wipe.title.length).toBeLessThanOrEqual(80);
    expect(wipe.title.startsWith('Read file “Claude” wants Advent Agent to run')).toBe(true);

    const listed = (await client.listTools()).tools.find((t) => t.name === 'hostile_wipe')!;
    expect(listed.description).toBe('Deletes every file.\nReally hidden\tword.');
  });
});
