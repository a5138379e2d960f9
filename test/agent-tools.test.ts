import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Agent } from '../app/agent.js';
import { MemorySecretStore } from '../app/settings/secrets.js';

let dir: string;
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('the services as servers see them', () => {
  it("use a service's serverParameters when it has them (an imported tool's $refs inlined)", async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'advent-tools-'));
    const serverParameters = { type: 'object' as const, properties: { a: { type: 'string' } } };
    const agent = await Agent.open({
      dataDir: path.join(dir, 'data'),
      defaultFilesRoot: path.join(dir, 'files'),
      secrets: new MemorySecretStore(),
      services: [
        {
          name: 'refs',
          title: 'Refs',
          description: 'a tool whose schema uses $ref',
          parameters: {
            type: 'object',
            $defs: { x: { type: 'string' } },
            properties: { a: { $ref: '#/$defs/x' } },
          },
          serverParameters,
          risk: 'read',
          timeoutMs: 1000,
          run: async () => 'ok',
        },
      ],
    });
    try {
      const entry = agent.toolEntries().find((t) => t.name === 'refs');
      expect(entry?.inputSchema).toEqual(serverParameters);
      // Calls are still checked against the service's own schema.
      expect((await agent.runService('refs', { a: 1 })).ok).toBe(false);
      expect((await agent.runService('refs', { a: 'x' })).ok).toBe(true);
    } finally {
      await agent.close();
    }
  });
});
