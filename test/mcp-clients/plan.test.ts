import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { clientConfigPath } from '../../app/mcp-clients/apps.js';
import { lineDiff } from '../../app/mcp-clients/diff.js';
import { entryState, planSetup, snippetFor } from '../../app/mcp-clients/plan.js';
import { parseJsonc } from '../../app/services/mcp/jsonc.js';

const launch = { command: '/opt/Advent Agent/advent-agent', args: ['mcp'] };
const ours = { command: '/opt/Advent Agent/advent-agent', args: ['mcp'] };

/** The text with the plan applied; fails the test when the plan refused. */
function planned(app: 'claude' | 'cursor' | 'vscode', text: string | undefined): string {
  const plan = planSetup(app, text, launch);
  if (!plan.ok) throw new Error(`refused: ${plan.reason}`);
  return plan.text;
}

describe('snippets', () => {
  it('Claude and Cursor get mcpServers with the resolved command; VS Code gets servers with type stdio', () => {
    expect(JSON.parse(snippetFor('claude', launch))).toEqual({
      mcpServers: { 'advent-agent': ours },
    });
    expect(JSON.parse(snippetFor('cursor', launch))).toEqual({
      mcpServers: { 'advent-agent': ours },
    });
    expect(JSON.parse(snippetFor('vscode', launch))).toEqual({
      servers: { 'advent-agent': { type: 'stdio', ...ours } },
    });
    // A Windows path is escaped as JSON needs, so pasting it works.
    const win = snippetFor('claude', {
      command: 'C:\\Program Files\\Advent\\a.exe',
      args: ['mcp'],
    });
    expect(win).toContain('"C:\\\\Program Files\\\\Advent\\\\a.exe"');
  });

  it('each app file is where that app keeps it on each platform', () => {
    const mac = { platform: 'darwin' as const, home: '/Users/me', env: {} };
    const win = {
      platform: 'win32' as const,
      home: 'C:\\Users\\me',
      env: { APPDATA: 'C:\\Users\\me\\AppData\\Roaming' },
    };
    const linux = { platform: 'linux' as const, home: '/home/me', env: {} };
    expect(clientConfigPath('claude', mac)).toBe(
      '/Users/me/Library/Application Support/Claude/claude_desktop_config.json',
    );
    expect(clientConfigPath('claude', linux)).toBe(
      '/home/me/.config/Claude/claude_desktop_config.json',
    );
    expect(clientConfigPath('cursor', win)).toBe('C:\\Users\\me\\.cursor\\mcp.json');
    expect(clientConfigPath('vscode', linux)).toBe('/home/me/.config/Code/User/mcp.json');
    expect(clientConfigPath('vscode', { ...linux, env: { XDG_CONFIG_HOME: '/home/me/cfg' } })).toBe(
      '/home/me/cfg/Code/User/mcp.json',
    );
  });
});

