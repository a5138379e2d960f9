import { describe, expect, it } from 'vitest';
import { builtinServices } from '../../app/services/builtin/index.js';
import { Registry, type RegistryChange } from '../../app/services/registry.js';
import type { ParamSchema, Service } from '../../app/services/service.js';

function service(
  name: string,
  parameters: ParamSchema = { type: 'object' },
  extra: Partial<Service> = {},
): Service {
  return {
    name,
    title: name,
    description: `the ${name} service`,
    parameters,
    risk: 'read',
    timeoutMs: 1000,
    run: async () => 'ok',
    ...extra,
  };
}

describe('Registry.add refuses bad definitions', () => {
  it.each(['Bad', '1abc', 'with-dash', '', 'a'.repeat(65), 'has space'])(
    'refuses the name %j',
    (name) => {
      expect(() => new Registry().add(service(name))).toThrow(/service name .* is invalid/);
    },
  );

  it('refuses a duplicate name', () => {
    const registry = new Registry();
    registry.add(service('echo'));
    expect(() => registry.add(service('echo'))).toThrow("service 'echo' is already registered");
  });

  it('refuses parameters that are not an object schema', () => {
    const bad = [{ type: 'string' }, { type: ['object'] }, [], null, { properties: {} }];
    for (const parameters of bad) {
      expect(() => new Registry().add(service('s', parameters as unknown as ParamSchema))).toThrow(
        /type "object"/,
      );
    }
  });

  it('refuses a schema that violates the JSON Schema meta-schema', () => {
    const typo = { type: 'object', properties: { a: { type: 'strnig' } } } as ParamSchema;
    expect(() => new Registry().add(service('s', typo))).toThrow(/not a valid JSON Schema/);
    const badRequired = { type: 'object', required: 'a' } as unknown as ParamSchema;
    expect(() => new Registry().add(service('t', badRequired))).toThrow(/not a valid JSON Schema/);
  });

  it('refuses a schema ajv cannot compile', () => {
    const dangling = { type: 'object', properties: { a: { $ref: '#/definitions/missing' } } };
    expect(() => new Registry().add(service('s', dangling as ParamSchema))).toThrow(
      /does not compile/,
    );
  });

  it('refuses a missing description, unknown risk and non-positive timeout', () => {
    expect(() => new Registry().add(service('s', undefined, { description: ' ' }))).toThrow(
      /needs a description/,
    );
    expect(() =>
      new Registry().add(service('s', undefined, { risk: 'nuclear' as Service['risk'] })),
    ).toThrow(/unknown risk/);
    expect(() => new Registry().add(service('s', undefined, { timeoutMs: 0 }))).toThrow(
      /timeoutMs/,
    );
  });

  it('accepts the built-in services', () => {
    const registry = new Registry();
    for (const s of builtinServices()) registry.add(s);
    expect(registry.list().map((e) => e.service.name)).toEqual([
      'get_current_time',
      'create_file',
      'list_directory',
      'read_file',
      'search_files',
      'get_file_info',
    ]);
  });
});

