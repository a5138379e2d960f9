/**
 * `advent-agent mcp-setup [APP]`: the Settings page's "Use these services in other apps" for a
 * terminal (issue 12). It builds the core's McpClientSetup directly, with the launch command
 * `advent-agent mcp` users get, and never opens an agent: it edits only the other apps' config
 * files, so it neither needs nor takes the data folder's lock, and works beside a running agent.
 * The safety is the core's: a preview first, the write only of what was previewed, a backup.
 */
import path from 'node:path';
import { systemClock } from '../../app/clock.js';
import { CommandRefusal } from '../../app/contract/errors.js';
import type {
  DiffLine,
  McpClientSetupPreview,
  McpClientView,
} from '../../app/contract/mcp-clients.js';
import { cryptoIds } from '../../app/ids.js';
import { CLIENT_APPS, platformInfo } from '../../app/mcp-clients/apps.js';
import { McpClientSetup } from '../../app/mcp-clients/setup.js';
import type { McpSetupArgs } from './args.js';
import type { CliIo } from './io.js';
import { resolvedMcpLaunch } from './mcp-launch.js';
import { maskSecrets } from '../../app/mcp-clients/mask.js';
import { oneLine } from './terminal-text.js';

/** An answer longer than this is not a yes, and no more of it is kept. */
const ANSWER_CHARS = 64;

/** The words Settings uses for our entry (renderer/i18n en `mcpClients.state`). */
const ENTRY_WORDS: Record<McpClientView['entry'], string> = {
  absent: 'Not added yet',
  current: 'Added',
  different: 'Added with a different command',
  unreadable: 'The file cannot be read as JSON',
};

export async function mcpSetupCommand(args: McpSetupArgs, io: CliIo): Promise<number> {
  const setup = new McpClientSetup({
    platform: platformInfo(io.mcpClientPlatform),
    launch: resolvedMcpLaunch(path.resolve(args.dataDir ?? io.dataDir()), io),
    clock: systemClock,
    ids: cryptoIds,
  });
  const print = (text = ''): void => void io.stdout.write(`${text}\n`);
  const refuse = (message: string): number => {
    io.stderr.write(`advent-agent mcp-setup: ${oneLine(maskSecrets(message).text)}\n`);
    return 1;
  };

  if (!args.app) {
    printList(await setup.list(), print);
    return 0;
  }
  const { app } = args;
  const name = CLIENT_APPS[app].name;

  let preview: McpClientSetupPreview;
  try {
    preview = await setup.preview(app);
  } catch (err) {
    if (!(err instanceof CommandRefusal)) throw err;
    const refused = refuse(err.message);
    // Our own line, printed as it is: the refusal's line escapes control characters (a newline
    // in it showed as \x0A).
    if (err.code === 'mcp_client_not_installed')
      io.stderr.write('`advent-agent mcp-setup` shows the snippet to copy.\n');
    return refused;
  }
  const file = oneLine(preview.configPath);
  if (preview.change === 'none') {
    print(`${file} already has this entry; nothing needs to change.`);
    return 0;
  }
  printPreview(preview, name, print);

  if (!args.yes) {
    if (io.stdin.isTTY !== true)
      return refuse(
        'nothing was written: stdin is not a terminal, so nobody can confirm the change. ' +
          `To write it, run: ${again(args)}`,
      );
    io.stdout.write('Write this change? [y/N] ');
    if (!(await yes(io.stdin))) {
      print('Nothing was written.');
      return 1;
    }
  }

  let result;
  try {
    result = await setup.apply(preview.id);
  } catch (err) {
    if (!(err instanceof CommandRefusal)) throw err;
    return refuse(err.message);
  }
  if (!result.changed) {
    print(`${name} already had this entry.`);
    return 0;
  }
  print(`${result.created ? 'Created' : 'Written'}: ${file}`);
  if (result.backupPath) print(`The file as it was is kept as ${oneLine(result.backupPath)}`);
  print(`Added to ${name}. Restart ${name} to load it.`);
  return 0;
}

