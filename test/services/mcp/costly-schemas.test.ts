/**
 * An imported tool's schema chooses how much work checking a call costs: a regular expression
 * that backtracks (`^(a+)+$` on 31 characters took 50 s, with the event loop stopped) or
 * `uniqueItems` over objects (every pair compared). The gate checks calls against it before the
 * user is even asked, so those keywords are left out of the check; the model still sees them.
 */
import { describe, expect, it } from 'vitest';
import { Registry } from '../../../app/services/registry.js';
import type { ParamSchema, Service } from '../../../app/services/service.js';
import {
  SERVER_SCHEMA_BYTES,
  inlineRefs,
  readTools,
  validationSchema,
} from '../../../app/services/mcp/tools.js';

const EVIL = '^(a+)+$';

function gateFor(schema: Record<string, unknown>): Registry {
  const registry = new Registry();
  const service: Service = {
    name: 'imported_tool',
    title: 'Imported tool',
    description: 'an imported tool',
    parameters: validationSchema(schema) as ParamSchema,
    risk: 'write',
    timeoutMs: 1000,
    run: async () => 'ok',
  };
  registry.add(service);
  return registry;
}

describe("an imported schema's costly keywords", () => {
  it('a backtracking pattern is not run on the call (it would never finish on this text)', () => {
    const registry = gateFor({
      type: 'object',
      properties: {
        q: { type: 'string', pattern: EVIL },
        nested: { type: 'object', propertyNames: { pattern: EVIL } },
        // A property named like a keyword is a property, and stays one.
        pattern: { type: 'number' },
      },
      patternProperties: { [EVIL]: { type: 'string' } },
      additionalProperties: false,
      required: ['q'],
    });
    const text = `${'a'.repeat(40)}!`;
    expect(
      registry.validate('imported_tool', { q: text, nested: { [text]: 1 }, [text]: 'x' }),
    ).toEqual({ ok: true });
    // Everything else still holds: types, required, the property named "pattern".
    expect(registry.validate('imported_tool', { q: 1 }).ok).toBe(false);
    expect(registry.validate('imported_tool', {}).ok).toBe(false);
    expect(registry.validate('imported_tool', { q: 'a', pattern: 'not a number' }).ok).toBe(false);
  });

  it('uniqueItems over objects is not checked pair by pair', () => {
    const registry = gateFor({
      type: 'object',
      properties: { list: { type: 'array', uniqueItems: true, items: { type: 'object' } } },
    });
    const list = Array.from({ length: 30_000 }, (_, i) => ({ i }));
    expect(registry.validate('imported_tool', { list })).toEqual({ ok: true });
  });

  it('enum and const values that look like keywords are data, kept as they are', () => {
    const schema = validationSchema({
      type: 'object',
      properties: { mode: { enum: [{ pattern: 'x' }] }, fixed: { const: { uniqueItems: true } } },
    });
    expect(schema).toEqual({
      type: 'object',
      properties: { mode: { enum: [{ pattern: 'x' }] }, fixed: { const: { uniqueItems: true } } },
    });
  });
});

describe("what a server's schemas may cost to read in", () => {
  it('a $ref far longer than any real one is followed nowhere, however often it is reached: the tool is refused', () => {
    const longRef = `#/${'x/'.repeat(27_000)}`;
    const fanOut = (inner: unknown) => ({ allOf: Array.from({ length: 12 }, () => inner) });
    const schema = {
      type: 'object',
      $defs: { L: { $ref: longRef } },
      properties: { a: fanOut(fanOut(fanOut({ $ref: '#/$defs/L' }))) },
    };
    const problem = inlineRefs(schema);
    expect(problem).toMatch(/^its input schema has a \$ref the agent cannot follow: #\/x\/x/);
    expect((problem as string).length).toBeLessThan(200);
  });

  it("tools past the server's total schema budget are left out, each named", () => {
    const bigSchema = (i: number) => ({
      type: 'object',
      properties: Object.fromEntries(
        Array.from({ length: 600 }, (_, k) => [
          `p${i}_${k}`,
          { type: 'string', description: 'x'.repeat(40) },
        ]),
      ),
    });
    const raw = Array.from({ length: 64 }, (_, i) => ({
      name: `t${i}`,
      inputSchema: bigSchema(i),
    }));
    const { tools, problems } = readTools(raw);
    const size = JSON.stringify(bigSchema(0)).length + 4; // and no output schema: null
    expect(tools.length).toBe(Math.floor(SERVER_SCHEMA_BYTES / size));
    expect(problems).toHaveLength(64 - tools.length);
    expect(problems[0]!.problem).toMatch(/schemas pass \d+ bytes in all with this tool/);
  });
});
