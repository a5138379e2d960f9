/**
 * The desktop app's launcher for stdio MCP servers, with Electron's utilityProcess mocked by a
 * real Node child (IPC standing in for the parent port): a JavaScript server run by `node` or by
 * the app's own executable goes through the shim in a utility process and works; anything else
 * is spawned.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { EventEmitter } from 'node:events';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { McpLauncher } from '../../../app/services/mcp/launcher.js';
import {
  FIXTURE,
  type McpAgent,
  importConfig,
  openMcpAgent,
  ready,
  serverState,
} from '../../services/mcp/helpers.js';
import { until } from '../../helpers/wait.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const PORT_PRELOAD = path.resolve(here, '../../fixtures/mcp-utility-port.mjs');
const SHIM = path.resolve(here, '../../../main/electron/mcp-stdio-shim.ts');
const APP = '/Applications/Advent Agent.app/Contents/MacOS/Advent Agent';

const forks: { modulePath: string; args: string[]; options: Record<string, unknown> }[] = [];
const children: ChildProcess[] = [];

vi.mock('electron', () => ({
  utilityProcess: {
    fork(modulePath: string, args: string[], options: Record<string, unknown>) {
      forks.push({ modulePath, args, options });
      const child = fork(modulePath, args, {
        // tsx runs the shim from source; the preload is the parent port.
        execArgv: [
          '--import',
          'tsx',
          '--import',
          PORT_PRELOAD,
          ...((options.execArgv as string[]) ?? []),
        ],
        env: { ...(options.env as Record<string, string>) },
        cwd: options.cwd as string | undefined,
        stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
      });
      children.push(child);
      const up = Object.assign(new EventEmitter(), {
        pid: child.pid,
        stdout: child.stdout,
        stderr: child.stderr,
        postMessage: (m: unknown) => child.connected && child.send(m as object),
        kill: () => child.kill(),
      });
      child.once('spawn', () => up.emit('spawn'));
      child.once('exit', (code) => up.emit('exit', code ?? 1));
      return up;
    },
  },
}));

const { bundledScript, createElectronLauncher } =
  await import('../../../main/electron/mcp-launcher.js');

let h: McpAgent | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
  forks.length = 0;
  for (const c of children.splice(0)) c.kill('SIGKILL');
});

describe('the desktop launcher for stdio MCP servers', () => {
  it('recognises a JavaScript server run by node or by the app itself', () => {
    expect(
      bundledScript({ command: 'node', args: ['--no-warnings', 'srv.mjs', '-x'], cwd: '/w' }, APP),
    ).toEqual({
      execArgv: ['--no-warnings'],
      script: '/w/srv.mjs',
      args: ['-x'],
    });
    expect(bundledScript({ command: APP, args: ['/a/index.js'] }, APP)?.script).toBe('/a/index.js');
    expect(
      bundledScript({ command: 'C:\\nodejs\\node.exe', args: ['s.cjs'], cwd: '/w' }, APP)?.script,
    ).toBe('/w/s.cjs');
    expect(bundledScript({ command: 'npx', args: ['-y', 'pkg'] }, APP)).toBeUndefined();
    expect(bundledScript({ command: 'node', args: ['-e', 'code'] }, APP)).toBeUndefined();
    expect(bundledScript({ command: 'uvx', args: ['mcp-server-time'] }, APP)).toBeUndefined();
  });

  it("runs the app's own executable + a server script as a utility process, never as a second app", async () => {
    const launcher = createElectronLauncher({ shimPath: SHIM, execPath: APP });
    h = await openMcpAgent({ mcp: { launcher } });
    const [view] = await importConfig(h.agent, h.dir, {
      fixture: { command: APP, args: [FIXTURE, '--name', 'bundled'] },
    });
    const ok = await serverState(h.agent, 'fixture', ready, 30_000);
    expect(ok.serverInfo?.name).toBe('bundled');
    expect(forks).toHaveLength(1);
    expect(forks[0]).toMatchObject({
      modulePath: SHIM,
      args: ['--advent-mcp-script', FIXTURE, '--name', 'bundled'],
      options: { stdio: ['ignore', 'pipe', 'pipe'], serviceName: 'MCP server fixture' },
    });
    expect(await h.agent.runService('fixture_add', { a: 1, b: 2 })).toMatchObject({ data: '3' });
    // Switching it off ends the utility process.
    await h.agent.mcp.setEnabled(view!.id, false);
    await until(() => children[0]!.exitCode !== null || children[0]!.signalCode !== null, 'exit');
  });

  it('spawns everything else with the fallback launcher', async () => {
    const launched: string[] = [];
    const fallback: McpLauncher = {
      launch: async (spec) => {
        launched.push(spec.command);
        throw new Error('not here');
      },
    };
    const launcher = createElectronLauncher({ shimPath: SHIM, execPath: APP, fallback });
    await expect(
      launcher.launch({ command: 'npx', args: ['-y', 'x'], env: {}, serverName: 'n' }),
    ).rejects.toThrow('not here');
    expect(launched).toEqual(['npx']);
    expect(forks).toEqual([]);
  });
});