describe('Registry.validate answers in one readable sentence', () => {
  const registry = new Registry();
  registry.add(
    service('s', {
      type: 'object',
      properties: {
        filename: { type: 'string', minLength: 1, maxLength: 5 },
        format: { type: 'string', enum: ['simple', 'detailed'] },
        count: { type: 'integer' },
        n: { type: 'number', minimum: 1, maximum: 10 },
        name: { type: 'string', minLength: 1 },
        flag: { type: 'boolean' },
        either: { anyOf: [{ type: 'string' }, { type: 'number' }] },
        tags: { type: 'array', items: { type: 'string' }, maxItems: 2 },
        list: { type: 'array', items: { type: 'object', properties: { id: { type: 'integer' } } } },
        opts: {
          type: 'object',
          properties: { mode: { type: 'string', enum: ['fast', 'slow'] } },
          required: ['mode'],
          additionalProperties: false,
        },
      },
      required: ['filename'],
      additionalProperties: false,
    }),
  );

  it.each([
    [{}, "parameter 'filename' is required"],
    [{ filename: 'a', format: 'short' }, "parameter 'format' must be one of: simple, detailed"],
    [{ filename: 'a', count: 1.5 }, "parameter 'count' must be an integer"],
    [{ filename: 'a', count: '3' }, "parameter 'count' must be an integer"],
    [{ filename: 'a', n: 11 }, "parameter 'n' must be <= 10"],
    [{ filename: 'a', n: 0 }, "parameter 'n' must be >= 1"],
    [{ filename: 'a', name: '' }, "parameter 'name' must have at least 1 character"],
    [{ filename: 'abcdef' }, "parameter 'filename' must have at most 5 characters"],
    [{ filename: 'a', flag: 'yes' }, "parameter 'flag' must be true or false"],
    [{ filename: 'a', foo: 1 }, "unexpected parameter 'foo'"],
    [{ filename: 'a', opts: { mode: 'warp' } }, "parameter 'opts.mode' must be one of: fast, slow"],
    [{ filename: 'a', opts: {} }, "parameter 'opts.mode' is required"],
    [{ filename: 'a', opts: { mode: 'fast', x: 1 } }, "unexpected parameter 'opts.x'"],
    [{ filename: 'a', either: true }, "parameter 'either' must be a string or a number"],
    [{ filename: 'a', tags: ['a', 'b', 'c'] }, "parameter 'tags' must have at most 2 items"],
    [{ filename: 'a', tags: ['a', 2] }, "parameter 'tags[1]' must be a string"],
    [
      { filename: 'a', list: [{ id: 1 }, { id: 'x' }] },
      "parameter 'list[1].id' must be an integer",
    ],
    [null, 'params must be an object'],
    [[1, 2], 'params must be an object'],
    ['text', 'params must be an object'],
  ])('%j → %s', (params, message) => {
    expect(registry.validate('s', params)).toEqual({ ok: false, message });
  });

  it('accepts valid params without changing them', () => {
    const params = { filename: 'a', count: 3, opts: { mode: 'fast' } };
    const before = structuredClone(params);
    expect(registry.validate('s', params)).toEqual({ ok: true });
    expect(params).toEqual(before);
  });

  it('does not coerce types', () => {
    const params = { filename: 'a', n: '5' };
    expect(registry.validate('s', params).ok).toBe(false);
    expect(params.n).toBe('5');
  });

  it('names an unknown service', () => {
    expect(registry.validate('nope', {})).toEqual({ ok: false, message: "unknown service 'nope'" });
  });
});

describe('Registry enabled flags', () => {
  it('enables services by default and applies initial overrides', () => {
    const registry = new Registry({ enabled: { b: false } });
    registry.add(service('a'));
    registry.add(service('b'));
    expect(registry.list().map((e) => [e.service.name, e.enabled])).toEqual([
      ['a', true],
      ['b', false],
    ]);
    expect(registry.isEnabled('missing')).toBe(false);
  });

  it('emits exactly one changed event per real change and none when unchanged', () => {
    const registry = new Registry();
    registry.add(service('a'));
    const events: RegistryChange[] = [];
    registry.events.on('changed', (e) => events.push(e));

    expect(registry.setEnabled('a', true)).toBe(false);
    expect(events).toEqual([]);
    expect(registry.setEnabled('a', false)).toBe(true);
    expect(registry.setEnabled('a', false)).toBe(false);
    expect(registry.setEnabled('a', true)).toBe(true);
    expect(events).toEqual([
      { name: 'a', kind: 'enabled', enabled: false },
      { name: 'a', kind: 'enabled', enabled: true },
    ]);
  });

  it('emits one changed event when a service is added', () => {
    const registry = new Registry();
    const events: RegistryChange[] = [];
    registry.events.on('changed', (e) => events.push(e));
    registry.add(service('a'));
    expect(events).toEqual([{ name: 'a', kind: 'added', enabled: true }]);
  });

  it('tells one change for a batch of adds and removes (a server re-listing its tools)', () => {
    const registry = new Registry({ enabled: { b: false } });
    registry.add(service('a'));
    registry.add(service('b'));
    const events: RegistryChange[] = [];
    registry.events.on('changed', (e) => events.push(e));
    registry.batch(() => {
      registry.remove('a');
      registry.remove('b');
      registry.add(service('c'));
      registry.add(service('b'));
    });
    registry.batch(() => undefined);
    expect(events).toEqual([{ kind: 'batch', added: ['c', 'b'], removed: ['a', 'b'] }]);
    // A service that comes back keeps its switch.
    expect(registry.isEnabled('b')).toBe(false);
    expect(registry.remove('ghost')).toBe(false);
  });

  it('throws for an unknown service', () => {
    expect(() => new Registry().setEnabled('ghost', true)).toThrow("unknown service 'ghost'");
  });

  it('offers servers only enabled services that are not user-only', () => {
    const registry = new Registry({ enabled: { off: false } });
    registry.add(service('on'));
    registry.add(service('off'));
    registry.add(service('mine', undefined, { userOnly: true }));
    expect(registry.serverServices().map((s) => s.name)).toEqual(['on']);
  });
});
