import { describe, expect, it } from 'vitest';
import {
  isSecretEnvName,
  isSecretHeaderName,
  parseServersJson,
} from '../../../app/services/mcp/config.js';
import { importSourcePath } from '../../../app/services/mcp/import-sources.js';
import { stripJsonc } from '../../../app/services/mcp/jsonc.js';

describe('reading the mcpServers format users already have', () => {
  it('keeps a value holding a credential in itself as a secret, and says when one stays in plain view', () => {
    const { servers } = parseServersJson(
      JSON.stringify({
        mcpServers: {
          db: {
            command: 'npx',
            args: ['-y', 'mcp-postgres'],
            env: { DATABASE_URL: 'postgresql://admin:Pg-S3cret@db/prod', PGHOST: 'db' },
          },
          brave: { command: 'npx', args: ['-y', 'brave-mcp', '--api-key', 'BSA-live-0123'] },
          inline: { command: 'tool', args: ['--token=abc123'] },
          remote: { url: 'https://mcp.example.com/sse?api_key=sk-url-secret' },
          plain: { command: 'npx', args: ['-y', 'server-time', '--verbose'] },
        },
      }),
    );
    const byName = Object.fromEntries(servers.map((s) => [s.name, s]));
    expect(byName.db!.secretEnv).toEqual(['DATABASE_URL']);
    const warned = (name: string) =>
      byName[name]!.notes.some((n) => /seems to hold a credential/.test(n));
    expect(['db', 'brave', 'inline', 'remote', 'plain'].map(warned)).toEqual([
      false,
      true,
      true,
      true,
      false,
    ]);
  });

  it("reads Claude Desktop's file: stdio entries with env, a remote one with headers", () => {
    const { servers, problems } = parseServersJson(
      JSON.stringify({
        mcpServers: {
          filesystem: {
            command: 'npx',
            args: ['-y', '@modelcontextprotocol/server-filesystem', '/Users/me/Desktop'],
          },
          github: {
            command: 'docker',
            args: ['run', '-i', '--rm', 'ghcr.io/github/github-mcp-server'],
            env: { GITHUB_PERSONAL_ACCESS_TOKEN: 'ghp_x', GITHUB_HOST: 'github.com' },
          },
          linear: { url: 'https://mcp.linear.app/sse', type: 'sse' },
          off: { command: 'uvx', args: ['mcp-server-time'], disabled: true },
        },
      }),
    );
    expect(problems).toEqual([]);
    expect(servers.map((s) => [s.name, s.transport, s.fixedTransport, s.disabled])).toEqual([
      ['filesystem', 'stdio', false, false],
      ['github', 'stdio', false, false],
      ['linear', 'sse', true, false],
      ['off', 'stdio', false, true],
    ]);
    expect(servers[1]).toMatchObject({
      env: { GITHUB_PERSONAL_ACCESS_TOKEN: 'ghp_x', GITHUB_HOST: 'github.com' },
      secretEnv: ['GITHUB_PERSONAL_ACCESS_TOKEN'],
    });
  });

  it("reads VS Code's mcp.json (servers, type, JSONC comments and trailing commas)", () => {
    const { servers, problems } = parseServersJson(`{
      // servers for this workspace
      "inputs": [{ "type": "promptString", "id": "key", "password": true }],
      "servers": {
        "fetch": { "type": "stdio", "command": "uvx", "args": ["mcp-server-fetch",], },
        "remote": {
          "type": "http",
          "url": "https://example.com/mcp",
          "headers": { "Authorization": "Bearer \${input:key}" }, /* a secret */
        },
      },
    }`);
    expect(problems).toEqual([]);
    expect(servers.map((s) => [s.name, s.transport, s.fixedTransport])).toEqual([
      ['fetch', 'stdio', false],
      ['remote', 'http', true],
    ]);
    expect(servers[0]!.args).toEqual(['mcp-server-fetch']);
    expect(servers[1]!.secretHeaders).toEqual(['Authorization']);
    expect(servers[1]!.notes.join(' ')).toMatch(/placeholders/);
  });

  it('reads pasted snippets: a bare map, one entry, or "name": {…} without braces', () => {
    expect(
      parseServersJson('{"time": {"command": "uvx", "args": ["mcp-server-time"]}}').servers[0]!
        .name,
    ).toBe('time');
    expect(
      parseServersJson('{"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]}')
        .servers[0]!.name,
    ).toBe('server-memory');
    expect(
      parseServersJson(
        '"memory": { "command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"] },',
      ).servers[0]!.name,
    ).toBe('memory');
    expect(() => parseServersJson('not json at all')).toThrow(/this is not JSON/);
  });

  it('reports each bad entry with why and keeps the good ones', () => {
    const { servers, problems } = parseServersJson(
      JSON.stringify({
        mcpServers: {
          good: { command: 'node', args: ['server.js'] },
          both: { command: 'x', url: 'https://x' },
          neither: { args: [] },
          ftp: { url: 'ftp://example.com' },
          weird: { url: 'https://x', type: 'websocket' },
          badargs: { command: 'x', args: 'a b' },
        },
      }),
    );
    expect(servers.map((s) => s.name)).toEqual(['good']);
    expect(problems).toEqual([
      '"both": it has both "command" and "url"; keep one',
      '"neither": it has neither "command" (a program to run) nor "url" (a server address)',
      '"ftp": "url" must be an http:// or https:// address',
      '"weird": unknown "type": "websocket" (expected stdio, http or sse)',
      '"badargs": "args" is not a list',
    ]);
  });

  it('marks credentials as secrets by their names', () => {
    for (const name of [
      'API_KEY',
      'GITHUB_TOKEN',
      'DB_PASSWORD',
      'OPENAI_API_KEY',
      'CLIENT_SECRET',
      'AUTH',
    ])
      expect(isSecretEnvName(name)).toBe(true);
    for (const name of ['PATH', 'LOG_LEVEL', 'REGION', 'HOME', 'KEYBOARD_LAYOUT'])
      expect(isSecretEnvName(name)).toBe(false);
    expect(isSecretHeaderName('Authorization')).toBe(true);
    expect(isSecretHeaderName('X-API-Key')).toBe(true);
    expect(isSecretHeaderName('Accept')).toBe(false);
  });

  it('knows where Claude Desktop, Cursor and VS Code keep their files on each platform', () => {
    const mac = { platform: 'darwin' as const, home: '/Users/me', env: {} };
    const win = {
      platform: 'win32' as const,
      home: 'C:\\Users\\me',
      env: { APPDATA: 'C:\\Users\\me\\AppData\\Roaming' },
    };
    const linux = { platform: 'linux' as const, home: '/home/me', env: {} };
    expect(importSourcePath('claude', mac)).toBe(
      '/Users/me/Library/Application Support/Claude/claude_desktop_config.json',
    );
    expect(importSourcePath('claude', win)).toBe(
      'C:\\Users\\me\\AppData\\Roaming\\Claude\\claude_desktop_config.json',
    );
    expect(importSourcePath('claude', linux)).toBe(
      '/home/me/.config/Claude/claude_desktop_config.json',
    );
    expect(importSourcePath('cursor', linux)).toBe('/home/me/.cursor/mcp.json');
    expect(importSourcePath('vscode', mac)).toBe(
      '/Users/me/Library/Application Support/Code/User/mcp.json',
    );
    expect(importSourcePath('vscode', win)).toBe(
      'C:\\Users\\me\\AppData\\Roaming\\Code\\User\\mcp.json',
    );
  });

  it('strips comments and trailing commas outside strings only', () => {
    expect(
      JSON.parse(stripJsonc('{"a": "// not a comment", /* c */ "b": [1, 2,], // end\n}')),
    ).toEqual({
      a: '// not a comment',
      b: [1, 2],
    });
    expect(JSON.parse(stripJsonc('{"a": "x\\",/*y*/"}'))).toEqual({ a: 'x",/*y*/' });
  });
});
