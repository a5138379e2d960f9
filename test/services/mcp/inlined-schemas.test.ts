/**
 * An imported tool's `$ref`s are inlined once, bounded, and that one schema is both what the model
 * is shown and what the gate checks calls against. A few kilobytes of references that fan out
 * (`a_i = {allOf: [a_{i+1}, a_{i+1}]}`) used to make every check take 2^N steps (28 s of a frozen
 * agent for N = 32, an out-of-memory crash for an output schema of anyOf), because the gate
 * checked the original while only the model's copy was bounded.
 */
import { describe, expect, it } from 'vitest';
import { toolService } from '../../../app/services/mcp/adapter.js';
import {
  INLINED_SCHEMA_BYTES,
  type ListedTool,
  inlineRefs,
  readTools,
} from '../../../app/services/mcp/tools.js';
import { Registry } from '../../../app/services/registry.js';

/** `a_0 … a_n`, each `comb` of two references to the next: 2^n leaves once followed. */
function fanOut(n: number, comb: 'allOf' | 'anyOf' = 'allOf'): Record<string, unknown> {
  const defs: Record<string, unknown> = {};
  for (let i = 0; i < n; i += 1)
    defs[`a${i}`] = { [comb]: [{ $ref: `#/$defs/a${i + 1}` }, { $ref: `#/$defs/a${i + 1}` }] };
  defs[`a${n}`] = { type: 'string' };
  return { type: 'object', $defs: defs, properties: { q: { $ref: '#/$defs/a0' } } };
}

const PLAIN = { type: 'object', properties: { q: { type: 'string' } } };

/** The tool as the hub registers it: a service in a real registry (the gate's check). */
function gateOf(tool: ListedTool): { registry: Registry; parameters: unknown } {
  const service = toolService({
    name: 'srv_tool',
    server: { id: 's', name: 'srv', trusted: false },
    tool,
    timeoutMs: 1000,
    caller: { call: async () => ({ content: [{ type: 'text', text: 'ok' }] }) },
  });
  const registry = new Registry();
  registry.add(service);
  return { registry, parameters: service.parameters };
}

describe("an imported tool's $refs", () => {
  it('an input schema whose $refs fan out 2^32 ways is refused with the reason, not offered with parts replaced by {}', () => {
    const bomb = fanOut(32);
    expect(JSON.stringify(bomb).length).toBeLessThan(2500);
    const { tools, problems } = readTools([
      { name: 'bomb', inputSchema: bomb },
      { name: 'wide', inputSchema: fanOut(16) },
      { name: 'plain', inputSchema: PLAIN },
    ]);
    expect(tools.map((t) => t.name)).toEqual(['plain']);
    expect(problems).toEqual([
      {
        tool: 'bomb',
        problem: 'its input schema nests deeper than 64 levels once its $refs are expanded',
      },
      {
        tool: 'wide',
        problem: `its input schema grows past ${INLINED_SCHEMA_BYTES} bytes once its $refs are expanded`,
      },
    ]);
  });

  it('an output schema that fans out refuses its tool the same way', () => {
    const { tools, problems } = readTools([
      { name: 'lookup', inputSchema: PLAIN, outputSchema: fanOut(24, 'anyOf') },
    ]);
    expect(tools).toEqual([]);
    expect(problems[0]!.problem).toMatch(/^its output schema .* once its \$refs are expanded$/);
  });

  it('ordinary $refs: the gate checks calls against the inlined schema the model is shown, no $ref left', () => {
    const schema = {
      type: 'object',
      $defs: { point: { type: 'object', properties: { x: { type: 'number' } }, required: ['x'] } },
      properties: {
        from: { $ref: '#/$defs/point' },
        to: { $ref: '#/$defs/point', description: 'where to' },
        // Names of properties are not keywords, and values are data.
        $ref: { type: 'string' },
        mode: { enum: [{ $ref: '#/$defs/point' }, 'fast'] },
      },
      required: ['from'],
    };
    const { tools } = readTools([{ name: 'move', inputSchema: schema }]);
    const tool = tools[0]!;
    const point = { type: 'object', properties: { x: { type: 'number' } }, required: ['x'] };
    expect(tool.shownSchema).toEqual({
      type: 'object',
      properties: {
        from: point,
        to: { ...point, description: 'where to' },
        $ref: { type: 'string' },
        mode: { enum: [{ $ref: '#/$defs/point' }, 'fast'] },
      },
      required: ['from'],
    });
    const { registry, parameters } = gateOf(tool);
    expect(parameters).toEqual(tool.shownSchema);
    expect(registry.validate('srv_tool', { from: { x: 1 }, to: { x: 2 }, $ref: 'r' })).toEqual({
      ok: true,
    });
    expect(registry.validate('srv_tool', { from: { x: 'one' } }).ok).toBe(false);
    expect(registry.validate('srv_tool', { from: { x: 1 }, to: {} }).ok).toBe(false);
    expect(registry.validate('srv_tool', { from: { x: 1 }, mode: 'fast' }).ok).toBe(true);
    expect(registry.validate('srv_tool', { from: { x: 1 }, mode: 'slow' }).ok).toBe(false);
    expect(
      registry.validate('srv_tool', { from: { x: 1 }, mode: { $ref: '#/$defs/point' } }).ok,
    ).toBe(true);
  });

  it('a recursive schema is cut where a $ref comes back, for the model and the gate alike: deeper params are the server to check', () => {
    // A tree whose every level fans out in two: checking the original against params n levels
    // deep took 2^n steps.
    const tree = {
      type: 'object',
      properties: { n: { $ref: '#/$defs/t' } },
      $defs: {
        t: { allOf: [{ $ref: '#/$defs/u' }, { $ref: '#/$defs/u' }] },
        u: { type: 'object', properties: { n: { $ref: '#/$defs/t' }, size: { type: 'number' } } },
      },
    };
    const { tools } = readTools([{ name: 'tree', inputSchema: tree }]);
    const tool = tools[0]!;
    const level = { type: 'object', properties: { n: {}, size: { type: 'number' } } };
    expect(tool.shownSchema).toEqual({
      type: 'object',
      properties: { n: { allOf: [level, level] } },
    });
    const { registry, parameters } = gateOf(tool);
    expect(JSON.stringify(parameters)).not.toContain('$ref');
    // The first level is checked…
    expect(registry.validate('srv_tool', { n: { size: 'big' } }).ok).toBe(false);
    // …deeper ones are not (the gate still refuses params nested past 64 levels).
    let deep: Record<string, unknown> = { size: 'big' };
    for (let i = 0; i < 60; i += 1) deep = { n: deep };
    expect(registry.validate('srv_tool', deep)).toEqual({ ok: true });
    // A schema that refers to itself as a whole (`#`) is cut the same way.
    expect(
      inlineRefs({ type: 'object', properties: { child: { $ref: '#' }, id: { type: 'string' } } }),
    ).toEqual({ type: 'object', properties: { child: {}, id: { type: 'string' } } });
  });
});
