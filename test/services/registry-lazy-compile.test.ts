/**
 * An imported server may re-list its tools every few seconds, each time with new descriptions, and
 * its schemas may inline to megabytes: compiling them took seconds with the event loop stopped, at
 * every listing. Validators are now kept by what validates (annotations left out of the key), and
 * an imported tool's validator is compiled on its first call.
 */
import { Ajv } from 'ajv';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Registry } from '../../app/services/registry.js';
import type { ParamSchema, Service } from '../../app/services/service.js';

function service(name: string, parameters: object, imported = false): Service {
  return {
    name,
    title: name,
    description: `the ${name} service`,
    parameters: parameters as ParamSchema,
    risk: 'read',
    timeoutMs: 1000,
    run: async () => 'ok',
    ...(imported ? { server: { id: 'srv', name: 'srv', tool: name } } : {}),
  };
}

/** Every annotation keyword, worded for one listing. */
const notes = (listing: number) => ({
  title: `title ${listing}`,
  description: `listing ${listing}`,
  examples: [{ listing }],
  $comment: `comment ${listing}`,
  default: listing,
  deprecated: listing % 2 === 0,
  readOnly: listing % 2 === 0,
  writeOnly: listing % 2 === 1,
});

/**
 * The reviewer's schema as the registry gets it (inlined; 60 groups: ~190 KB, a second or more to
 * compile). Annotations at every level change with each listing; `max` is a real constraint.
 */
function bigSchema(listing: number, max = 5, groups = 3): Record<string, unknown> {
  const group = () => ({
    ...notes(listing),
    anyOf: [
      ...Array.from({ length: 150 }, (_, i) => ({ required: [`k${i.toString(36)}`] })),
      { type: 'object', ...notes(listing) },
    ],
  });
  return {
    type: 'object',
    ...notes(listing),
    properties: {
      // A property named like an annotation is a property: it must still be checked.
      description: { type: 'string', maxLength: max, ...notes(listing) },
      a: {
        type: 'array',
        ...notes(listing),
        items: { allOf: Array.from({ length: groups }, group) },
      },
    },
  };
}

