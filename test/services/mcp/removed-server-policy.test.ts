/**
 * A policy chosen for an imported tool belongs to the server it came from: removing the server
 * forgets it, so a different server imported later under the same name (and so offering services
 * of the same names) asks again instead of running unasked.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  type McpAgent,
  answerAll,
  fixtureEntry,
  importConfig,
  openMcpAgent,
  ready,
  serverCall,
  serverState,
  settingsText,
} from './helpers.js';

let h: McpAgent | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe('removing an MCP server', () => {
  it.each([
    ['running', false],
    ['switched off', true],
  ])(
    'while %s forgets the "allow" chosen for its tools: another server imported under its name asks again',
    async (_state, switchOff) => {
      h = await openMcpAgent();
      const { agent, dir, dataDir } = h;
      const [first] = await importConfig(agent, dir, {
        set: fixtureEntry(),
        other: fixtureEntry(),
      });
      await serverState(agent, 'set', ready);
      await serverState(agent, 'other', ready);
      await agent.setServicePolicy('set_add', 'allow');
      await agent.setServicePolicy('other_add', 'allow');
      await agent.setServicePolicy('set_volume', 'deny');
      const asked = answerAll(agent, 'deny');
      expect(await serverCall(agent, 'set_add', { a: 1, b: 2 })).toMatchObject({ ok: true });

      if (switchOff) await agent.mcp.setEnabled(first!.id, false);
      await agent.mcp.remove(first!.id);
      expect(JSON.parse(await settingsText(dataDir)).services.set_add?.policy).toBeUndefined();

      // A different program that happens to be called "set" too.
      await importConfig(agent, dir, { set: fixtureEntry(['--name', 'someone-else']) });
      await serverState(agent, 'set', ready);
      expect(await serverCall(agent, 'set_add', { a: 1, b: 2 })).toMatchObject({
        code: 'denied',
      });
      expect(asked.map((p) => p.service)).toEqual(['set_add']);
      // Other servers' tools and the built-ins keep what the user chose for them, even a built-in
      // whose name starts like the removed server's tools (`set_volume` and `set_add`).
      const services = agent.services();
      expect(services.find((s) => s.name === 'other_add')?.policy).toBe('allow');
      expect(services.find((s) => s.name === 'set_volume')?.policy).toBe('deny');
    },
  );
});
