/** Electron's entry point (package.json "main": dist/main/electron/main.js). */
import { app } from 'electron';
import { failStart, startHost } from './host.js';
import { mcpArgs, runMcp } from './mcp-mode.js';
import { hostPaths } from './paths.js';

// `AdventAgent mcp`: a stdio MCP server for another app, decided before the single-instance lock
// and any window (a running app must not be raised, nor this launch quit by the lock).
const mcp = mcpArgs(process.argv, Boolean(process.defaultApp));
if (mcp) {
  runMcp(mcp).then(
    (code) => app.exit(code),
    (err: unknown) => {
      process.stderr.write(`AdventAgent mcp: ${(err as Error).message}\n`);
      app.exit(1);
    },
  );
} else {
  startHost(hostPaths(app.isPackaged)).catch(failStart);
}
