/**
 * The terminal host's command line (issue: exact interface). Parsing is pure: it returns a value
 * or a usage error, and the caller prints and exits.
 */
import path from 'node:path';
import { parseArgs } from 'node:util';
import { type CallPaceLimits, DEFAULT_CALL_PACE } from '../../app/call-pace.js';
import { MCP_CLIENT_APPS, type McpClientApp } from '../../app/contract/mcp-clients.js';
import type { Policy } from '../../app/contract/policy.js';
import { PROFILE_KIND_SPECS, type ProfileKindSpec } from '../../app/contract/profiles/index.js';
import { type KindFlags, kindOptions, kindUsage, parseKindFlags } from './flag-kinds.js';

/** The subcommands that answer `--help` / `-h` with their own usage. */
export const HELP_TOPICS = ['run', 'ui', 'audit', 'mcp', 'mcp-setup'] as const;
export type HelpTopic = (typeof HELP_TOPICS)[number];

/**
 * The usage text, with the server flags of every kind the command line can add: all of it, or
 * one subcommand's part (`advent-agent run --help`).
 */
export function usage(
  kinds: readonly ProfileKindSpec[] = PROFILE_KIND_SPECS,
  topic?: HelpTopic,
): string {
  const { synopsis, lines } = kindUsage(kinds);
  const names = kinds.filter((k) => k.flags).map((k) => `--${k.flags!.name}`);
  const runSynopsis = `  advent-agent run ${synopsis.join('\n                   ')}
                   [--files DIR]... [--allow NAME]... [--deny NAME]... [--disable NAME]...
                   [--mcp-config FILE]... [--mcp-http [PORT] [--mcp-new-token]]
                   [--data-dir DIR] [--prompt-timeout SECONDS] [--calls-per-second N]
                   [--no-chat]
`;
  const uiSynopsis = `  advent-agent ui [--port N] [--open] [run's flags]
`;
  const auditSynopsis = `  advent-agent audit [--data-dir DIR] [--service NAME] [--json] [--verify]
`;
  const mcpSynopsis = `  advent-agent mcp [--data-dir DIR] [--calls-per-second N]
`;
  const mcpSetupSynopsis = `  advent-agent mcp-setup [${MCP_CLIENT_APPS.join('|')} [--yes]] [--data-dir DIR]
`;
  const sessionFlags = `${lines.join('\n')}
  --mcp-config FILE         MCP servers to import for this run (repeatable): a Claude Desktop
                            style {"mcpServers": …} file (Cursor's and VS Code's mcp.json too);
                            their tools are offered as <server>_<tool>, asked like any other
  --files DIR               a folder file services may use (repeatable; default
                            ~/Documents/Advent Agent or the saved setting)
  --allow NAME / --deny NAME
                            run NAME without asking / never run it (this run only)
  --disable NAME            do not offer NAME to the server (this run only)
  --data-dir DIR            settings and audit log (default: the platform's data folder)
  --prompt-timeout SECONDS  how long a permission question waits (default 60)
${CALLS_PER_SECOND_USAGE}
  --mcp-http [PORT]         also serve the services to MCP apps at http://127.0.0.1:PORT/mcp
                            (default port: the saved one, else 8931); clients need its
                            bearer token, shown once when it is made (here or in Settings)
  --mcp-new-token           with --mcp-http: make a new token (shown once); apps using the
                            old one are cut off
`;
  const run = `run      Connect to one or more servers at once (at least one of ${names.join(', ')}),
         offer the enabled services to each and answer their calls, every call through the
         same permission gate and audit log.
         Each line you type is sent as a text turn to the first server that chats (in the
         order above). Commands: /services, /enable NAME, /disable NAME (each re-registers at
         once), /audit, /help, /quit.
         When a service needs permission and stdin is a terminal you are asked:
         y = allow once, s = allow for this session, a = always allow, n = deny.
         When stdin is not a terminal nobody can answer, so such calls are denied.
${sessionFlags}  --no-chat                 ignore stdin; run until Ctrl-C or SIGTERM
`;
  const ui = `ui       Serve the agent's window to your browser on this machine only (127.0.0.1) and print
         its address. The address carries a random key made for this launch (?token=…): it
         is the key to this UI, so do not share it; anyone with it can use the agent while
         it runs. Runs until Ctrl-C or SIGTERM. Takes run's flags: the servers they name are
         added for this run only, their tokens kept in memory. Without any, use the window to
         connect or to try the demo server.
  --port N                  the local port to serve on (default: a free one)
  --open                    open the address in your default browser (when there is a display)
`;
  const audit = `audit    Show the audit log: every call, its decision and outcome.
  --data-dir DIR            the data folder whose log to read (default: the platform's)
  --service NAME            only calls of this service
  --json                    one JSON record per line
  --verify                  check the hash chain and report any tampering
`;
  const mcp = `mcp      Serve the enabled services to an MCP app (Claude Desktop, Cursor, VS Code…) on
         stdin/stdout: the command such an app starts. Every call goes through the same
         permission gate and audit log. When Advent Agent is already running on the data
         folder (the desktop app, ui or run), this relays to it, so its window asks. Otherwise
         it runs its own agent without voice connections: a call that needs permission is
         asked in the app if the app can ask (MCP elicitation), else refused with a note to
         open Advent Agent or set a policy. Only MCP goes to stdout; notes go to stderr.
         To add it to those apps' config files, see mcp-setup.
  --data-dir DIR            the data folder (default: the platform's)
${CALLS_PER_SECOND_USAGE}
`;
  const mcpSetup = `mcp-setup
         Set up Claude Desktop, Cursor or VS Code to run this agent's services (the mcp
         command above). Alone, it lists each app: whether it is installed, its config file,
         whether our entry is there, and the exact snippet to copy. With an app
         (${MCP_CLIENT_APPS.join(', ')}) it shows the change to that app's file and asks before
         writing it: every other entry is kept, and a copy of the file as it was is kept
         beside it. The agent may keep running meanwhile. Exits 0 when the entry is in place,
         1 when nothing was written.
  --yes, -y                 write the change without asking (for scripts); without it and
                            without a terminal to ask on, nothing is written
  --data-dir DIR            the data folder the apps' command uses (default: the platform's)
`;
  const head =
    'advent-agent — your local services for voice-AI servers, behind a permission gate\n\n';
  switch (topic) {
    case 'run':
      return `${head}Usage:\n${runSynopsis}\n${run}`;
    case 'ui':
      return `${head}Usage:\n${uiSynopsis}\n${ui}\nrun's flags, for servers added for this run:\n${sessionFlags}`;
    case 'audit':
      return `${head}Usage:\n${auditSynopsis}\n${audit}`;
    case 'mcp':
      return `${head}Usage:\n${mcpSynopsis}\n${mcp}`;
    case 'mcp-setup':
      return `${head}Usage:\n${mcpSetupSynopsis}\n${mcpSetup}`;
    default:
      return `${head}Usage:
${runSynopsis}${uiSynopsis}${auditSynopsis}${mcpSynopsis}${mcpSetupSynopsis}  advent-agent --help
  advent-agent COMMAND --help

${run}
${ui}
${audit}
${mcp}
${mcpSetup}`;
  }
}

