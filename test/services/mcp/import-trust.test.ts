/**
 * Trust is given by the user, in the app, to one server: an imported or pasted config cannot
 * carry it in (trust lets the tools that claim to only read run unasked), and the names a config
 * gives servers cannot reorder the text of the prompts they appear in.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Agent } from '../../../app/agent.js';
import type { PendingPrompt } from '../../../app/contract/policy.js';
import { parseServersJson } from '../../../app/services/mcp/config.js';
import { type McpAgent, fixtureEntry, openMcpAgent, ready, serverState } from './helpers.js';

let h: McpAgent | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** A voice server's call, every prompt for it denied and kept. */
function callDenyingPrompts(agent: Agent, asked: PendingPrompt[]) {
  return agent.dispatch({
    connection: { id: 'srv-1', name: 'Voice server' },
    dialect: 'advent',
    callId: `c${asked.length}`,
    service: 'fixture_echo',
    params: { text: 'hi' },
  });
}

describe('"trusted" in an imported config', () => {
  it('a pasted snippet saying "trusted": true imports the server untrusted and says so; its read-only tool still asks until the user trusts it', async () => {
    h = await openMcpAgent();
    const { agent } = h;
    const json = JSON.stringify({ mcpServers: { fixture: { ...fixtureEntry(), trusted: true } } });
    const preview = await agent.mcp.previewImport({ json });
    expect(preview.servers[0]!.trusted).toBe(false);
    expect(preview.servers[0]!.notes).toEqual([
      '"trusted" is not imported: trust the server on its row once you have seen its tools',
    ]);
    const [saved] = await agent.mcp.confirmImport(preview.id, ['fixture']);
    await serverState(agent, 'fixture', ready);
    expect(agent.mcp.list()[0]!.trusted).toBe(false);

    const asked: PendingPrompt[] = [];
    agent.broker.attach({ name: 'test' });
    agent.events.on('prompt', (p) => {
      asked.push(p);
      agent.answerPrompt(p.id, 'deny');
    });
    // `echo` claims to only read: untrusted, that claim does not let it run unasked.
    expect(await callDenyingPrompts(agent, asked)).toMatchObject({ code: 'denied' });
    expect(asked.map((p) => p.service)).toEqual(['fixture_echo']);

    // The user's own trust, given in the app, still works.
    await agent.mcp.setTrusted(saved!.id, true);
    expect(await callDenyingPrompts(agent, asked)).toMatchObject({ ok: true, data: 'hi' });
    expect(asked).toHaveLength(1);
  });

  it('a server name with bidi or invisible characters is left out, saying why', () => {
    const parsed = parseServersJson(
      JSON.stringify({
        mcpServers: { 'files\u202Eexe.txt': fixtureEntry(), 'fi\u200Bles': fixtureEntry() },
      }),
    );
    expect(parsed.servers).toEqual([]);
    expect(parsed.problems).toEqual([
      '"filesexe.txt": the name contains control, bidi or invisible characters',
      '"files": the name contains control, bidi or invisible characters',
    ]);
  });
});