/** The same command with `--yes`, to copy. */
function again(args: McpSetupArgs): string {
  const dataDir = args.dataDir === undefined ? '' : ` --data-dir ${JSON.stringify(args.dataDir)}`;
  return `advent-agent mcp-setup ${args.app}${dataDir} --yes`;
}

function printList(views: readonly McpClientView[], print: (text?: string) => void): void {
  print(
    'Claude Desktop, Cursor and VS Code can use the services offered here as one MCP server. ' +
      'Every call still goes through Advent Agent: it asks you first where it would, and it is ' +
      'recorded in its audit log.',
  );
  if (views.some((v) => !v.resolved))
    print(
      '\nWarning: where Advent Agent is installed could not be found, so the snippets name the ' +
        'command alone: the other app must find it on its PATH. Check it before you use them.',
    );
  for (const view of views) {
    const name = CLIENT_APPS[view.app].name;
    print();
    print(name);
    print(`  Installed:   ${view.installed ? 'yes' : 'no (not installed for this user)'}`);
    print(`  Config file: ${oneLine(view.configPath)}${view.exists ? '' : ' (not there yet)'}`);
    print(`  Entry:       ${ENTRY_WORDS[view.entry]}`);
    print('  Snippet:');
    for (const line of view.snippet.trimEnd().split('\n')) print(`    ${oneLine(line)}`);
    const next = nextStep(view);
    if (next) print(`  ${next}`);
  }
}

function nextStep(view: McpClientView): string | undefined {
  const command = `advent-agent mcp-setup ${view.app}`;
  if (!view.installed) return undefined;
  switch (view.entry) {
    case 'absent':
      return `To add it:   ${command}`;
    case 'different':
      return `To update it: ${command}`;
    default:
      return undefined;
  }
}

function printPreview(
  preview: McpClientSetupPreview,
  name: string,
  print: (text?: string) => void,
): void {
  const file = oneLine(preview.configPath);
  print(preview.change === 'replace' ? `Update in ${name}` : `Add to ${name}`);
  print(
    preview.creates
      ? `This creates ${file} with the content below.`
      : preview.change === 'replace'
        ? `This replaces Advent Agent's entry in ${file} (lines marked - go, lines marked + come). ` +
          'Every other entry stays as it is, and a copy of the file as it was is kept beside it.'
        : `This adds the lines marked + to ${file}. Every other entry stays as it is, and a copy ` +
          'of the file as it was is kept beside it.',
  );
  print();
  for (const line of preview.diff) print(diffLine(line));
  if (preview.masked)
    print(
      '\n(Values that look like credentials are shown as ***; the file keeps them as they are.)',
    );
  print();
}

/** One diff line for the terminal (credentials already masked by the core), controls escaped. */
function diffLine(line: DiffLine): string {
  if (line.op === 'skip') return `  … ${line.count} unchanged line${line.count === 1 ? '' : 's'}`;
  const mark = line.op === 'add' ? '+ ' : line.op === 'del' ? '- ' : '  ';
  return `${mark}${oneLine(line.text)}`;
}

/**
 * The answer to the question: true for y or yes. Anything else, a line longer than any answer,
 * or the input ending first, is no. Read by hand so a line without end is never held whole.
 */
function yes(stdin: NodeJS.ReadableStream): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    let text = '';
    const done = (): void => {
      stdin.off('data', onData);
      stdin.off('end', done);
      stdin.off('close', done);
      stdin.pause();
      resolve(text.length <= ANSWER_CHARS && /^\s*y(es)?\s*$/i.test(text));
    };
    const onData = (chunk: Buffer | string): void => {
      const piece = chunk.toString();
      const end = piece.indexOf('\n');
      text = (text + (end < 0 ? piece : piece.slice(0, end))).slice(0, ANSWER_CHARS + 1);
      if (end >= 0) done();
    };
    stdin.on('data', onData);
    stdin.once('end', done);
    stdin.once('close', done);
    stdin.resume();
  });
}