const CALLS_PER_SECOND_USAGE = `  --calls-per-second N      how many calls a second each server or app may start once it has
                            made ${DEFAULT_CALL_PACE.burst} at once (default ${DEFAULT_CALL_PACE.perSecond}); faster ones wait their turn`;

/** The highest `--calls-per-second`: past this the pace is no bound at all. */
const MAX_CALLS_PER_SECOND = 100_000;

/** What `run` and `ui` share: the servers to add for this run and this run's overrides. */
export interface SessionFlags {
  /** The servers the flags name, in the kinds' order (the first that chats gets typed lines). */
  servers: KindFlags[];
  files: string[];
  /** MCP server config files for this run (`--mcp-config`). */
  mcpConfigs: string[];
  policies: Record<string, Policy>;
  disabled: string[];
  dataDir?: string;
  promptTimeoutSec?: number;
  /** `--calls-per-second N`: how fast each connection's calls may start, this run only. */
  callsPerSecond?: number;
  /** `--mcp-http [PORT]`: serve MCP over HTTP for this run. */
  mcpHttp?: { port?: number };
  /** `--mcp-new-token`: make (and show once) a new bearer token for it. */
  mcpNewToken?: boolean;
}

export interface RunArgs extends SessionFlags {
  command: 'run';
  noChat: boolean;
}

