/**
 * The MCP hub against a real stdio server (test/fixtures/mcp-fixture-server.mjs, built with the
 * SDK's own Server): import, the gate's prompt and audit for imported tools, deny and timeout with
 * cancellation, crash and restart, list_changed, garbage on stdout, servers that cannot start,
 * results cut for the voice servers, secrets kept out of settings and logs, grants tied to the
 * server's identity.
 */
import { readFileSync } from 'node:fs';
import { readFile, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ALL_BUILTIN_NAMES } from '../../helpers/builtins.js';
import type { RegistryChange } from '../../../app/services/registry.js';
import { nextEvent, until } from '../../helpers/wait.js';
import {
  type McpAgent,
  VOICE_SERVER,
  answerAll,
  fixtureEntry,
  importConfig,
  inputOf,
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

async function auditText(dataDir: string): Promise<string> {
  const dir = path.join(dataDir, 'audit');
  const files = await readdir(dir);
  const texts = await Promise.all(files.map((f) => readFile(path.join(dir, f), 'utf8')));
  return texts.join('\n');
}

describe('importing a Claude Desktop config', () => {
  it('shows what will be imported and starts nothing until confirmed; then its tools are services', async () => {
    h = await openMcpAgent();
    const { agent, dir } = h;
    const file = path.join(dir, 'claude_desktop_config.json');
    await writeFile(
      file,
      JSON.stringify({
        mcpServers: {
          fixture: fixtureEntry([], { API_TOKEN: 'x'.repeat(8), LOG_LEVEL: 'debug' }),
          remote: { url: 'https://example.invalid/mcp', headers: { Authorization: 'Bearer abc' } },
          broken: { args: ['no command'] },
        },
      }),
    );
    const preview = await agent.mcp.previewImport({ path: file });
    expect(preview.servers.map((s) => [s.name, s.transport])).toEqual([
      ['fixture', 'stdio'],
      ['remote', 'http'],
    ]);
    expect(preview.servers[0]).toMatchObject({
      secretEnv: ['API_TOKEN'],
      envNames: ['API_TOKEN', 'LOG_LEVEL'],
    });
    expect(preview.servers[1]).toMatchObject({ secretHeaders: ['Authorization'] });
    expect(preview.problems).toEqual([
      '"broken": it has neither "command" (a program to run) nor "url" (a server address)',
    ]);
    // Nothing saved, nothing started.
    expect(agent.mcp.list()).toEqual([]);
    expect(agent.registry.list().map((e) => e.service.name)).toEqual(ALL_BUILTIN_NAMES);

    const changes: RegistryChange[] = [];
    agent.registry.events.on('changed', (c) => changes.push(c));
    const views = await agent.mcp.confirmImport(preview.id, ['fixture']);
    expect(views.map((v) => v.name)).toEqual(['fixture']);
    const view = await serverState(agent, 'fixture', ready);
    expect(view.state).toEqual({ status: 'ready', tools: 10 });
    expect(view.serverInfo).toMatchObject({ name: 'fixture', version: '1.0.0' });
    // All tools arrive in one registry change: every voice server re-registers once.
    expect(changes).toHaveLength(1);
    expect(changes[0]).toMatchObject({ kind: 'batch', removed: [] });

    const echo = agent.services().find((s) => s.name === 'fixture_echo')!;
    expect(echo).toMatchObject({
      title: 'Echo',
      description: 'Returns the text it is given.',
      server: { id: view.id, name: 'fixture', tool: 'echo' },
      hint: { readOnly: true, destructive: false, openWorld: false },
      policy: 'ask',
    });
    // The preview is used up: confirming twice does not import twice.
    await expect(agent.mcp.confirmImport(preview.id, ['fixture'])).rejects.toThrow(/expired/);
    // A second look at the same file says the saved one would be replaced.
    const again = await agent.mcp.previewImport({ path: file });
    expect(again.servers[0]!.replaces).toBe(true);
  });

  it('keeps a secret env value out of settings, the log view and the audit log, and still hands it to the server', async () => {
    h = await openMcpAgent();
    const { agent, dir, dataDir, secrets } = h;
    const secret = ['sk', 'live', 'a1b2c3d4e5f6'].join('-');
    const [view] = await importConfig(agent, dir, {
      fixture: fixtureEntry(['--print-env', 'API_TOKEN'], { API_TOKEN: secret, REGION: 'eu' }),
    });
    await serverState(agent, 'fixture', ready);
    answerAll(agent, 'once');
    const result = await serverCall(agent, 'fixture_env', { name: 'API_TOKEN' });
    // The server got it (and a model asking for it gets it: that is the server's business).
    expect(result).toMatchObject({ ok: true, data: secret });

    expect(await secrets.get(`mcp:${view!.id}:env:API_TOKEN`)).toBe(secret);
    const settings = await settingsText(dataDir);
    expect(settings).not.toContain(secret);
    expect(JSON.parse(settings).mcpServers[0]).toMatchObject({
      env: { REGION: 'eu' },
      secretEnv: ['API_TOKEN'],
    });
    // The server printed it on stderr: the log view masks it.
    const log = agent.mcp.log(view!.id);
    expect(log.some((l) => l.stream === 'stderr' && l.text === 'API_TOKEN=••••')).toBe(true);
    expect(JSON.stringify(log)).not.toContain(secret);
    expect(JSON.stringify(agent.mcp.list())).not.toContain(secret);
    await agent.audit.flush();
    // The audit log records the call, not the value it returned.
    expect(await auditText(dataDir)).not.toContain(secret);
  });
});

describe('calls to imported tools go through the gate', () => {
  it('asks even for a tool that claims to only read, shows the claim, runs once allowed and audits it under the server and tool', async () => {
    h = await openMcpAgent();
    const { agent, dir } = h;
    await importConfig(agent, dir, { fixture: fixtureEntry() });
    await serverState(agent, 'fixture', ready);
    const asked = answerAll(agent, 'once');

    const result = await serverCall(agent, 'fixture_echo', { text: 'hello' });
    expect(result).toMatchObject({ ok: true, data: 'hello' });
    expect(asked).toHaveLength(1);
    expect(asked[0]).toMatchObject({
      service: 'fixture_echo',
      connection: VOICE_SERVER,
      summary: 'Run "Echo" of the MCP server "fixture"',
      hint: { server: 'fixture', trusted: false, readOnly: true, destructive: false },
    });
    const page = await agent.queryAudit({ service: 'fixture_echo' });
    expect(page.records).toHaveLength(1);
    expect(page.records[0]).toMatchObject({
      service: 'fixture_echo',
      connection: 'Voice server',
      decision: 'allowed-once',
      outcome: 'ok',
    });
    // Params are still validated by the registry's ajv before anyone is asked.
    const bad = await serverCall(agent, 'fixture_echo', { text: 42 });
    expect(bad).toMatchObject({ ok: false, code: 'invalid_params' });
    expect(asked).toHaveLength(1);
  });

  it('a denied call never reaches the server and is audited as denied', async () => {
    h = await openMcpAgent();
    const { agent, dir } = h;
    await importConfig(agent, dir, { fixture: fixtureEntry() });
    await serverState(agent, 'fixture', ready);
    answerAll(agent, 'deny');
    const result = await serverCall(agent, 'fixture_grow', {});
    expect(result).toMatchObject({ ok: false, code: 'denied' });
    // `grow` would have added a tool.
    const view = agent.mcp.list()[0]!;
    expect(view.state).toEqual({ status: 'ready', tools: 10 });
    const [record] = (await agent.queryAudit({ service: 'fixture_grow' })).records;
    expect(record).toMatchObject({ decision: 'denied', outcome: 'refused' });
  });

  it("a trusted server's read-only tools run without asking; its destructive and unannotated tools still ask", async () => {
    h = await openMcpAgent();
    const { agent, dir } = h;
    const [view] = await importConfig(agent, dir, { fixture: fixtureEntry() });
    await serverState(agent, 'fixture', ready);
    await agent.mcp.setTrusted(view!.id, true);
    const asked = answerAll(agent, 'deny');

    expect(await serverCall(agent, 'fixture_echo', { text: 'hi' })).toMatchObject({ ok: true });
    expect(await serverCall(agent, 'fixture_add', { a: 1, b: 2 })).toMatchObject({
      code: 'denied',
    });
    expect(await serverCall(agent, 'fixture_crash', {})).toMatchObject({ code: 'denied' });
    expect(asked.map((p) => p.service)).toEqual(['fixture_add', 'fixture_crash']);
    expect(asked[1]!.hint).toMatchObject({ trusted: true, destructive: true });
    const [echo] = (await agent.queryAudit({ service: 'fixture_echo' })).records;
    expect(echo!.decision).toBe('auto');
    const services = agent.services();
    expect(services.find((s) => s.name === 'fixture_echo')).toMatchObject({
      policy: 'allow',
      risk: 'read',
    });
    expect(services.find((s) => s.name === 'fixture_crash')).toMatchObject({
      policy: 'ask',
      risk: 'system',
    });

    // A server policy applies to its tools; a tool's own policy wins over it.
    await agent.mcp.setPolicy(view!.id, 'deny');
    await agent.setServicePolicy('fixture_add', 'allow');
    expect(await serverCall(agent, 'fixture_echo', { text: 'x' })).toMatchObject({
      code: 'denied',
    });
    expect(await serverCall(agent, 'fixture_add', { a: 2, b: 2 })).toMatchObject({
      ok: true,
      data: '4',
    });
    expect(asked).toHaveLength(2);
  });

  it('a call that outlives the server timeout is stopped and the server is told to cancel it', async () => {
    h = await openMcpAgent();
    const { agent, dir } = h;
    const cancelFile = path.join(dir, 'cancelled.txt');
    const [view] = await importConfig(agent, dir, {
      fixture: fixtureEntry([], { FIXTURE_CANCEL_FILE: cancelFile }),
    });
    await serverState(agent, 'fixture', ready);
    await agent.mcp.save(inputOf(view!, { timeoutSec: 1 }));
    await serverState(agent, 'fixture', ready);
    answerAll(agent, 'once');
    const result = await serverCall(agent, 'fixture_slow', { ms: 20_000 });
    expect(result).toMatchObject({ ok: false, code: 'service_timeout' });
    expect(result.ok === false && result.message).toMatch(/did not finish within 1 s/);
    await until(() => {
      try {
        return readFileSync(cancelFile, 'utf8').startsWith('cancelled');
      } catch {
        return false;
      }
    }, 'the server to receive notifications/cancelled');
    // The server is fine afterwards.
    expect(await serverCall(agent, 'fixture_slow', { ms: 10 })).toMatchObject({ ok: true });
  });

  it('an error result, media and structured content come back as text the voice servers can use', async () => {
    h = await openMcpAgent();
    const { agent, dir } = h;
    await importConfig(agent, dir, { fixture: fixtureEntry() });
    await serverState(agent, 'fixture', ready);
    answerAll(agent, 'session');

    const failed = await serverCall(agent, 'fixture_fail', {});
    expect(failed).toMatchObject({ ok: false, code: 'service_error' });
    expect(failed.ok === false && failed.message).toMatch(/the disk is on fire/);

    const media = await serverCall(agent, 'fixture_media', {});
    expect(media.ok && media.data).toBe(
      [
        'here is a picture',
        '[image (image/png, 2.0 KB) not shown: voice servers receive text only]',
        '[link to a resource: report.pdf file:///tmp/report.pdf (application/pdf)]',
        '[resource memo://1 (text/plain)]\nmemo text',
      ].join('\n'),
    );

    const structured = await serverCall(agent, 'fixture_structured', { city: 'Oslo' });
    expect(structured).toMatchObject({ ok: true, data: '{"temperature":21.5,"city":"Oslo"}' });
    expect(agent.services().find((s) => s.name === 'fixture_structured')!.outputSchema).toEqual({
      type: 'object',
      properties: { temperature: { type: 'number' }, city: { type: 'string' } },
      required: ['temperature'],
    });
  });

  it('a result over 8 KB is cut with a note saying so', async () => {
    h = await openMcpAgent();
    const { agent, dir } = h;
    await importConfig(agent, dir, { fixture: fixtureEntry() });
    await serverState(agent, 'fixture', ready);
    answerAll(agent, 'once');
    const result = await serverCall(agent, 'fixture_big', { bytes: 20_000 });
    expect(result.ok).toBe(true);
    const text = result.ok ? String(result.data) : '';
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(8000);
    expect(text).toMatch(
      /^x+\n…\[cut: the result was 20000 bytes; only the first part is shown\]$/,
    );
  });
});

describe('server lifecycle', () => {
  it('a server that crashes is restarted with backoff, its tools offered again', async () => {
    h = await openMcpAgent();
    const { agent, dir } = h;
    const [view] = await importConfig(agent, dir, { fixture: fixtureEntry() });
    await serverState(agent, 'fixture', ready);
    answerAll(agent, 'session');
    const states: string[] = [];
    agent.mcp.events.on('server', (v) => states.push(v.state.status));

    const restarting = serverState(agent, 'fixture', (v) => v.state.status === 'restarting');
    const crashed = await serverCall(agent, 'fixture_crash', {});
    expect(crashed).toMatchObject({ ok: false, code: 'service_error' });
    const during = await restarting;
    expect(during.state).toMatchObject({ status: 'restarting', attempt: 1 });
    expect(during.state.status === 'restarting' && during.state.reason).toMatch(
      /exited \(code 3\): fixture: crashing on purpose/,
    );
    // Tools stay offered through a restart (no re-registration churn for a blip).
    expect(agent.registry.get('fixture_echo')).toBeDefined();
    await serverState(agent, 'fixture', ready);
    expect(states).toEqual(expect.arrayContaining(['restarting', 'starting', 'ready']));
    expect(await serverCall(agent, 'fixture_add', { a: 40, b: 2 })).toMatchObject({
      ok: true,
      data: '42',
    });
    expect(agent.mcp.log(view!.id).map((l) => l.text)).toEqual(
      expect.arrayContaining(['fixture: crashing on purpose', 'restarting']),
    );
  });

  it('list_changed: the server re-lists and the registry changes once', async () => {
    h = await openMcpAgent();
    const { agent, dir } = h;
    await importConfig(agent, dir, { fixture: fixtureEntry() });
    await serverState(agent, 'fixture', ready);
    answerAll(agent, 'once');
    const changes: RegistryChange[] = [];
    agent.registry.events.on('changed', (c) => changes.push(c));
    const grown = nextEvent(agent.registry.events, 'changed');
    await serverCall(agent, 'fixture_grow', {});
    expect(await grown).toEqual({ kind: 'batch', added: ['fixture_extra_1'], removed: [] });
    expect(changes).toHaveLength(1);
    // The row's state follows the re-listing (its tool list may show the new tool a moment before).
    const grownView = await serverState(
      agent,
      'fixture',
      (v) => v.state.status === 'ready' && v.state.tools === 11,
    );
    expect(grownView.tools).toHaveLength(11);
  });

  it('a server printing garbage on stdout still works; the garbage goes to its log', async () => {
    h = await openMcpAgent();
    const { agent, dir } = h;
    const [view] = await importConfig(agent, dir, { fixture: fixtureEntry(['--garbage']) });
    await serverState(agent, 'fixture', ready);
    answerAll(agent, 'once');
    expect(await serverCall(agent, 'fixture_add', { a: 1, b: 1 })).toMatchObject({ data: '2' });
    expect(
      agent.mcp
        .log(view!.id)
        .filter((l) => l.stream === 'stdout')
        .map((l) => l.text),
    ).toEqual(['fixture server v1 starting (this line is not MCP)', 'listing tools now']);
  });

  it('servers that cannot work are failed with the reason; their tools are not offered and nothing else is affected', async () => {
    h = await openMcpAgent({ mcp: { timing: { initializeTimeoutMs: 8000 } } });
    const { agent, dir } = h;
    await importConfig(agent, dir, {
      good: fixtureEntry(['--bad-schema']),
      missing: { command: 'advent-no-such-command-3f9', args: [] },
      quits: fixtureEntry(['--exit-at-once']),
      chatty: fixtureEntry(['--no-mcp']),
    });
    const failed = (name: string) =>
      serverState(agent, name, (v) => v.state.status === 'failed').then((v) =>
        v.state.status === 'failed' ? v.state.reason : '',
      );
    expect(await failed('missing')).toMatch(
      /^the command 'advent-no-such-command-3f9' was not found; searched PATH: /,
    );
    expect(await failed('quits')).toBe(
      'it exited at once (code 2): fixture: cannot open the database: no such file',
    );
    expect(await failed('chatty')).toBe(
      'it does not speak MCP; it printed text that is not MCP on stdout: "Welcome to the fixture server! Type help for help."',
    );
    const good = await serverState(agent, 'good', ready);
    const broken = good.tools.find((t) => t.tool === 'broken')!;
    expect(broken.service).toBeUndefined();
    expect(broken.problem).toMatch(/parameters are not a valid JSON Schema/);
    const names = agent.registry.list().map((e) => e.service.name);
    expect(names.filter((n) => n.startsWith('good_'))).toHaveLength(10);
    expect(names.some((n) => /^(missing|quits|chatty)_/.test(n))).toBe(false);
  });

  it('switching a server off stops its process and withdraws its tools; removing it forgets it', async () => {
    h = await openMcpAgent();
    const { agent, dir, secrets, dataDir } = h;
    const [view] = await importConfig(agent, dir, {
      fixture: fixtureEntry([], { SECRET_KEY: 'abcd-1234' }),
    });
    await serverState(agent, 'fixture', ready);
    await agent.mcp.setEnabled(view!.id, false);
    expect(agent.mcp.list()[0]).toMatchObject({ enabled: false, state: { status: 'stopped' } });
    expect(agent.registry.get('fixture_echo')).toBeUndefined();
    await agent.mcp.setEnabled(view!.id, true);
    await serverState(agent, 'fixture', ready);
    expect(agent.registry.get('fixture_echo')).toBeDefined();

    await agent.mcp.remove(view!.id);
    expect(agent.mcp.list()).toEqual([]);
    expect(agent.registry.get('fixture_echo')).toBeUndefined();
    expect(await secrets.get(`mcp:${view!.id}:env:SECRET_KEY`)).toBeUndefined();
    expect(JSON.parse(await settingsText(dataDir)).mcpServers).toEqual([]);
  });
});

describe('grants belong to the server as it was', () => {
  it('"always allow" holds for the same server, not for one that now runs something else or was renamed', async () => {
    h = await openMcpAgent();
    const { agent, dir, dataDir } = h;
    const [view] = await importConfig(agent, dir, { fixture: fixtureEntry() });
    await serverState(agent, 'fixture', ready);
    const asked = answerAll(agent, 'always');
    expect(await serverCall(agent, 'fixture_add', { a: 1, b: 1 })).toMatchObject({ ok: true });
    expect(await serverCall(agent, 'fixture_add', { a: 1, b: 2 })).toMatchObject({ ok: true });
    expect(asked).toHaveLength(1);
    expect(agent.services().find((s) => s.name === 'fixture_add')!.alwaysGrants).toEqual([
      'fixture_add',
    ]);
    expect(JSON.parse(await settingsText(dataDir)).alwaysGrants[0]).toMatch(
      /^fixture_add@[0-9a-f]{16}$/,
    );

    // The same name now runs the server with other arguments: a different server.
    await agent.mcp.save(inputOf(view!, { args: [...view!.args, '--garbage'] }));
    await serverState(agent, 'fixture', ready);
    expect(agent.services().find((s) => s.name === 'fixture_add')!.alwaysGrants).toEqual([]);
    expect(await serverCall(agent, 'fixture_add', { a: 2, b: 2 })).toMatchObject({ ok: true });
    expect(asked).toHaveLength(2);

    // Renamed: its tools have new names and the grants given under the old name do not follow.
    const changed = agent.mcp.list()[0]!;
    await agent.mcp.save(inputOf(changed, { name: 'tools' }));
    await serverState(agent, 'tools', ready);
    expect(await serverCall(agent, 'tools_add', { a: 3, b: 3 })).toMatchObject({ data: '6' });
    expect(asked.map((p) => p.service)).toEqual(['fixture_add', 'fixture_add', 'tools_add']);
  });
});
