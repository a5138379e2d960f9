/**
 * `advent-agent mcp`: the stdio MCP server an app such as Claude Desktop or Cursor launches
 * (issue 12). When an agent already holds the data folder (the desktop app, `ui`, `run`, another
 * `mcp`, even one still starting), the bytes are relayed to it through the data folder's socket,
 * so its window asks and its audit chain records. Otherwise this runs its own agent, without
 * voice connections, and serves the client itself. Only MCP goes to stdout; everything else to
 * stderr.
 */
import path from 'node:path';
import { relay, relayOrOpen } from '../../app/mcp-serve/relay.js';
import type { McpArgs } from './args.js';
import { CliCore } from './cli-core.js';
import type { CliIo } from './io.js';
import { oneLine } from './terminal-text.js';

export async function mcpCommand(args: McpArgs, io: CliIo): Promise<number> {
  const dataDir = path.resolve(args.dataDir ?? io.dataDir());
  const say = (line: string): boolean => io.stderr.write(`advent-agent mcp: ${oneLine(line)}\n`);

  let start: Awaited<ReturnType<typeof relayOrOpen<CliCore>>>;
  try {
    start = await relayOrOpen(dataDir, () =>
      CliCore.open(
        {
          servers: [],
          files: [],
          mcpConfigs: [],
          policies: {},
          disabled: [],
          dataDir,
          ...(args.callsPerSecond !== undefined && { callsPerSecond: args.callsPerSecond }),
        },
        io,
        { host: 'terminal', autoConnect: false },
      ),
    );
  } catch (err) {
    say((err as Error).message);
    return 1;
  }
  if ('socket' in start) {
    say(`relaying to the Advent Agent that holds ${dataDir}`);
    if (args.callsPerSecond !== undefined)
      say('--calls-per-second is not used: calls are paced as that agent paces them');
    const by = await relay(start.socket, io.stdin, io.stdout);
    if (by === 'agent')
      say(
        `warn: the Advent Agent that holds ${dataDir} ended this session (it quit, or closed the connection)`,
      );
    releaseInput(io.stdin);
    return 0;
  }

  const core = start.own;
  const { api } = core;
  const notices = api.events.on('notice', (n) => say(`${n.level}: ${n.message}`));
  for (const { message } of api.agent.startupNotices) say(`warn: ${message}`);

  let signalled!: () => void;
  const signal = new Promise<void>((resolve) => (signalled = resolve));
  const unsubscribe = io.onSignal(() => signalled());
  try {
    // The client closing stdin ends the session, as a signal does.
    await Promise.race([api.mcpServe.serveStdio(io.stdin, io.stdout), signal]);
  } finally {
    unsubscribe();
    // However the session ended, stdin is let go: still open, it would hold the process alive
    // after its session (the client would see a server that neither answers nor exits).
    releaseInput(io.stdin);
    notices();
    await core.close();
  }
  return 0;
}

/** Stop reading stdin and close it, so it holds the process no longer. */
function releaseInput(stdin: CliIo['stdin']): void {
  stdin.pause();
  (stdin as Partial<NodeJS.ReadStream>).destroy?.();
}