export interface UiArgs extends SessionFlags {
  command: 'ui';
  /** Where the UI is served on 127.0.0.1; 0 picks a free port. */
  listenPort: number;
  open: boolean;
}

export interface AuditArgs {
  command: 'audit';
  dataDir?: string;
  service?: string;
  json: boolean;
  verify: boolean;
}

export interface McpArgs {
  command: 'mcp';
  dataDir?: string;
  callsPerSecond?: number;
}

export interface McpSetupArgs {
  command: 'mcp-setup';
  /** The app whose config file to change; without one, every app is listed. */
  app?: McpClientApp;
  /** Write without asking (`--yes`). */
  yes: boolean;
  dataDir?: string;
}

export type ParsedArgs =
  | RunArgs
  | UiArgs
  | AuditArgs
  | McpArgs
  | McpSetupArgs
  | { command: 'help'; topic?: HelpTopic }
  | { command: 'version' };
export type ParseResult = { ok: true; args: ParsedArgs } | { ok: false; message: string };

const fail = (message: string): ParseResult => ({ ok: false, message });

export function parseCliArgs(
  argv: readonly string[],
  kinds: readonly ProfileKindSpec[] = PROFILE_KIND_SPECS,
): ParseResult {
  const [command, ...rest] = argv;
  if (command === undefined || command === '--help' || command === '-h' || command === 'help') {
    return { ok: true, args: { command: 'help' } };
  }
  if (command === '--version' || command === '-v')
    return { ok: true, args: { command: 'version' } };
  try {
    if (command === 'run') return parseRun(rest, kinds);
    if (command === 'ui') return parseUi(rest, kinds);
    if (command === 'audit') return parseAudit(rest);
    if (command === 'mcp') return parseMcp(rest);
    if (command === 'mcp-setup') return parseMcpSetup(rest);
  } catch (err) {
    // parseArgs throws on unknown or malformed options.
    return fail((err as Error).message);
  }
  return fail(`unknown command '${command}'`);
}

