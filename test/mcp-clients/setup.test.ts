import {
  lstat,
  mkdir,
  mkdtemp,
  readFile,
  readdir,
  rm,
  stat,
  symlink,
  writeFile,
} from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CommandRefusal } from '../../app/contract/errors.js';
import { seededIds } from '../../app/ids.js';
import { McpClientSetup } from '../../app/mcp-clients/setup.js';
import { FakeClock } from '../helpers/fake-clock.js';

const launch = { command: '/usr/bin/node', args: ['/opt/advent/bin/advent-agent.js', 'mcp'] };
const ours = { command: launch.command, args: launch.args };

let home: string;
let clock: FakeClock;
let setup: McpClientSetup;
const claudeDir = () => path.join(home, '.config', 'Claude');
const claudeFile = () => path.join(claudeDir(), 'claude_desktop_config.json');
const vscodeFile = () => path.join(home, '.config', 'Code', 'User', 'mcp.json');

beforeEach(async () => {
  home = await mkdtemp(path.join(os.tmpdir(), 'advent-clients-'));
  clock = new FakeClock(Date.UTC(2025, 0, 31, 12, 3, 4, 5));
  setup = new McpClientSetup({
    platform: { platform: 'linux', home, env: {} },
    launch,
    clock,
    ids: seededIds(7),
  });
});
afterEach(async () => {
  await rm(home, { recursive: true, force: true });
});

async function refusal(p: Promise<unknown>): Promise<CommandRefusal> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(CommandRefusal);
  return err as CommandRefusal;
}

const backups = async (dir: string) =>
  (await readdir(dir)).filter((f) => f.includes('.advent-backup-')).sort();

