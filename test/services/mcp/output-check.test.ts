/**
 * An imported tool's results are checked against its output schema by a validator of its own,
 * which goes with the service: one validator shared by every service kept the compiled schema of
 * every version of every tool a server ever listed (~0.45 MB each, for as long as the app runs).
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { toolService } from '../../../app/services/mcp/adapter.js';
import { readTools } from '../../../app/services/mcp/tools.js';
import type { ServiceContext } from '../../../app/services/service.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

function version(outputSchema: Record<string, unknown>, structured: unknown) {
  const { tools } = readTools([
    { name: 'get', description: 'gets', inputSchema: { type: 'object' }, outputSchema },
  ]);
  return toolService({
    name: 'srv_get',
    server: { id: 's', name: 'srv', trusted: false },
    tool: tools[0]!,
    timeoutMs: 1000,
    caller: {
      call: async () => ({
        content: [{ type: 'text', text: 'ok' }],
        structuredContent: structured,
      }),
    },
  });
}

const ctx = () =>
  ({ signal: new AbortController().signal, dialect: 'advent' }) as unknown as ServiceContext;

describe("an imported tool's output check", () => {
  it('lets its compiled validator go with the service: re-listed versions do not pile up', async () => {
    const schema = (salt: number) => ({
      type: 'object',
      properties: Object.fromEntries(
        Array.from({ length: 1000 }, (_, k) => [
          `p${k}`,
          { type: 'string', description: `v${salt}` },
        ]),
      ),
    });
    const run = async (i: number) => {
      const service = version(schema(i), { p1: 'a' });
      expect(await service.run({}, ctx())).toBe('ok');
    };
    await run(-1);
    gc();
    const before = process.memoryUsage().heapUsed;
    for (let i = 0; i < 40; i += 1) await run(i);
    gc();
    // Kept, 40 versions were ~18 MB.
    expect(process.memoryUsage().heapUsed - before).toBeLessThan(8 * 1024 * 1024);
  }, 120_000);

  it('a new version of a schema with the same $id is checked by its own rules', async () => {
    const v1 = version(
      { $id: 'urn:out', type: 'object', properties: { n: { type: 'number' } } },
      { n: 1 },
    );
    expect(await v1.run({}, ctx())).toBe('ok');
    const v2 = version(
      { $id: 'urn:out', type: 'object', properties: { n: { type: 'string' } } },
      { n: 1 },
    );
    await expect(v2.run({}, ctx())).rejects.toThrow(/does not match its own output schema/);
  });

  it('checks a schema marked $async as written: a mismatch is refused, and nothing is left unawaited', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const schema = {
        $async: true,
        type: 'object',
        properties: { n: { type: 'number' } },
        required: ['n'],
      };
      await expect(version(schema, { n: 'one' }).run({}, ctx())).rejects.toThrow(
        /does not match its own output schema/,
      );
      expect(await version(schema, { n: 1 }).run({}, ctx())).toBe('ok');
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});