const SESSION_OPTIONS = {
  files: { type: 'string', multiple: true },
  allow: { type: 'string', multiple: true },
  deny: { type: 'string', multiple: true },
  disable: { type: 'string', multiple: true },
  'data-dir': { type: 'string' },
  'prompt-timeout': { type: 'string' },
  'calls-per-second': { type: 'string' },
  'no-chat': { type: 'boolean' },
  'mcp-config': { type: 'string', multiple: true },
  'mcp-new-token': { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

type Values = Record<string, string | boolean | string[] | undefined>;

function parseSessionArgs(
  argv: string[],
  kinds: readonly ProfileKindSpec[],
  extra: Record<string, { type: 'string' } | { type: 'boolean'; short?: string }> = {},
): { values: Values; positionals: string[]; mcpHttp?: { port?: number } } {
  const { rest, mcpHttp } = takeMcpHttp(argv);
  const parsed = parseArgs({
    args: rest,
    allowPositionals: true,
    strict: true,
    options: { ...kindOptions(kinds), ...SESSION_OPTIONS, ...extra },
  }) as { values: Values; positionals: string[] };
  return { ...parsed, ...(mcpHttp && { mcpHttp }) };
}

/**
 * `--mcp-http` with an optional port (`--mcp-http`, `--mcp-http 8931`, `--mcp-http=8931`), which
 * parseArgs cannot say: taken out before it parses the rest. Throws on a bad port.
 */
export function takeMcpHttp(argv: readonly string[]): {
  rest: string[];
  mcpHttp?: { port?: number };
} {
  const rest: string[] = [];
  let mcpHttp: { port?: number } | undefined;
  const portOf = (text: string): number => {
    const port = Number(text);
    if (!/^\d+$/.test(text) || port < 1024 || port > 65535)
      throw new Error(`--mcp-http takes a port from 1024 to 65535 (got '${text}')`);
    return port;
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--') {
      rest.push(...argv.slice(i));
      break;
    }
    if (arg.startsWith('--mcp-http=')) {
      mcpHttp = { port: portOf(arg.slice('--mcp-http='.length)) };
    } else if (arg === '--mcp-http') {
      const next = argv[i + 1];
      if (next !== undefined && /^\d+$/.test(next)) {
        mcpHttp = { port: portOf(next) };
        i += 1;
      } else mcpHttp = {};
    } else rest.push(arg);
  }
  return { rest, ...(mcpHttp && { mcpHttp }) };
}

/** `--mcp-new-token`, which means something only beside `--mcp-http`. */
function mcpNewToken(values: Values, mcpHttp: { port?: number } | undefined): boolean | Error {
  const renew = values['mcp-new-token'] === true;
  if (renew && !mcpHttp) return new Error('--mcp-new-token goes with --mcp-http');
  return renew;
}

/** The flags `run` and `ui` share, checked. */
function sessionFlags(values: Values, kinds: readonly ProfileKindSpec[]): SessionFlags | Error {
  const servers = parseKindFlags(kinds, values);
  if (servers instanceof Error) return servers;

  const list = (name: string): string[] => (values[name] as string[] | undefined) ?? [];
  const policies: Record<string, Policy> = {};
  for (const name of list('allow')) policies[name] = 'allow';
  for (const name of list('deny')) {
    if (policies[name] === 'allow')
      return new Error(`'${name}' is given to both --allow and --deny`);
    policies[name] = 'deny';
  }

  let promptTimeoutSec: number | undefined;
  const timeout = values['prompt-timeout'];
  if (typeof timeout === 'string') {
    promptTimeoutSec = Number(timeout);
    if (!Number.isInteger(promptTimeoutSec) || promptTimeoutSec < 1 || promptTimeoutSec > 3600) {
      return new Error('--prompt-timeout must be a whole number of seconds from 1 to 3600');
    }
  }

  const callsPerSecond = callsPerSecondOf(values);
  if (callsPerSecond instanceof Error) return callsPerSecond;

  return {
    servers,
    ...(callsPerSecond !== undefined && { callsPerSecond }),
    files: list('files'),
    mcpConfigs: list('mcp-config'),
    policies,
    disabled: list('disable'),
    dataDir: values['data-dir'] as string | undefined,
    promptTimeoutSec,
  };
}

function parseRun(argv: string[], kinds: readonly ProfileKindSpec[]): ParseResult {
  const { values, positionals, mcpHttp } = parseSessionArgs(argv, kinds);
  if (values.help) return { ok: true, args: { command: 'help', topic: 'run' } };
  if (positionals.length) return fail(`unexpected argument '${positionals[0]}'`);
  const flags = sessionFlags(values, kinds);
  if (flags instanceof Error) return fail(flags.message);
  const newToken = mcpNewToken(values, mcpHttp);
  if (newToken instanceof Error) return fail(newToken.message);
  if (flags.servers.length === 0) {
    const names = kinds.filter((k) => k.flags).map((k) => `--${k.flags!.name}`);
    return fail(`give at least one server: ${names.join(', ')}`);
  }
  return {
    ok: true,
    args: {
      command: 'run',
      ...flags,
      ...(mcpHttp && { mcpHttp }),
      ...(newToken === true && { mcpNewToken: true }),
      noChat: values['no-chat'] === true,
    },
  };
}

function parseUi(argv: string[], kinds: readonly ProfileKindSpec[]): ParseResult {
  const { values, positionals, mcpHttp } = parseSessionArgs(argv, kinds, {
    port: { type: 'string' },
    open: { type: 'boolean' },
  });
  if (values.help) return { ok: true, args: { command: 'help', topic: 'ui' } };
  if (positionals.length) return fail(`unexpected argument '${positionals[0]}'`);

  let listenPort = 0;
  const port = values.port;
  if (typeof port === 'string') {
    listenPort = Number(port);
    if (!/^\d+$/.test(port) || listenPort > 65535)
      return fail(`--port must be a whole number from 0 to 65535 (got '${port}')`);
  }

  const flags = sessionFlags(values, kinds);
  if (flags instanceof Error) return fail(flags.message);
  const newToken = mcpNewToken(values, mcpHttp);
  if (newToken instanceof Error) return fail(newToken.message);
  return {
    ok: true,
    args: {
      command: 'ui',
      ...flags,
      ...(mcpHttp && { mcpHttp }),
      ...(newToken === true && { mcpNewToken: true }),
      listenPort,
      open: values.open === true,
    },
  };
}

function parseAudit(argv: string[]): ParseResult {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      'data-dir': { type: 'string' },
      service: { type: 'string' },
      json: { type: 'boolean' },
      verify: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) return { ok: true, args: { command: 'help', topic: 'audit' } };
  if (positionals.length) return fail(`unexpected argument '${positionals[0]}'`);
  return {
    ok: true,
    args: {
      command: 'audit',
      dataDir: values['data-dir'],
      service: values.service,
      json: values.json ?? false,
      verify: values.verify ?? false,
    },
  };
}

