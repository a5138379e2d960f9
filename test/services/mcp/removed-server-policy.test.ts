/**
 * A policy chosen for an imported tool belongs to the server it came from: removing the server
 * forgets it, so a different server imported later under the same name (and so offering services
 * of the same names) asks again instead of running unasked.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Agent } from '../../../app/agent.js';
import type { PendingPrompt } from '../../../app/contract/policy.js';
import {
  type McpAgent,
  fixtureEntry,
  importConfig,
  openMcpAgent,
  ready,
  serverState,
  settingsText,
} from './helpers.js';

let h: McpAgent | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

let calls = 0;
function serverCall(agent: Agent, service: string, params: Record<string, unknown>) {
  return agent.dispatch({
    connection: { id: 'srv-1', name: 'Voice server' },
    dialect: 'advent',
    callId: `c${++calls}`,
    service,
    params,
  });
}

/** Deny every prompt, keeping which service asked. */
function denyAll(agent: Agent): PendingPrompt[] {
  const asked: PendingPrompt[] = [];
  agent.broker.attach({ name: 'test' });
  agent.events.on('prompt', (p) => {
    asked.push(p);
    agent.answerPrompt(p.id, 'deny');
  });
  return asked;
}

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
      const asked = denyAll(agent);
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
