/**
 * How the desktop app starts stdio MCP servers. The packaged app's fuses turn `runAsNode` off, so
 * `spawn(process.execPath, ['server.js'])` would start a second Advent Agent (which then meets the
 * single-instance lock) instead of Node. A server that is a JavaScript file run by `node` (or by
 * our own executable) is therefore forked as an Electron utility process: a Node environment
 * without the fuse problem. Utility processes have no stdin, so a small shim inside it
 * (mcp-stdio-shim.ts) turns our messages into its `process.stdin`. Everything else (npx, uvx,
 * docker, a binary) is spawned as usual, with the login shell's PATH: an app started from Finder
 * or a desktop launcher has a minimal one, where `npx` is not found.
 */
import path from 'node:path';
import { PassThrough, type Readable, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { utilityProcess } from 'electron';
import type { AgentMcpOptions } from '../../app/agent.js';
import {
  createSpawnLauncher,
  type McpExit,
  McpLaunchError,
  type McpLauncher,
  type McpLaunchSpec,
  type McpProcess,
} from '../../app/services/mcp/launcher.js';
import { loginSearchPath } from '../../app/services/mcp/login-path.js';

/** Where the shim is told which script to run; what follows it is the script's own argv. */
export const SCRIPT_MARK = '--advent-mcp-script';

export interface ElectronLauncherOptions {
  /** The compiled shim (defaults to the one next to this file). */
  shimPath?: string;
  /** This app's executable (a server configured to run it means "run as Node"). */
  execPath?: string;
  /** Used for everything that is not a JavaScript file run by Node. */
  fallback?: McpLauncher;
}

/** `node [node flags] script.js args…` → the flags, the script and its args; else undefined. */
export function bundledScript(
  spec: Pick<McpLaunchSpec, 'command' | 'args' | 'cwd'>,
  execPath: string,
): { execArgv: string[]; script: string; args: string[] } | undefined {
  // Either separator: a Windows path is still recognised when this runs elsewhere.
  const base = (spec.command.split(/[\\/]/).pop() ?? '').toLowerCase();
  const isNode = base === 'node' || base === 'node.exe' || spec.command === execPath;
  if (!isNode) return undefined;
  const at = spec.args.findIndex((a) => !a.startsWith('-'));
  if (at < 0) return undefined;
  const script = spec.args[at]!;
  if (!/\.(c|m)?js$/i.test(script)) return undefined;
  return {
    execArgv: spec.args.slice(0, at),
    script: path.resolve(spec.cwd ?? process.cwd(), script),
    args: spec.args.slice(at + 1),
  };
}

export function createElectronLauncher(options: ElectronLauncherOptions = {}): McpLauncher {
  const shimPath =
    options.shimPath ?? fileURLToPath(new URL('./mcp-stdio-shim.js', import.meta.url));
  const execPath = options.execPath ?? process.execPath;
  const fallback = options.fallback ?? createSpawnLauncher();
  return {
    async launch(spec) {
      const bundled = bundledScript(spec, execPath);
      if (!bundled) return fallback.launch(spec);
      const child = utilityProcess.fork(shimPath, [SCRIPT_MARK, bundled.script, ...bundled.args], {
        env: spec.env,
        cwd: spec.cwd,
        execArgv: bundled.execArgv,
        stdio: ['ignore', 'pipe', 'pipe'],
        serviceName: `MCP server ${spec.serverName}`.slice(0, 100),
      });
      const exited = new Promise<McpExit>((resolve) =>
        child.once('exit', (code: number) => resolve({ code, signal: null })),
      );
      await new Promise<void>((resolve, reject) => {
        child.once('spawn', () => resolve());
        void exited.then(({ code }) =>
          reject(
            new McpLaunchError(
              `'${bundled.script}' could not be started as a utility process (exit code ${code})`,
            ),
          ),
        );
      });
      // Bytes sent as strings: structured clone of a Buffer is a plain Uint8Array on the far side.
      const stdin = new Writable({
        write(chunk: Buffer, _encoding, done) {
          child.postMessage({ stdin: chunk.toString('utf8') });
          done();
        },
        final(done) {
          child.postMessage({ end: true });
          done();
        },
      });
      let killing: Promise<void> | undefined;
      const proc: McpProcess = {
        pid: child.pid,
        stdin,
        // Electron types them as NodeJS.ReadableStream; they are Node Readables.
        stdout: (child.stdout ?? new PassThrough()) as Readable,
        stderr: child.stderr as Readable | null,
        exited,
        kill(graceMs = 2000) {
          killing ??= (async () => {
            stdin.end();
            const gone = await Promise.race([
              exited.then(() => true),
              new Promise<boolean>((r) => setTimeout(() => r(false), graceMs).unref()),
            ]);
            if (!gone) child.kill();
            await exited;
          })();
          return killing;
        },
      };
      return proc;
    },
  };
}

/** The MCP options the desktop host gives the agent. */
export function electronMcpOptions(): AgentMcpOptions {
  return { launcher: createElectronLauncher(), searchPath: () => loginSearchPath() };
}
