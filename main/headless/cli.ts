/** Entry of the `advent-agent` command. `main` is pure over its io, so tests run it in-process. */
import { readFileSync } from 'node:fs';
import { systemDataDir, systemFilesRoot } from '../../app/settings/paths.js';
import { DIALECTS } from '../../app/wire/dialects.js';
import { HELP_TOPICS, parseCliArgs, usage } from './args.js';
import { auditCommand } from './audit.js';
import { mcpCommand } from './mcp.js';
import { mcpSetupCommand } from './mcp-setup.js';
import type { CliIo } from './io.js';
import { runCommand } from './run.js';
import { uiCommand } from './ui.js';
import { oneLine } from './terminal-text.js';

export async function main(argv: readonly string[], io: CliIo): Promise<number> {
  const kinds = (io.dialects ?? DIALECTS).map((d) => d.profile);
  const parsed = parseCliArgs(argv, kinds);
  if (!parsed.ok) {
    // The usage of the command the line was for, not every command's (a hundred lines).
    const topic = HELP_TOPICS.find((t) => t === argv[0]);
    const more = topic
      ? usage(kinds, topic)
      : 'Run `advent-agent --help` for the commands, or `advent-agent COMMAND --help` for one.\n';
    io.stderr.write(`advent-agent: ${parsed.message}\n\n${more}`);
    return 2;
  }
  const { args } = parsed;
  try {
    switch (args.command) {
      case 'help':
        io.stdout.write(usage(kinds, args.topic));
        return 0;
      case 'version':
        io.stdout.write(`${io.version}\n`);
        return 0;
      case 'run':
        return await runCommand(args, io);
      case 'ui':
        return await uiCommand(args, io);
      case 'audit':
        return await auditCommand(args, io);
      case 'mcp':
        return await mcpCommand(args, io);
      case 'mcp-setup':
        return await mcpSetupCommand(args, io);
    }
  } catch (err) {
    io.stderr.write(`advent-agent: ${oneLine((err as Error).message)}\n`);
    return 1;
  }
}

/** The real process: stdio, signals, platform folders. */
export function processIo(): CliIo {
  const pkg = JSON.parse(
    readFileSync(new URL('../../../package.json', import.meta.url), 'utf8'),
  ) as { version: string };
  return {
    stdin: process.stdin,
    stdout: process.stdout,
    stderr: process.stderr,
    onSignal(handler) {
      const on = (): void => handler();
      process.on('SIGINT', on);
      process.on('SIGTERM', on);
      return () => {
        process.off('SIGINT', on);
        process.off('SIGTERM', on);
      };
    },
    dataDir: systemDataDir,
    filesRoot: systemFilesRoot,
    version: pkg.version,
  };
}