/** One listing of a server: its tools removed and added again, as the MCP hub does. */
function relist(registry: Registry, services: Service[]): void {
  registry.batch(() => {
    for (const s of services) {
      registry.remove(s.name);
      registry.add(s);
    }
  });
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('re-listing tools whose schemas changed only in annotations', () => {
  it('does not compile again, and the schema still checks params', () => {
    const registry = new Registry();
    const compile = vi.spyOn(Ajv.prototype, 'compile');
    for (let listing = 1; listing <= 4; listing += 1)
      relist(registry, [service('big', bigSchema(listing))]);
    expect(compile).toHaveBeenCalledTimes(1);
    expect(registry.validate('big', { description: 'short', a: [{ k0: 1 }] })).toEqual({
      ok: true,
    });
    expect(registry.validate('big', { description: 'far too long' })).toEqual({
      ok: false,
      message: "parameter 'description' must have at most 5 characters",
    });
  });

  it("stays fast for the reviewer's server: 11 tools of ~190 KB re-listed 8 times", () => {
    const registry = new Registry();
    const listings = Array.from({ length: 8 }, (_, listing) =>
      Array.from({ length: 11 }, (_, i) => service(`t${i}`, bigSchema(listing, 5, 60), true)),
    );
    const started = performance.now();
    for (const listing of listings) relist(registry, listing);
    // Compiling one listing's schema alone took over a second (the old registry did it at every
    // listing); checking and keying them all, eight times, takes a fraction of that.
    expect(performance.now() - started).toBeLessThan(5000);
    expect(registry.list()).toHaveLength(11);
  }, 60_000);

  it('compiles again when a real constraint changed, and applies it', () => {
    const registry = new Registry();
    const compile = vi.spyOn(Ajv.prototype, 'compile');
    relist(registry, [service('big', bigSchema(1, 5))]);
    relist(registry, [service('big', bigSchema(2, 12))]);
    expect(compile).toHaveBeenCalledTimes(2);
    expect(registry.validate('big', { description: 'far too long' })).toEqual({ ok: true });
    expect(registry.validate('big', { description: 'far, far too long' }).ok).toBe(false);
  });
});

describe('only annotations where they are keywords are left out of the key', () => {
  const both = (first: object, second: object) => {
    const registry = new Registry();
    registry.add(service('one', { type: 'object', ...first }));
    registry.add(service('two', { type: 'object', ...second }));
    return registry;
  };

  it('a property named "description" or "title" is a property', () => {
    const registry = both(
      { properties: { description: { type: 'string' }, title: { type: 'string' } } },
      { properties: { description: { type: 'number' }, title: { type: 'number' } } },
    );
    expect(registry.validate('one', { description: 'x', title: 'y' })).toEqual({ ok: true });
    expect(registry.validate('one', { description: 1 }).ok).toBe(false);
    expect(registry.validate('two', { description: 1, title: 2 })).toEqual({ ok: true });
    expect(registry.validate('two', { description: 'x' }).ok).toBe(false);
  });

  it('names under patternProperties and definitions are kept', () => {
    const patterns = both(
      { patternProperties: { description: { type: 'string' }, title: { type: 'string' } } },
      { patternProperties: { description: { type: 'number' }, title: { type: 'number' } } },
    );
    expect(patterns.validate('one', { description: 'x', title: 'y' })).toEqual({ ok: true });
    expect(patterns.validate('two', { description: 'x' }).ok).toBe(false);
    const definitions = both(
      {
        properties: { n: { $ref: '#/definitions/description' } },
        definitions: { description: { type: 'string' }, default: { type: 'number' } },
      },
      {
        properties: { n: { $ref: '#/definitions/description' } },
        definitions: { description: { type: 'number' }, default: { type: 'string' } },
      },
    );
    expect(definitions.validate('one', { n: 'x' })).toEqual({ ok: true });
    expect(definitions.validate('two', { n: 'x' }).ok).toBe(false);
    const deps = both(
      { dependencies: { description: ['title'] } },
      { dependencies: { description: ['other'] } },
    );
    expect(deps.validate('one', { description: 1, other: 1 }).ok).toBe(false);
    expect(deps.validate('two', { description: 1, other: 1 })).toEqual({ ok: true });
  });

  it('values under data keywords (const, enum, required) are kept whole', () => {
    const registry = both(
      { properties: { o: { const: { description: 'a' } } }, required: ['description'] },
      { properties: { o: { const: { description: 'b' } } }, required: ['title'] },
    );
    expect(registry.validate('one', { description: 1, o: { description: 'a' } })).toEqual({
      ok: true,
    });
    expect(registry.validate('two', { title: 1, o: { description: 'a' } }).ok).toBe(false);
    expect(registry.validate('two', { description: 1, o: { description: 'b' } }).ok).toBe(false);
    const enums = both(
      { properties: { o: { enum: [{ title: 'a' }] } } },
      { properties: { o: { enum: [{ title: 'b' }] } } },
    );
    expect(enums.validate('two', { o: { title: 'a' } }).ok).toBe(false);
  });

  it('a schema whose $ref could point at an annotation is keyed whole', () => {
    const registry = both(
      { default: { type: 'string' }, properties: { n: { $ref: '#/default' } } },
      { default: { type: 'number' }, properties: { n: { $ref: '#/default' } } },
    );
    expect(registry.validate('one', { n: 'x' })).toEqual({ ok: true });
    expect(registry.validate('two', { n: 'x' }).ok).toBe(false);
    expect(registry.validate('two', { n: 1 })).toEqual({ ok: true });
  });

  it('a new annotation that is not valid JSON Schema is still refused', () => {
    const registry = new Registry();
    registry.add(service('one', { type: 'object', description: 'fine' }));
    expect(() => registry.add(service('two', { type: 'object', description: 5 }))).toThrow(
      /not a valid JSON Schema/,
    );
  });
});

describe("an imported tool's validator is compiled on its first call", () => {
  it('adding does not compile; the first check does, once', () => {
    const registry = new Registry();
    const compile = vi.spyOn(Ajv.prototype, 'compile');
    registry.add(service('tool', { type: 'object', properties: { n: { type: 'integer' } } }, true));
    expect(compile).not.toHaveBeenCalled();
    expect(registry.validate('tool', { n: 1 })).toEqual({ ok: true });
    expect(registry.validate('tool', { n: 'one' })).toEqual({
      ok: false,
      message: "parameter 'n' must be an integer",
    });
    expect(compile).toHaveBeenCalledTimes(1);
  });

  it('a schema that is valid JSON Schema but does not compile fails its calls with the reason, compiled once', () => {
    const registry = new Registry();
    // Valid against the meta-schema; the validator refuses `nullable` without a `type`.
    const odd = { type: 'object', properties: { a: { nullable: true } } };
    registry.add(service('odd', odd, true));
    const compile = vi.spyOn(Ajv.prototype, 'compile');
    for (let call = 0; call < 3; call += 1) {
      const check = registry.validate('odd', { a: 1 });
      expect(check.ok).toBe(false);
      expect(!check.ok && check.message).toMatch(/^parameters schema does not compile: /);
    }
    expect(compile).toHaveBeenCalledTimes(1);
    // A built-in service with it is refused at once, as before.
    expect(() => registry.add(service('builtin', odd))).toThrow(/does not compile/);
  });

  it('the problem is named when the same schema is added again', () => {
    const registry = new Registry();
    const odd = { type: 'object', properties: { a: { nullable: true } } };
    registry.add(service('odd', odd, true));
    registry.validate('odd', {});
    expect(() => registry.add(service('again', odd, true))).toThrow(
      "service 'again': parameters schema does not compile",
    );
  });
});

describe('an async schema is refused', () => {
  it('at add, for built-in and imported services alike', () => {
    // Its validator answers with a promise, which reads as valid whatever the params.
    const schema = { $async: true, type: 'object', required: ['x'] };
    expect(() => new Registry().add(service('a', schema))).toThrow(/must not be \$async/);
    expect(() => new Registry().add(service('b', schema, true))).toThrow(/must not be \$async/);
  });
});