function parseMcp(argv: string[]): ParseResult {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      'data-dir': { type: 'string' },
      'calls-per-second': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) return { ok: true, args: { command: 'help', topic: 'mcp' } };
  if (positionals.length) return fail(`unexpected argument '${positionals[0]}'`);
  const callsPerSecond = callsPerSecondOf(values);
  if (callsPerSecond instanceof Error) return fail(callsPerSecond.message);
  return {
    ok: true,
    args: {
      command: 'mcp',
      dataDir: values['data-dir'],
      ...(callsPerSecond !== undefined && { callsPerSecond }),
    },
  };
}

/** `--calls-per-second N`, checked: a whole number from 1 to MAX_CALLS_PER_SECOND. */
function callsPerSecondOf(values: Values): number | undefined | Error {
  const text = values['calls-per-second'];
  if (typeof text !== 'string') return undefined;
  const n = Number(text);
  if (!/^\d+$/.test(text) || n < 1 || n > MAX_CALLS_PER_SECOND)
    return new Error(
      `--calls-per-second must be a whole number from 1 to ${MAX_CALLS_PER_SECOND} (got '${text}')`,
    );
  return n;
}

function parseMcpSetup(argv: string[]): ParseResult {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      yes: { type: 'boolean', short: 'y' },
      'data-dir': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) return { ok: true, args: { command: 'help', topic: 'mcp-setup' } };
  const [name, extra] = positionals;
  if (extra !== undefined) return fail(`unexpected argument '${extra}'`);
  const app = MCP_CLIENT_APPS.find((a) => a === name);
  if (name !== undefined && !app)
    return fail(`unknown app '${name}': mcp-setup knows ${MCP_CLIENT_APPS.join(', ')}`);
  if (values.yes && !app)
    return fail(
      `--yes goes with an app, such as: advent-agent mcp-setup ${MCP_CLIENT_APPS[0]} --yes`,
    );
  return {
    ok: true,
    args: {
      command: 'mcp-setup',
      ...(app && { app }),
      yes: values.yes === true,
      dataDir: values['data-dir'],
    },
  };
}

/** The run-only overrides both `run` and `ui` pass to the agent (never saved). */
export function overridesOf(
  args: Pick<RunArgs, 'files' | 'promptTimeoutSec' | 'policies' | 'disabled' | 'callsPerSecond'>,
): {
  filesRoots?: string[];
  promptTimeoutSec?: number;
  policies: Record<string, Policy>;
  disabled: string[];
  callPace?: CallPaceLimits;
} {
  const n = args.callsPerSecond;
  return {
    filesRoots: args.files.length ? args.files.map((f) => path.resolve(f)) : undefined,
    promptTimeoutSec: args.promptTimeoutSec,
    policies: args.policies,
    disabled: args.disabled,
    // A faster pace keeps at least as large a burst: one second of it, or the default's.
    ...(n !== undefined && {
      callPace: { burst: Math.max(DEFAULT_CALL_PACE.burst, n), perSecond: n },
    }),
  };
}
