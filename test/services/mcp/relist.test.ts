/**
 * A server announcing tool changes (`notifications/tools/list_changed`) again and again: the real
 * stdio fixture test/fixtures/mcp-storm-server.mjs, whose every listing changes the descriptions
 * of its tools (never their schemas), under the hub and a registry, with time on a FakeClock.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv } from 'ajv';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { McpServerConfig } from '../../../app/contract/mcp.js';
import { seededIds } from '../../../app/ids.js';
import { McpHub } from '../../../app/services/mcp/hub.js';
import { Registry } from '../../../app/services/registry.js';
import type { ServiceContext } from '../../../app/services/service.js';
import type { Settings } from '../../../app/settings/schema.js';
import { MemorySecretStore } from '../../../app/settings/secrets.js';
import { FakeClock } from '../../helpers/fake-clock.js';
import { nextEvent } from '../../helpers/wait.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const STORM = path.resolve(here, '../../fixtures/mcp-storm-server.mjs');
const TOOLS = 20;

let hub: McpHub | undefined;
afterEach(async () => {
  await hub?.close();
  hub = undefined;
  vi.restoreAllMocks();
});

async function openStorm() {
  const clock = new FakeClock(Date.now());
  const registry = new Registry();
  const config: McpServerConfig = {
    id: 'mcp-storm',
    name: 'storm',
    transport: 'stdio',
    command: process.execPath,
    args: [STORM, '--tools', String(TOOLS)],
  };
  const settings = { mcpServers: [config] } as unknown as Settings;
  hub = new McpHub({
    registry,
    settings: { get: () => settings, update: async (edit) => edit(settings) },
    secrets: new MemorySecretStore(),
    clock,
    ids: seededIds(),
    version: '1.0.0',
    timing: { relistDelayMs: 100, relistIntervalMs: 2000, relistIntervalMaxMs: 30_000 },
  });
  const ready = nextEvent(hub.events, 'server', (v) => v.state.status === 'ready', 15_000);
  hub.start();
  await ready;
  let reRegistrations = 0;
  registry.events.on('changed', () => (reRegistrations += 1));
  const ctx = { signal: new AbortController().signal } as ServiceContext;
  return {
    clock,
    registry,
    reRegistrations: () => reRegistrations,
    /**
     * The server sends `list_changed` `times` times. Its answer comes after any re-list the agent
     * asked for before, so awaiting it also waits for that re-list to be applied.
     */
    announce: (times: number) => registry.get('storm_announce')!.run({ times }, ctx),
    listing: () => /listing (\d+)/.exec(registry.get('storm_t0')!.description)![1],
  };
}

describe('a server announcing tool changes non-stop', () => {
  it('is re-listed every few seconds at most while it keeps on, and its last change still applies', async () => {
    const s = await openStorm();
    expect(s.listing()).toBe('1');

    // A first change after a quiet spell applies promptly.
    await s.announce(1);
    s.clock.advance(100);
    await s.announce(0);
    expect(s.listing()).toBe('2');
    expect(s.reRegistrations()).toBe(1);

    // Ten seconds of changes announced every 100 ms.
    for (let step = 0; step < 100; step += 1) {
      await s.announce(3);
      s.clock.advance(100);
    }
    await s.announce(0);
    const during = s.reRegistrations() - 1;
    expect(during).toBeGreaterThanOrEqual(1);
    expect(during).toBeLessThanOrEqual(5);

    // Once it stops, what it last announced is listed and registered.
    s.clock.advance(60_000);
    await s.announce(0);
    const settled = s.reRegistrations();
    expect(Number(s.listing())).toBe(settled + 1);

    // After a quiet minute, a new change applies promptly again.
    await s.announce(1);
    s.clock.advance(100);
    await s.announce(0);
    expect(s.reRegistrations()).toBe(settled + 1);
    expect(Number(s.listing())).toBe(settled + 2);
  });

  it('re-registers tools whose description changed without compiling their schemas again', async () => {
    const s = await openStorm();
    const compile = vi.spyOn(Ajv.prototype, 'compile');
    await s.announce(1);
    s.clock.advance(100);
    await s.announce(0);
    expect(s.listing()).toBe('2');
    expect(s.reRegistrations()).toBe(1);
    expect(s.registry.get(`storm_t${TOOLS - 1}`)?.description).toContain('listing 2');
    expect(compile).not.toHaveBeenCalled();
  });
});
