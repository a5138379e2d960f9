/**
 * How an MCP client app starts this agent's stdio server from the terminal host: this Node and
 * the package's own `bin/advent-agent.js`, both by absolute path (an app started from a desktop
 * launcher has a minimal PATH, where `advent-agent` or `node` may not be found), with the data
 * folder when it is not the default one.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CliIo } from './io.js';

export interface McpLaunch {
  command: string;
  args: string[];
}

/** The package folder, found from this file whether it runs from dist/ or from source. */
function packageDir(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(path.join(dir, 'package.json'))) return dir;
    const up = path.dirname(dir);
    if (up === dir) throw new Error('cannot find the advent-agent package folder');
    dir = up;
  }
}

export function headlessMcpLaunch(
  dataDir: string,
  defaultDataDir: string,
  execPath: string = process.execPath,
  bin: string = path.join(packageDir(), 'bin', 'advent-agent.js'),
): McpLaunch {
  const args = [bin, 'mcp'];
  if (path.resolve(dataDir) !== path.resolve(defaultDataDir))
    args.push('--data-dir', path.resolve(dataDir));
  return { command: execPath, args };
}

/**
 * The launch for this data folder as the terminal host tells apps (Settings in `ui`, and
 * `mcp-setup`); undefined when this package's folder cannot be found, so the core says the
 * command is unresolved instead of failing to open.
 */
export function resolvedMcpLaunch(
  dataDir: string,
  io: Pick<CliIo, 'dataDir' | 'mcpLaunch'>,
): McpLaunch | undefined {
  try {
    return (io.mcpLaunch ?? ((dir) => headlessMcpLaunch(dir, io.dataDir())))(dataDir);
  } catch {
    return undefined;
  }
}
