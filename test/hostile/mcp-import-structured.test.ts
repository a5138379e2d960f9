/**
 * An imported tool (a real MCP server, a child process) answers with `structuredContent` nested
 * 100 000 levels deep (600 KB, under every other bound): the text of a result was bounded, its
 * structure was not, and relaying it to an MCP client of ours overflowed JSON.stringify's stack,
 * so the client never got an answer while the audit said ok. The structure is now dropped with a
 * note the model reads, and the text goes through.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { MCP_LIMITS } from '../../app/services/mcp/limits.js';
import { type ServeRig, startServe } from '../mcp-serve/helpers.js';
import { importConfig, ready, serverState } from '../services/mcp/helpers.js';

const SERVER = path.join(path.dirname(fileURLToPath(import.meta.url)), 'mcp-import-server.mjs');
const TOOLS = JSON.stringify([
  { name: 'get', description: 'gets', inputSchema: { type: 'object' } },
]);

let rig: ServeRig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

async function relay(env: Record<string, string>) {
  rig = await startServe();
  await importConfig(rig.agent, rig.dir, {
    h: { command: process.execPath, args: [SERVER], env: { TOOLS, ...env } },
  });
  await serverState(rig.agent, 'h', ready);
  await rig.agent.setServicePolicy('h_get', 'allow');
  const client = await rig.connect({ name: 'claude' });
  return client.callTool({ name: 'h_get', arguments: {} }, undefined, { timeout: 20_000 });
}

describe("hostile MCP server: an imported tool's structured result", () => {
  it('nested 100 000 levels deep is dropped with a note; the MCP client gets the text', async () => {
    const result = await relay({ DEEP: '100000' });
    expect(result.isError).not.toBe(true);
    expect(result.structuredContent).toBeUndefined();
    const text = (result.content as { type: string; text: string }[]).map((c) => c.text).join('');
    expect(text).toContain(
      `[the tool's structured result is not passed on: it nests deeper than ${MCP_LIMITS.resultDepth} levels]`,
    );
    expect(text).toContain('deep');
  });

  it('larger than a result may be is dropped with a note; one within the bounds is passed on', async () => {
    const result = await relay({ WIDE: String(MCP_LIMITS.resultTextChars) });
    expect(result.structuredContent).toBeUndefined();
    const text = (result.content as { text: string }[]).map((c) => c.text).join('');
    expect(text).toMatch(/^\[the tool's structured result is not passed on: it is 1\.0 MB of JSON/);

    await rig!.close();
    const fine = await relay({
      RESULT: JSON.stringify({
        content: [{ type: 'text', text: 'fine' }],
        structuredContent: { nested: { list: [1, 2, 3] } },
      }),
    });
    expect(fine.structuredContent).toEqual({ nested: { list: [1, 2, 3] } });
  });
});