describe('one-click setup on real files', () => {
  it("shows another server's credentials as *** in the preview, and writes them as they are", async () => {
    await mkdir(claudeDir(), { recursive: true });
    const before = `{
  "mcpServers": {
    "github": {
      "command": "npx",
      "args": ["server-github", "--api-key", "sk-arg-123"],
      "env": { "GITHUB_TOKEN": "ghp_secret456", "LOG": "debug" }
    }
  }
}
`;
    await writeFile(claudeFile(), before);
    const preview = await setup.preview('claude');
    const shown = preview.diff.map((l) => (l.op === 'skip' ? '' : l.text)).join('\n');
    expect(shown).not.toContain('ghp_secret456');
    expect(shown).not.toContain('sk-arg-123');
    expect(shown).toContain('"GITHUB_TOKEN": "***"');
    expect(shown).toContain('"LOG": "debug"');
    expect(preview.masked).toBe(true);
    await setup.apply(preview.id);
    const after = JSON.parse(await readFile(claudeFile(), 'utf8'));
    expect(after.mcpServers.github.env.GITHUB_TOKEN).toBe('ghp_secret456');
    expect(after.mcpServers.github.args).toEqual(['server-github', '--api-key', 'sk-arg-123']);
  });

  it.each([
    ['postgres', ['-y', 'server-postgres', 'postgresql://admin:Pg-S3cret-pw@db.internal/prod']],
    ['brave', ['-y', 'brave-mcp', '--api-key', 'BSA-live-0123456789']],
    [
      'remote',
      ['mcp-remote', 'https://mcp.example.com/sse', '--header', 'X-API-Key: sk-live-abcdef'],
    ],
    [
      'bearer',
      ['mcp-remote', 'https://h/sse?api_key=sk-q1', '--header', 'Authorization: Bearer sk-b2'],
    ],
  ])(
    'hides the credential of %s in a pretty-printed file, one argument per line, and writes it as it is',
    async (server, args) => {
      await mkdir(claudeDir(), { recursive: true });
      // JSON.stringify(…, null, 2): the layout Claude Desktop's docs show; this server is last,
      // so its arguments are the context lines right above our entry.
      const config = {
        mcpServers: {
          memory: { command: 'npx', args: ['-y', 'mem'] },
          [server]: { command: 'npx', args },
        },
      };
      await writeFile(claudeFile(), JSON.stringify(config, null, 2) + '\n');
      const preview = await setup.preview('claude');
      const shown = preview.diff.map((l) => (l.op === 'skip' ? '' : l.text)).join('\n');
      expect(shown).toContain(args.at(-2));
      for (const secret of [
        'Pg-S3cret-pw',
        'BSA-live-0123456789',
        'sk-live-abcdef',
        'sk-q1',
        'sk-b2',
      ])
        expect(shown).not.toContain(secret);
      expect(preview.masked).toBe(true);
      expect(shown).toContain(`"${launch.args[0]}"`);
      await setup.apply(preview.id);
      const after = JSON.parse(await readFile(claudeFile(), 'utf8'));
      expect(after.mcpServers[server].args).toEqual(args);
    },
  );

  it('lists each app with its file, whether it is installed and the state of our entry', async () => {
    await mkdir(claudeDir(), { recursive: true });
    await writeFile(claudeFile(), JSON.stringify({ mcpServers: { 'advent-agent': ours } }));
    await mkdir(path.join(home, '.cursor'));
    const views = await setup.list();
    expect(views.map((v) => [v.app, v.installed, v.exists, v.entry])).toEqual([
      ['claude', true, true, 'current'],
      ['cursor', true, false, 'absent'],
      ['vscode', false, false, 'absent'],
    ]);
    expect(views[0]).toMatchObject({ configPath: claudeFile(), resolved: true, launch });
    expect(JSON.parse(views[2]!.snippet)).toEqual({
      servers: { 'advent-agent': { type: 'stdio', ...ours } },
    });
  });

  it('keeps the existing servers, writes a backup of the old file with its mode, and reports it', async () => {
    await mkdir(claudeDir(), { recursive: true });
    const before = `{
  "mcpServers": {
    "memory": { "command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"], "env": { "TOKEN": "t-1" } }
  },
  "preferences": { "quickEntry": true }
}
`;
    await writeFile(claudeFile(), before, { mode: 0o640 });
    const preview = await setup.preview('claude');
    expect(preview).toMatchObject({
      app: 'claude',
      configPath: claudeFile(),
      creates: false,
      change: 'add',
    });
    // Nothing is written by a preview.
    expect(await readFile(claudeFile(), 'utf8')).toBe(before);
    expect(await backups(claudeDir())).toEqual([]);

    const done = await setup.apply(preview.id);
    expect(done).toEqual({
      app: 'claude',
      configPath: claudeFile(),
      changed: true,
      created: false,
      backupPath: `${claudeFile()}.advent-backup-2025-01-31T12-03-04-005Z`,
    });
    expect(await readFile(done.backupPath!, 'utf8')).toBe(before);
    expect((await stat(done.backupPath!)).mode & 0o777).toBe(0o640);
    expect((await stat(claudeFile())).mode & 0o777).toBe(0o640);
    const after = await readFile(claudeFile(), 'utf8');
    expect(JSON.parse(after)).toEqual({
      mcpServers: {
        memory: {
          command: 'npx',
          args: ['-y', '@modelcontextprotocol/server-memory'],
          env: { TOKEN: 't-1' },
        },
        'advent-agent': ours,
      },
      preferences: { quickEntry: true },
    });
    // The other entry's line is untouched, byte for byte.
    expect(after).toContain(
      '    "memory": { "command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"], "env": { "TOKEN": "t-1" } },\n',
    );
    // No temp file is left behind.
    expect((await readdir(claudeDir())).sort()).toEqual(
      ['claude_desktop_config.json', path.basename(done.backupPath!)].sort(),
    );
    expect((await setup.list())[0]!.entry).toBe('current');
  });

  it('a second setup changes nothing and keeps no second backup', async () => {
    await mkdir(claudeDir(), { recursive: true });
    await writeFile(claudeFile(), '{"mcpServers": {"a": {"command": "a"}}}\n');
    await setup.apply((await setup.preview('claude')).id);
    const once = await readFile(claudeFile(), 'utf8');
    clock.advance(60_000);
    const again = await setup.preview('claude');
    expect(again).toMatchObject({ change: 'none', diff: [] });
    expect(await setup.apply(again.id)).toEqual({
      app: 'claude',
      configPath: claudeFile(),
      changed: false,
      created: false,
    });
    expect(await readFile(claudeFile(), 'utf8')).toBe(once);
    expect(await backups(claudeDir())).toHaveLength(1);
  });

  it('creates the file (and its folder) when the app is installed but has no config yet', async () => {
    await mkdir(path.join(home, '.config', 'Code'), { recursive: true });
    const preview = await setup.preview('vscode');
    expect(preview).toMatchObject({ creates: true, change: 'add' });
    expect(preview.diff.every((d) => d.op === 'add')).toBe(true);
    const done = await setup.apply(preview.id);
    expect(done).toEqual({
      app: 'vscode',
      configPath: vscodeFile(),
      changed: true,
      created: true,
    });
    expect(JSON.parse(await readFile(vscodeFile(), 'utf8'))).toEqual({
      servers: { 'advent-agent': { type: 'stdio', ...ours } },
    });
  });

  it('keeps the comments of a VS Code file it edits', async () => {
    await mkdir(path.dirname(vscodeFile()), { recursive: true });
    const before =
      '{\n  // mine\n  "servers": {\n    "git": { "command": "uvx", "args": ["mcp-server-git"] }, // pinned\n  },\n}\n';
    await writeFile(vscodeFile(), before);
    await setup.apply((await setup.preview('vscode')).id);
    const after = await readFile(vscodeFile(), 'utf8');
    expect(after).toContain('  // mine\n');
    expect(after).toContain('"git": { "command": "uvx", "args": ["mcp-server-git"] }, // pinned\n');
    expect(after).toContain('"advent-agent": {');
  });

  it('refuses a file that is not JSON and leaves it untouched, with no backup', async () => {
    await mkdir(claudeDir(), { recursive: true });
    const broken = '{ "mcpServers": { "a": { "command": "a" }, }\n';
    await writeFile(claudeFile(), broken);
    const before = await stat(claudeFile());
    const err = await refusal(setup.preview('claude'));
    expect(err.code).toBe('mcp_client_config_invalid');
    expect(err.message).toMatch(/was left as it is: it is not valid JSON/);
    expect(err.params).toMatchObject({ path: claudeFile(), app: 'Claude Desktop' });
    expect(await readFile(claudeFile(), 'utf8')).toBe(broken);
    expect((await stat(claudeFile())).mtimeMs).toBe(before.mtimeMs);
    expect(await backups(claudeDir())).toEqual([]);
    expect((await setup.list())[0]).toMatchObject({ exists: true, entry: 'unreadable' });
  });

  it('refuses a config saved in another encoding and leaves its bytes as they were, with no backup', async () => {
    await mkdir(claudeDir(), { recursive: true });
    // Windows-1252, as an editor there may save it: "José" with é as the one byte 0xE9.
    const before = Buffer.concat([
      Buffer.from(
        '{\n  "mcpServers": {\n    "notes": { "command": "node", "args": ["C:\\\\Users\\\\Jos',
      ),
      Buffer.from([0xe9]),
      Buffer.from('\\\\notes.js"] }\n  }\n}\n'),
    ]);
    await writeFile(claudeFile(), before);
    const err = await refusal(setup.preview('claude'));
    expect(err.code).toBe('mcp_client_config_invalid');
    expect(err.message).toMatch(/was left as it is: it is not UTF-8 text/);
    expect(err.params).toMatchObject({ path: claudeFile(), app: 'Claude Desktop' });
    expect(await readFile(claudeFile())).toEqual(before);
    expect(await backups(claudeDir())).toEqual([]);
    expect((await setup.list())[0]).toMatchObject({ exists: true, entry: 'unreadable' });
  });

  it('sets up a UTF-8 config that starts with a BOM, keeping the BOM and its non-ASCII text', async () => {
    await mkdir(claudeDir(), { recursive: true });
    const before =
      '\uFEFF{"mcpServers": {"notes": {"command": "node", "args": ["José/notes.js"]}}}';
    await writeFile(claudeFile(), before);
    await setup.apply((await setup.preview('claude')).id);
    const after = await readFile(claudeFile(), 'utf8');
    expect(after.startsWith('\uFEFF{')).toBe(true);
    expect(JSON.parse(after.replace(/^\uFEFF/, '')).mcpServers).toEqual({
      notes: { command: 'node', args: ['José/notes.js'] },
      'advent-agent': ours,
    });
  });

  it('does not read a config file past the size bound, and says why', async () => {
    await mkdir(claudeDir(), { recursive: true });
    const huge = `{"mcpServers": {}, "pad": "${'x'.repeat(1024 * 1024)}"}`;
    await writeFile(claudeFile(), huge);
    const err = await refusal(setup.preview('claude'));
    expect(err.code).toBe('mcp_client_config_invalid');
    expect(err.params.reason).toMatch(/at most 1048576 are read/);
    expect((await setup.list())[0]).toMatchObject({ exists: true, entry: 'unreadable' });
    expect((await readFile(claudeFile(), 'utf8')).length).toBe(huge.length);
  });

  it('writes nothing when the file changed after the preview, or the preview is reused or old', async () => {
    await mkdir(claudeDir(), { recursive: true });
    await writeFile(claudeFile(), '{"mcpServers": {}}');
    const preview = await setup.preview('claude');
    const edited = '{"mcpServers": {"new": {"command": "n"}}}';
    await writeFile(claudeFile(), edited);
    const changed = await refusal(setup.apply(preview.id));
    expect(changed.code).toBe('mcp_client_setup_stale');
    expect(await readFile(claudeFile(), 'utf8')).toBe(edited);

    const fresh = await setup.preview('claude');
    await setup.apply(fresh.id);
    expect((await refusal(setup.apply(fresh.id))).code).toBe('mcp_client_setup_stale');

    const old = await setup.preview('claude');
    clock.advance(11 * 60_000);
    expect((await refusal(setup.apply(old.id))).code).toBe('mcp_client_setup_stale');
    expect(await backups(claudeDir())).toHaveLength(1);
  });

  it('refuses an app that is not installed, and says to copy the snippet', async () => {
    const err = await refusal(setup.preview('cursor'));
    expect(err.code).toBe('mcp_client_not_installed');
    expect(err.params).toEqual({ app: 'Cursor' });
    expect(err.message).toMatch(/copy the snippet/);
    await expect(lstat(path.join(home, '.cursor'))).rejects.toThrow();
  });

  it('writes through a symlinked config file, so the link stays a link', async () => {
    await mkdir(path.join(home, '.cursor'));
    const dotfiles = path.join(home, 'dotfiles');
    await mkdir(dotfiles);
    const real = path.join(dotfiles, 'cursor-mcp.json');
    await writeFile(real, '{"mcpServers": {"a": {"command": "a"}}}');
    await symlink(real, path.join(home, '.cursor', 'mcp.json'));
    const done = await setup.apply((await setup.preview('cursor')).id);
    expect((await lstat(path.join(home, '.cursor', 'mcp.json'))).isSymbolicLink()).toBe(true);
    expect(JSON.parse(await readFile(real, 'utf8'))).toEqual({
      mcpServers: { a: { command: 'a' }, 'advent-agent': ours },
    });
    expect(done.backupPath).toBe(`${real}.advent-backup-2025-01-31T12-03-04-005Z`);
  });

  it('without a resolved command, offers `advent-agent mcp` and says it is unresolved', async () => {
    const bare = new McpClientSetup({
      platform: { platform: 'linux', home, env: {} },
      clock,
      ids: seededIds(1),
    });
    const [claude] = await bare.list();
    expect(claude).toMatchObject({
      resolved: false,
      launch: { command: 'advent-agent', args: ['mcp'] },
    });
    expect(JSON.parse(claude!.snippet)).toEqual({
      mcpServers: { 'advent-agent': { command: 'advent-agent', args: ['mcp'] } },
    });
  });
});
