import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CoreApi } from '../app/api.js';
import { CommandRefusal } from '../app/contract/errors.js';
import { checkCommand } from '../app/contract/validate.js';
import { MemorySecretStore } from '../app/settings/secrets.js';
import { FAST } from './helpers/agent-harness.js';

let dir: string;
let home: string;
let api: CoreApi;
const mcpLaunch = {
  command: '/usr/local/bin/node',
  args: ['/opt/advent/bin/advent-agent.js', 'mcp'],
};

async function open(launch?: typeof mcpLaunch): Promise<CoreApi> {
  return CoreApi.open({
    dataDir: path.join(dir, 'data'),
    defaultFilesRoot: path.join(dir, 'files'),
    secrets: new MemorySecretStore(),
    timing: FAST,
    version: '1.0.0',
    host: 'browser',
    ...(launch ? { mcpLaunch: launch } : {}),
    mcpClientPlatform: { platform: 'darwin', home, env: {} },
  });
}

beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'advent-api-clients-'));
  home = path.join(dir, 'home');
  await mkdir(home);
});
afterEach(async () => {
  await api?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('core API: this agent in other apps', () => {
  it('lists the apps with the resolved command, previews and applies the Claude Desktop entry', async () => {
    api = await open(mcpLaunch);
    const claudeDir = path.join(home, 'Library', 'Application Support', 'Claude');
    const file = path.join(claudeDir, 'claude_desktop_config.json');
    await mkdir(claudeDir, { recursive: true });
    await writeFile(file, '{\n  "mcpServers": {\n    "old": { "command": "old" }\n  }\n}\n');

    const [claude] = await api.listMcpClients();
    expect(claude).toMatchObject({
      app: 'claude',
      configPath: file,
      installed: true,
      exists: true,
      entry: 'absent',
      resolved: true,
    });
    expect(claude!.snippet).toContain('"command": "/usr/local/bin/node"');

    const preview = await api.previewMcpClientSetup('claude');
    expect(preview.diff.some((d) => d.op === 'add' && d.text.includes('"advent-agent"'))).toBe(
      true,
    );
    const done = await api.applyMcpClientSetup(preview.id);
    expect(done.backupPath).toMatch(/claude_desktop_config\.json\.advent-backup-/);
    expect(JSON.parse(await readFile(file, 'utf8'))).toEqual({
      mcpServers: {
        old: { command: 'old' },
        'advent-agent': { command: mcpLaunch.command, args: mcpLaunch.args },
      },
    });
  });

  it('falls back to advent-agent on PATH when the host gave no command, and refuses with stable codes', async () => {
    api = await open();
    const views = await api.listMcpClients();
    expect(views.map((v) => v.resolved)).toEqual([false, false, false]);
    expect(views[0]!.launch).toEqual({ command: 'advent-agent', args: ['mcp'] });
    const notInstalled = await api.previewMcpClientSetup('cursor').catch((e: unknown) => e);
    expect(notInstalled).toBeInstanceOf(CommandRefusal);
    expect((notInstalled as CommandRefusal).code).toBe('mcp_client_not_installed');
    const unknown = await api.applyMcpClientSetup('setup-nope').catch((e: unknown) => e);
    expect((unknown as CommandRefusal).code).toBe('mcp_client_setup_stale');
  });

  it('the hosts check the arguments: only known apps and well-formed preview ids', () => {
    expect(checkCommand('listMcpClients', []).ok).toBe(true);
    expect(checkCommand('previewMcpClientSetup', ['vscode']).ok).toBe(true);
    expect(checkCommand('previewMcpClientSetup', ['goose'])).toMatchObject({
      ok: false,
      code: 'invalid_args',
    });
    expect(checkCommand('applyMcpClientSetup', ['../etc/passwd'])).toMatchObject({
      ok: false,
      code: 'invalid_args',
    });
  });
});
