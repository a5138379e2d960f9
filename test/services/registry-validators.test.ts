/**
 * The registry's validators are kept by schema: an MCP server re-listing its tools re-adds them
 * all, mostly unchanged, and compiling hundreds of schemas again would stall the agent.
 */
import { Ajv } from 'ajv';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Registry } from '../../app/services/registry.js';
import type { ParamSchema, Service } from '../../app/services/service.js';

function service(name: string, parameters: object, description = `the ${name} service`): Service {
  return {
    name,
    title: name,
    description,
    parameters: parameters as ParamSchema,
    risk: 'read',
    timeoutMs: 1000,
    run: async () => 'ok',
  };
}

const city = () => ({
  type: 'object',
  properties: { city: { type: 'string', pattern: '^[A-Z][a-z]+$' } },
  required: ['city'],
});

afterEach(() => {
  vi.restoreAllMocks();
});

describe('validators are kept by schema', () => {
  it('a tool re-added with a new description but the same schema is not compiled again, and still checks its params', () => {
    const registry = new Registry();
    const compile = vi.spyOn(Ajv.prototype, 'compile');
    registry.add(service('weather', city(), 'Weather, listing 1.'));
    expect(compile).toHaveBeenCalledTimes(1);
    for (let listing = 2; listing <= 5; listing += 1)
      registry.batch(() => {
        registry.remove('weather');
        registry.add(service('weather', city(), `Weather, listing ${listing}.`));
      });
    expect(compile).toHaveBeenCalledTimes(1);
    expect(registry.get('weather')?.description).toBe('Weather, listing 5.');
    expect(registry.validate('weather', { city: 'Paris' })).toEqual({ ok: true });
    expect(registry.validate('weather', { city: 'paris' }).ok).toBe(false);
  });

  it('a changed schema is compiled and checked as changed, even one keeping its $id', () => {
    const registry = new Registry();
    const withId = (type: string) => ({
      $id: 'https://example.invalid/tool.json',
      type: 'object',
      properties: { n: { type } },
    });
    registry.add(service('tool', withId('string')));
    registry.batch(() => {
      registry.remove('tool');
      registry.add(service('tool', withId('number')));
    });
    expect(registry.validate('tool', { n: 3 })).toEqual({ ok: true });
    expect(registry.validate('tool', { n: 'three' }).ok).toBe(false);
  });

  it('two services with the same schema share it; removing one leaves the other checking', () => {
    const registry = new Registry();
    registry.add(service('one', city()));
    registry.add(service('two', city()));
    registry.remove('one');
    expect(registry.validate('two', { city: 'Oslo' })).toEqual({ ok: true });
    expect(registry.validate('two', {}).ok).toBe(false);
  });
});
