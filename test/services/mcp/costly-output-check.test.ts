/**
 * An imported server chooses both a tool's output schema and its results, and the check of one
 * against the other runs on the event loop, where no timeout stops it: a 4.5 KB schema whose
 * `$ref`s fan out to 60 × 151 `anyOf` branches per item took 2 s to compile and 16 s to check a
 * 9 KB result, while every voice session, the audit and the UI waited. Such a schema is left out at
 * listing (results as text, the server's log says why), an input schema like it refuses the tool,
 * and a result too large to check against an allowed schema goes on as text only.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { toolService } from '../../../app/services/mcp/adapter.js';
import { MCP_LIMITS } from '../../../app/services/mcp/limits.js';
import { type ListedTool, readTools } from '../../../app/services/mcp/tools.js';
import type { ServiceContext } from '../../../app/services/service.js';
import { type McpAgent, importConfig, openMcpAgent, ready, serverState } from './helpers.js';

/** The reviewer's schema: `groups` references to `branches` failing `required` + one passing. */
function costlySchema(branches: number, groups: number) {
  const g = {
    anyOf: [
      ...Array.from({ length: branches }, (_, i) => ({ required: [`k${i.toString(36)}`] })),
      { type: 'object' },
    ],
  };
  return {
    type: 'object',
    $defs: { g },
    properties: {
      a: {
        type: 'array',
        items: { allOf: Array.from({ length: groups }, () => ({ $ref: '#/$defs/g' })) },
      },
    },
  };
}
const items = (n: number) => ({ a: Array.from({ length: n }, () => ({})) });

function serviceOf(tool: ListedTool, structured: unknown, text = 'sunny') {
  return toolService({
    name: 'srv_get',
    server: { id: 's', name: 'srv', trusted: false },
    tool,
    timeoutMs: 1000,
    caller: {
      call: async () => ({ content: [{ type: 'text', text }], structuredContent: structured }),
    },
  });
}

/** An MCP client of ours: the one dialect that is given a structured result. */
const asMcpClient = () =>
  ({ signal: new AbortController().signal, dialect: 'mcp' }) as unknown as ServiceContext;

async function timed<T>(run: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const start = performance.now();
  const value = await run();
  return { value, ms: performance.now() - start };
}

describe('an output schema too costly to check', () => {
  it('is left out at listing, with a note; a large result then comes back at once, as text', async () => {
    const schema = costlySchema(150, 60);
    expect(JSON.stringify(schema).length).toBeLessThan(MCP_LIMITS.schemaBytes);
    const { value, ms } = await timed(async () => {
      const listed = readTools([
        { name: 'get', inputSchema: { type: 'object' }, outputSchema: schema },
      ]);
      // 300 items: the old code took ~2 s to compile and ~2 s to check (3000: 16 s).
      const result = await serviceOf(listed.tools[0]!, items(300)).run({}, asMcpClient());
      return { listed, result };
    });
    expect(ms).toBeLessThan(2000);
    expect(value.result).toBe('sunny'); // text, not the unchecked structure
    const [tool] = value.listed.tools;
    expect(tool!.outputSchema).toBeUndefined();
    expect(tool!.outputUnchecked).toBe(true);
    expect(value.listed.problems).toEqual([]);
    expect(value.listed.notes).toEqual([
      {
        tool: 'get',
        problem: `its output schema has more than ${MCP_LIMITS.schemaCheckNodes} parts to check once its $refs are expanded; it is left out and the tool's results are passed on as text only`,
      },
    ]);
    // What MCP clients are told: no output schema, so no structure is promised.
    expect(serviceOf(tool!, {}).outputSchema).toBeUndefined();
  }, 10_000);

  it('as an input schema refuses its tool, as one too large does: the gate checks every call with it', () => {
    const { tools, problems } = readTools([
      { name: 'find', inputSchema: costlySchema(150, 60) },
      { name: 'plain', inputSchema: { type: 'object', properties: { q: { type: 'string' } } } },
    ]);
    expect(tools.map((t) => t.name)).toEqual(['plain']);
    expect(problems).toEqual([
      {
        tool: 'find',
        problem: `its input schema has more than ${MCP_LIMITS.schemaCheckNodes} parts to check once its $refs are expanded`,
      },
    ]);
  });
});