describe('planSetup', () => {
  it('adds our entry after the others and keeps every other byte of a Claude file', () => {
    const before = `{
  "mcpServers": {
    "files": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-filesystem", "/home/me"],
      "env": { "B": "2", "A": "1" }
    }
  },
  "globalShortcut": "Ctrl+Space"
}
`;
    const plan = planSetup('claude', before, launch);
    expect(plan.ok && plan.change).toBe('add');
    const after = planned('claude', before);
    expect(after).toBe(`{
  "mcpServers": {
    "files": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-filesystem", "/home/me"],
      "env": { "B": "2", "A": "1" }
    },
    "advent-agent": {
      "command": "/opt/Advent Agent/advent-agent",
      "args": [
        "mcp"
      ]
    }
  },
  "globalShortcut": "Ctrl+Space"
}
`);
    // Key order as it was, ours last.
    const parsed = JSON.parse(after) as { mcpServers: Record<string, unknown> };
    expect(Object.keys(parsed)).toEqual(['mcpServers', 'globalShortcut']);
    expect(Object.keys(parsed.mcpServers)).toEqual(['files', 'advent-agent']);
  });

  it('shows the change as added lines with a little context and the rest folded', () => {
    const before = JSON.stringify(
      { mcpServers: Object.fromEntries([...'abcdefgh'].map((k) => [k, { command: k }])) },
      null,
      2,
    );
    const plan = planSetup('claude', before, launch);
    if (!plan.ok) throw new Error(plan.reason);
    // Adding deletes nothing; the unchanged head is folded to a count and three lines of context.
    expect(plan.diff[0]).toEqual({ op: 'skip', count: 22 });
    expect(plan.diff.filter((d) => d.op === 'del')).toEqual([]);
    expect(plan.diff.slice(1, 4).map((d) => d.op)).toEqual(['same', 'same', 'same']);
    const added = plan.diff.filter((d) => d.op === 'add').map((d) => 'text' in d && d.text);
    expect(added).toEqual([
      '    },',
      '    "advent-agent": {',
      '      "command": "/opt/Advent Agent/advent-agent",',
      '      "args": [',
      '        "mcp"',
      '      ]',
    ]);
  });

  it('keeps the comments and trailing commas of a VS Code mcp.json', () => {
    const before = `// Servers for every workspace
{
\t"servers": {
\t\t// my notes
\t\t"memory": {
\t\t\t"type": "stdio",
\t\t\t"command": "npx", // pinned below
\t\t\t"args": ["-y", "@modelcontextprotocol/server-memory@1"],
\t\t},
\t\t/* "old": { "command": "x" }, */
\t},
\t"inputs": [],
}
`;
    const after = planned('vscode', before);
    expect(after).toContain('// Servers for every workspace');
    expect(after).toContain('"command": "npx", // pinned below');
    expect(after).toContain('/* "old": { "command": "x" }, */');
    // Tabs as the file has them, and a trailing comma like its other entries.
    expect(after).toContain(
      '\t\t"advent-agent": {\n\t\t\t"type": "stdio",\n\t\t\t"command": "/opt/Advent Agent/advent-agent",',
    );
    expect(after).toMatch(/\n\t\t\},\n\t\},\n\t"inputs"/);
    expect(parseJsonc(after)).toEqual({
      servers: {
        memory: {
          type: 'stdio',
          command: 'npx',
          args: ['-y', '@modelcontextprotocol/server-memory@1'],
        },
        'advent-agent': { type: 'stdio', ...ours },
      },
      inputs: [],
    });
  });

  it('adds the servers object when the file has none, keeping CRLF line ends', () => {
    const before = '{\r\n    "theme": "dark"\r\n}\r\n';
    const after = planned('cursor', before);
    expect(after).toBe(
      '{\r\n    "theme": "dark",\r\n    "mcpServers": {\r\n        "advent-agent": {\r\n            "command": "/opt/Advent Agent/advent-agent",\r\n            "args": [\r\n                "mcp"\r\n            ]\r\n        }\r\n    }\r\n}\r\n',
    );
  });

  it('fills an empty file or an empty object, and joins a one-line file on its line', () => {
    expect(JSON.parse(planned('claude', undefined))).toEqual({
      mcpServers: { 'advent-agent': ours },
    });
    expect(JSON.parse(planned('claude', '  \n'))).toEqual({
      mcpServers: { 'advent-agent': ours },
    });
    expect(JSON.parse(planned('claude', '{}'))).toEqual({ mcpServers: { 'advent-agent': ours } });
    expect(JSON.parse(planned('claude', '{"mcpServers": {}}'))).toEqual({
      mcpServers: { 'advent-agent': ours },
    });
    const oneLine = planned('cursor', '{"mcpServers":{"a":{"command":"a"}}}');
    expect(oneLine.split('\n')).toHaveLength(1);
    expect(JSON.parse(oneLine)).toEqual({
      mcpServers: { a: { command: 'a' }, 'advent-agent': ours },
    });
  });

  it('changes nothing when our entry is already there as it should be, in any key order', () => {
    const before = JSON.stringify(
      { mcpServers: { 'advent-agent': { args: ['mcp'], command: ours.command } } },
      null,
      2,
    );
    expect(planSetup('claude', before, launch)).toEqual({
      ok: true,
      text: before,
      change: 'none',
      diff: [],
    });
    expect(entryState('claude', before, launch)).toBe('current');
  });

  it('replaces only the value of an outdated entry of ours', () => {
    const before = `{
  "mcpServers": {
    "a": { "command": "a" },
    "advent-agent": { "command": "/old/path/advent-agent", "args": ["mcp"] },
    "z": { "command": "z" }
  }
}`;
    expect(entryState('claude', before, launch)).toBe('different');
    const plan = planSetup('claude', before, launch);
    if (!plan.ok) throw new Error(plan.reason);
    expect(plan.change).toBe('replace');
    const after = plan.text;
    expect(Object.keys((JSON.parse(after) as { mcpServers: object }).mcpServers)).toEqual([
      'a',
      'advent-agent',
      'z',
    ]);
    expect(after).toContain('    "a": { "command": "a" },\n    "advent-agent": {\n');
    expect(after).toContain('    },\n    "z": { "command": "z" }\n  }\n}');
    expect(plan.diff.filter((d) => d.op === 'del')).toEqual([
      {
        op: 'del',
        text: '    "advent-agent": { "command": "/old/path/advent-agent", "args": ["mcp"] },',
      },
    ]);
  });

  it('refuses a file that is not JSON, a Claude file with comments, or servers that are not an object', () => {
    const broken = planSetup('claude', '{"mcpServers": {"a": ', launch);
    expect(broken.ok).toBe(false);
    expect(!broken.ok && broken.reason).toMatch(/not valid JSON/);
    expect(entryState('claude', '{"mcpServers": {"a": ', launch)).toBe('unreadable');
    // Claude Desktop reads strict JSON: a comment there is the user's error to see, not ours to keep.
    expect(planSetup('claude', '// mine\n{}', launch).ok).toBe(false);
    expect(planSetup('vscode', '// mine\n{}', launch).ok).toBe(true);
    const notObject = planSetup('cursor', '{"mcpServers": []}', launch);
    expect(!notObject.ok && notObject.reason).toMatch(/"mcpServers" is not an object/);
    const array = planSetup('cursor', '[]', launch);
    expect(!array.ok && array.reason).toMatch(/top level is not a JSON object/);
  });

  it('any JSON object file, however indented, gets our entry and keeps everything else', () => {
    const name = fc.string({ minLength: 1, maxLength: 8 }).filter((s) => s !== 'advent-agent');
    const leaf = fc.oneof(
      fc.string({ maxLength: 10 }),
      fc.integer(),
      fc.boolean(),
      fc.constant(null),
    );
    const value = fc.oneof(
      leaf,
      fc.array(leaf, { maxLength: 3 }),
      fc.dictionary(name, leaf, { maxKeys: 3 }),
    );
    const servers = fc.dictionary(name, fc.dictionary(name, value, { maxKeys: 3 }), { maxKeys: 4 });
    fc.assert(
      fc.property(
        fc.dictionary(name, value, { maxKeys: 4 }),
        fc.option(servers, { nil: undefined }),
        fc.constantFrom(0, 2, 4, '\t'),
        fc.constantFrom('claude', 'vscode'),
        (top, list, indent, app) => {
          const key = app === 'vscode' ? 'servers' : 'mcpServers';
          const doc: Record<string, unknown> = { ...top };
          if (list) doc[key] = list;
          const before = JSON.stringify(doc, null, indent);
          const after = planned(app, before);
          const expected = {
            ...doc,
            [key]: {
              ...(list ?? {}),
              'advent-agent': JSON.parse(
                JSON.stringify(app === 'vscode' ? { type: 'stdio', ...ours } : ours),
              ),
            },
          };
          expect(JSON.stringify(parseJsonc(after))).toBe(JSON.stringify(expected));
          // A second plan on the result changes nothing.
          const again = planSetup(app, after, launch);
          expect(again.ok && again.change).toBe('none');
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe('lineDiff', () => {
  it('marks removed and added lines and folds long unchanged runs', () => {
    const a = ['1', '2', '3', '4', '5', '6', '7', '8', '9', '10'].join('\n');
    const b = ['1', '2', '3', '4', 'five', '6', '7', '8', '9', '10'].join('\n');
    expect(lineDiff(a, b, 1)).toEqual([
      { op: 'skip', count: 3 },
      { op: 'same', text: '4' },
      { op: 'del', text: '5' },
      { op: 'add', text: 'five' },
      { op: 'same', text: '6' },
      { op: 'skip', count: 4 },
    ]);
    expect(lineDiff('', 'x\ny\n')).toEqual([
      { op: 'add', text: 'x' },
      { op: 'add', text: 'y' },
    ]);
  });
});
