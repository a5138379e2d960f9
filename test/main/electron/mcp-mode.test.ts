import { describe, expect, it, vi } from 'vitest';

vi.mock('electron', () => import('./fake-electron.js').then((m) => m.fakeElectron()));
vi.mock('electron-log/main', () => import('./fake-electron.js').then((m) => m.fakeElectronLog()));

const { electronMcpLaunch, mcpArgs } = await import('../../../main/electron/mcp-mode.js');
const EXE = '/Applications/Advent Agent.app/Contents/MacOS/Advent Agent';

describe('AdventAgent mcp: the launch and its command line', () => {
  it('recognises `mcp` as the first word after the executable (packaged) or the app path (electron .)', () => {
    expect(mcpArgs([EXE, 'mcp'], false)).toEqual([]);
    expect(mcpArgs([EXE, 'mcp', '--data-dir', '/d'], false)).toEqual(['--data-dir', '/d']);
    expect(mcpArgs([EXE, '--no-sandbox', 'mcp'], false)).toEqual([]);
    expect(mcpArgs(['/dev/electron', '.', 'mcp'], true)).toEqual([]);
    // A normal start, and a file or URL handed to the app, are not MCP launches.
    expect(mcpArgs([EXE], false)).toBeUndefined();
    expect(mcpArgs(['/dev/electron', '.'], true)).toBeUndefined();
    expect(mcpArgs([EXE, 'notes.txt', 'mcp'], false)).toBeUndefined();
  });

  it('tells MCP apps to start the executable itself with `mcp` (packaged), or electron with the app path', () => {
    expect(electronMcpLaunch(true, EXE)).toEqual({ command: EXE, args: ['mcp'] });
    expect(electronMcpLaunch(false, '/dev/electron', () => '/src/advent-agent')).toEqual({
      command: '/dev/electron',
      args: ['/src/advent-agent', 'mcp'],
    });
  });
});