describe('a result too large to check against the schema it has', () => {
  it('goes on as text only, at once: values × schema parts past the budget are not checked', async () => {
    // 10 groups: within the schema budget, but every item still costs 10 × 151 branches.
    const { tools } = readTools([
      { name: 'get', inputSchema: { type: 'object' }, outputSchema: costlySchema(150, 10) },
    ]);
    expect(tools[0]!.outputSchema).toBeDefined();
    // The old code checked it: ~3 s of blocked event loop, and the structure was passed on.
    const { value, ms } = await timed(() =>
      serviceOf(tools[0]!, items(10_000)).run({}, asMcpClient()),
    );
    expect(ms).toBeLessThan(2000);
    expect(value).toBe('sunny');
    // A small result against the same schema is still checked and passed on as a structure.
    expect(await serviceOf(tools[0]!, items(2)).run({}, asMcpClient())).toMatchObject({
      kind: 'structured-result',
      structured: items(2),
    });
  }, 10_000);
});

describe('an ordinary output schema', () => {
  const schema = {
    type: 'object',
    properties: {
      results: {
        type: 'array',
        items: {
          type: 'object',
          properties: { title: { type: 'string' }, url: { type: 'string' } },
          required: ['title', 'url'],
        },
      },
    },
    required: ['results'],
  };
  const listed = () =>
    readTools([{ name: 'search', inputSchema: { type: 'object' }, outputSchema: schema }]);

  it('is kept, and results are still checked: a match goes on as a structure', async () => {
    const { tools, notes } = listed();
    expect(notes).toEqual([]);
    expect(tools[0]!.outputSchema).toEqual(schema);
    const hits = { results: Array.from({ length: 100 }, (_, i) => ({ title: `t${i}`, url: 'u' })) };
    expect(await serviceOf(tools[0]!, hits).run({}, asMcpClient())).toMatchObject({
      kind: 'structured-result',
      structured: hits,
    });
  });

  it('still refuses a result that does not match it', async () => {
    const { tools } = listed();
    await expect(
      serviceOf(tools[0]!, { results: [{ title: 1 }] }).run({}, asMcpClient()),
    ).rejects.toThrow(/does not match its own output schema/);
  });
});

describe('a real server with a costly output schema', () => {
  let h: McpAgent | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });
  const server = path.resolve(
    path.dirname(fileURLToPath(import.meta.url)),
    '../../fixtures/mcp-costly-output-server.mjs',
  );

  it('is offered without it, its log says why once, and a 3000-item result comes back as text at once; its plain tool is still checked', async () => {
    h = await openMcpAgent();
    const { agent, dir } = h;
    await importConfig(agent, dir, {
      costly: {
        command: process.execPath,
        args: [server],
        env: { ITEMS: '3000', OUTPUT_SCHEMA: JSON.stringify(costlySchema(150, 60)) },
      },
    });
    const view = await serverState(agent, 'costly', ready);
    expect(view.tools.map((t) => t.service ?? t.problem)).toEqual(['costly_get', 'costly_weather']);
    const services = agent.services();
    expect(services.find((s) => s.name === 'costly_get')!.outputSchema).toBeUndefined();
    expect(services.find((s) => s.name === 'costly_weather')!.outputSchema).toBeDefined();
    const why = agent.mcp
      .log(view.id)
      .filter((l) => l.stream === 'agent' && l.text.startsWith('get: its output schema'));
    expect(why.map((l) => l.text)).toEqual([
      `get: its output schema has more than ${MCP_LIMITS.schemaCheckNodes} parts to check once its $refs are expanded; it is left out and the tool's results are passed on as text only`,
    ]);

    const { value, ms } = await timed(() => agent.runService('costly_get', {}));
    expect(ms).toBeLessThan(2000); // the old code: ~18 s with the event loop stopped
    expect(value).toMatchObject({ ok: true });
    expect(JSON.stringify(value)).toContain('sunny');

    expect(await agent.runService('costly_weather', {})).toMatchObject({ ok: true });
    const wrong = await agent.runService('costly_weather', { wrong: true });
    expect(JSON.stringify(wrong)).toMatch(/does not match its own output schema/);
  }, 20_000);
});
