/**
 * The terminal host's command line (issue: exact interface). Parsing is pure: it returns a value
 * or a usage error, and the caller prints and exits.
 */
import path from 'node:path';
import { parseArgs } from 'node:util';
import { PROFILE_PATTERNS } from '../../app/contract/commands.js';
import type { Policy } from '../../app/contract/policy.js';

export const USAGE = `advent-agent — your local services for a voice-AI server, behind a permission gate

Usage:
  advent-agent run [--server HOST:PORT (--token TOKEN | --token-file FILE)
                    [--voice-id ID] [--lang L] [--format pcm|opus] [--input-audio-format pcm|opus]
                    [--mode manual|vad|auto] [--emoji-mode M]]
                   [--xiaozhi WS_URL [--xiaozhi-token T] [--device-id MAC] [--client-id UUID]
                    [--protocol-version 1|2|3]]
                   [--endpoint WS_URL] [--robot WS_URL [--mac MAC]]
                   [--files DIR]... [--allow NAME]... [--deny NAME]... [--disable NAME]...
                   [--mcp-config FILE]...
                   [--data-dir DIR] [--prompt-timeout SECONDS] [--no-chat]
  advent-agent ui [--port N] [--open] [run's flags]
  advent-agent audit [--data-dir DIR] [--service NAME] [--json] [--verify]
  advent-agent --help

run      Connect to one or more servers at once (at least one of --server, --xiaozhi,
         --endpoint, --robot), offer the enabled services to each and answer their calls,
         every call through the same permission gate and audit log.
         Each line you type is sent as a text turn to the first server that chats
         (Advent, then XiaoZhi, then robot; an MCP endpoint has no chat). Commands: /services, /enable NAME,
         /disable NAME (each re-registers at once), /audit, /help, /quit.
         When a service needs permission and stdin is a terminal you are asked:
         y = allow once, s = allow for this session, a = always allow, n = deny.
         When stdin is not a terminal nobody can answer, so such calls are denied.
  --server HOST:PORT        the Advent server (plain TCP)
  --token TOKEN             the login token (JWT); prefer --token-file so it stays out of
  --token-file FILE         your shell history and process list
  --voice-id, --lang, --format, --input-audio-format, --mode, --emoji-mode
                            sent in the Advent login exactly as given (only those you set)
  --xiaozhi WS_URL          a XiaoZhi server, joined as a device (ws://HOST:8000/xiaozhi/v1/)
  --xiaozhi-token T         its token (Authorization: Bearer), if it needs one
  --device-id MAC           Device-Id (default: one generated once and kept in the data folder)
  --client-id UUID          Client-Id (default: generated once and kept)
  --protocol-version 1|2|3  XiaoZhi binary audio framing (default 1)
  --endpoint WS_URL         a XiaoZhi MCP endpoint; the token is inside the address
                            (wss://api.xiaozhi.me/mcp/?token=…): quote it in your shell
  --robot WS_URL            a robot server speaking mcp/registerTools (ws://HOST:8888/ws)
  --mac MAC                 the robot's mac_addr (default: generated once and kept)
  --mcp-config FILE         MCP servers to import for this run (repeatable): a Claude Desktop
                            style {"mcpServers": …} file (Cursor's and VS Code's mcp.json too);
                            their tools are offered as <server>_<tool>, asked like any other
  --files DIR               a folder file services may write into (repeatable; default
                            ~/Documents/Advent Agent or the saved setting)
  --allow NAME / --deny NAME
                            run NAME without asking / never run it (this run only)
  --disable NAME            do not offer NAME to the server (this run only)
  --data-dir DIR            settings and audit log (default: the platform's data folder)
  --prompt-timeout SECONDS  how long a permission question waits (default 60)
  --no-chat                 ignore stdin; run until Ctrl-C or SIGTERM

ui       Serve the agent's window to your browser on this machine only (127.0.0.1) and print
         its address. The address carries a random key made for this launch (?token=…): it
         is the key to this UI, so do not share it; anyone with it can use the agent while
         it runs. Runs until Ctrl-C or SIGTERM. Takes run's flags; --server (with --token or
         --token-file) is optional and adds that server for this run only, its token kept in
         memory. --xiaozhi, --endpoint and --robot likewise add those servers for this run.
         Without any, use the window to connect or to try the demo server.
  --port N                  the local port to serve on (default: a free one)
  --open                    open the address in your default browser (when there is a display)

audit    Show the audit log: every call, its decision and outcome.
  --service NAME            only calls of this service
  --json                    one JSON record per line
  --verify                  check the hash chain and report any tampering
`;

export type AuthFormat = 'pcm' | 'opus';

/** What `run` and `ui` share: the login fields of a server and this run's overrides. */
export interface SessionFlags {
  token?: string;
  tokenFile?: string;
  voiceId?: string;
  lang?: string;
  format?: AuthFormat;
  inputAudioFormat?: AuthFormat;
  mode?: 'manual' | 'vad' | 'auto';
  emojiMode?: string;
  files: string[];
  /** MCP server config files for this run (`--mcp-config`). */
  mcpConfigs: string[];
  policies: Record<string, Policy>;
  disabled: string[];
  dataDir?: string;
  promptTimeoutSec?: number;
  /** A XiaoZhi server joined as a device, for this run. */
  xiaozhi?: XiaozhiFlags;
  /** A XiaoZhi MCP endpoint (token inside the URL), for this run. */
  endpoint?: { url: string };
  /** A robot JSON-RPC server, for this run. */
  robot?: { url: string; mac?: string };
}

export interface XiaozhiFlags {
  url: string;
  token?: string;
  deviceId?: string;
  clientId?: string;
  protocolVersion?: 1 | 2 | 3;
}

export interface RunArgs extends SessionFlags {
  command: 'run';
  /** The Advent server, if one was given. */
  server?: { host: string; port: number };
  noChat: boolean;
}

export interface UiArgs extends SessionFlags {
  command: 'ui';
  /** A server to connect for this run only (its token is never saved). */
  server?: { host: string; port: number };
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

export type ParsedArgs =
  RunArgs | UiArgs | AuditArgs | { command: 'help' } | { command: 'version' };
export type ParseResult = { ok: true; args: ParsedArgs } | { ok: false; message: string };

const fail = (message: string): ParseResult => ({ ok: false, message });

function oneOf<T extends string>(
  flag: string,
  value: string | undefined,
  allowed: readonly T[],
): T | undefined | Error {
  if (value === undefined) return undefined;
  if ((allowed as readonly string[]).includes(value)) return value as T;
  return new Error(`${flag} must be one of: ${allowed.join(', ')} (got '${value}')`);
}

export function parseCliArgs(argv: readonly string[]): ParseResult {
  const [command, ...rest] = argv;
  if (command === undefined || command === '--help' || command === '-h' || command === 'help') {
    return { ok: true, args: { command: 'help' } };
  }
  if (command === '--version' || command === '-v')
    return { ok: true, args: { command: 'version' } };
  try {
    if (command === 'run') return parseRun(rest);
    if (command === 'ui') return parseUi(rest);
    if (command === 'audit') return parseAudit(rest);
  } catch (err) {
    // parseArgs throws on unknown or malformed options.
    return fail((err as Error).message);
  }
  return fail(`unknown command '${command}'`);
}

const SESSION_OPTIONS = {
  server: { type: 'string' },
  token: { type: 'string' },
  'token-file': { type: 'string' },
  'voice-id': { type: 'string' },
  lang: { type: 'string' },
  format: { type: 'string' },
  'input-audio-format': { type: 'string' },
  mode: { type: 'string' },
  'emoji-mode': { type: 'string' },
  files: { type: 'string', multiple: true },
  allow: { type: 'string', multiple: true },
  deny: { type: 'string', multiple: true },
  disable: { type: 'string', multiple: true },
  'data-dir': { type: 'string' },
  'prompt-timeout': { type: 'string' },
  'no-chat': { type: 'boolean' },
  'mcp-config': { type: 'string', multiple: true },
  xiaozhi: { type: 'string' },
  'xiaozhi-token': { type: 'string' },
  'device-id': { type: 'string' },
  'client-id': { type: 'string' },
  'protocol-version': { type: 'string' },
  endpoint: { type: 'string' },
  robot: { type: 'string' },
  mac: { type: 'string' },
} as const;

const MAC = new RegExp(PROFILE_PATTERNS.mac);
const UUID = new RegExp(PROFILE_PATTERNS.uuid);

/** A ws:// or wss:// address; the message never repeats a token the address may carry. */
function wsUrl(flag: string, text: string): string | Error {
  let u: URL;
  try {
    u = new URL(text);
  } catch {
    return new Error(`${flag} must be a ws:// or wss:// address`);
  }
  if (u.protocol !== 'ws:' && u.protocol !== 'wss:')
    return new Error(`${flag} must be a ws:// or wss:// address (got ${u.protocol}//…)`);
  return text;
}

/** The WebSocket servers of `run` and `ui` (XiaoZhi device, endpoint, robot), checked. */
function wsServers(
  values: SessionValues,
): Pick<SessionFlags, 'xiaozhi' | 'endpoint' | 'robot'> | Error {
  const out: Pick<SessionFlags, 'xiaozhi' | 'endpoint' | 'robot'> = {};
  if (values.xiaozhi !== undefined) {
    const url = wsUrl('--xiaozhi', values.xiaozhi);
    if (url instanceof Error) return url;
    const deviceId = values['device-id'];
    if (deviceId !== undefined && !MAC.test(deviceId))
      return new Error(
        `--device-id must be a MAC address like aa:bb:cc:dd:ee:ff (got '${deviceId}')`,
      );
    const clientId = values['client-id'];
    if (clientId !== undefined && !UUID.test(clientId))
      return new Error(`--client-id must be a UUID (got '${clientId}')`);
    const version = oneOf('--protocol-version', values['protocol-version'], [
      '1',
      '2',
      '3',
    ] as const);
    if (version instanceof Error) return version;
    const token = values['xiaozhi-token'];
    if (token !== undefined && !token.trim()) return new Error('--xiaozhi-token is empty');
    out.xiaozhi = {
      url,
      token: token?.trim(),
      deviceId,
      clientId,
      protocolVersion: version ? (Number(version) as 1 | 2 | 3) : undefined,
    };
  } else {
    const orphan = (['xiaozhi-token', 'device-id', 'client-id', 'protocol-version'] as const).find(
      (name) => values[name] !== undefined,
    );
    if (orphan) return new Error(`--${orphan} applies only with --xiaozhi WS_URL`);
  }
  if (values.endpoint !== undefined) {
    const url = wsUrl('--endpoint', values.endpoint);
    if (url instanceof Error) return url;
    if (!new URL(url).searchParams.get('token'))
      return new Error('--endpoint needs the whole address with its token (…/mcp/?token=…)');
    out.endpoint = { url };
  }
  if (values.robot !== undefined) {
    const url = wsUrl('--robot', values.robot);
    if (url instanceof Error) return url;
    const mac = values.mac;
    if (mac !== undefined && !MAC.test(mac))
      return new Error(`--mac must be a MAC address like AA-BB-CC-DD-EE-FF (got '${mac}')`);
    out.robot = { url, mac };
  } else if (values.mac !== undefined) return new Error('--mac applies only with --robot WS_URL');
  return out;
}

type SessionValues = ReturnType<typeof parseSessionArgs>['values'];

function parseSessionArgs(argv: string[]) {
  return parseArgs({ args: argv, allowPositionals: true, strict: true, options: SESSION_OPTIONS });
}

/** The flags `run` and `ui` share, checked; the server itself is up to each command. */
function sessionFlags(values: SessionValues): SessionFlags | Error {
  if (values.token !== undefined && values['token-file'] !== undefined)
    return new Error('give --token or --token-file, not both');

  const format = oneOf('--format', values.format, ['pcm', 'opus'] as const);
  const inputAudioFormat = oneOf('--input-audio-format', values['input-audio-format'], [
    'pcm',
    'opus',
  ] as const);
  const mode = oneOf('--mode', values.mode, ['manual', 'vad', 'auto'] as const);
  for (const v of [format, inputAudioFormat, mode]) if (v instanceof Error) return v;
  for (const [flag, v] of [
    ['--voice-id', values['voice-id']],
    ['--lang', values.lang],
    ['--emoji-mode', values['emoji-mode']],
  ] as const) {
    if (v !== undefined && v.includes('##')) return new Error(`${flag} cannot contain '##'`);
  }

  const servers = wsServers(values);
  if (servers instanceof Error) return servers;

  const policies: Record<string, Policy> = {};
  for (const name of values.allow ?? []) policies[name] = 'allow';
  for (const name of values.deny ?? []) {
    if (policies[name] === 'allow')
      return new Error(`'${name}' is given to both --allow and --deny`);
    policies[name] = 'deny';
  }

  let promptTimeoutSec: number | undefined;
  if (values['prompt-timeout'] !== undefined) {
    promptTimeoutSec = Number(values['prompt-timeout']);
    if (!Number.isInteger(promptTimeoutSec) || promptTimeoutSec < 1 || promptTimeoutSec > 3600) {
      return new Error('--prompt-timeout must be a whole number of seconds from 1 to 3600');
    }
  }

  return {
    token: values.token,
    tokenFile: values['token-file'],
    voiceId: values['voice-id'],
    lang: values.lang,
    format: format as AuthFormat | undefined,
    inputAudioFormat: inputAudioFormat as AuthFormat | undefined,
    mode: mode as SessionFlags['mode'],
    emojiMode: values['emoji-mode'],
    files: values.files ?? [],
    mcpConfigs: values['mcp-config'] ?? [],
    policies,
    disabled: values.disable ?? [],
    dataDir: values['data-dir'],
    promptTimeoutSec,
    ...servers,
  };
}

function parseRun(argv: string[]): ParseResult {
  const { values, positionals } = parseSessionArgs(argv);
  if (positionals.length) return fail(`unexpected argument '${positionals[0]}'`);
  if (
    values.server === undefined &&
    values.xiaozhi === undefined &&
    values.endpoint === undefined &&
    values.robot === undefined
  )
    return fail('give at least one server: --server HOST:PORT, --xiaozhi, --endpoint or --robot');
  const advent = adventServer(values);
  if (advent instanceof Error) return fail(advent.message);
  const flags = sessionFlags(values);
  if (flags instanceof Error) return fail(flags.message);
  return {
    ok: true,
    args: { command: 'run', server: advent, ...flags, noChat: values['no-chat'] ?? false },
  };
}

function parseUi(argv: string[]): ParseResult {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: { ...SESSION_OPTIONS, port: { type: 'string' }, open: { type: 'boolean' } },
  });
  if (positionals.length) return fail(`unexpected argument '${positionals[0]}'`);

  let listenPort = 0;
  if (values.port !== undefined) {
    listenPort = Number(values.port);
    if (!/^\d+$/.test(values.port) || listenPort > 65535)
      return fail(`--port must be a whole number from 0 to 65535 (got '${values.port}')`);
  }

  const server = adventServer(values);
  if (server instanceof Error) return fail(server.message);
  const flags = sessionFlags(values);
  if (flags instanceof Error) return fail(flags.message);
  return {
    ok: true,
    args: { command: 'ui', server, ...flags, listenPort, open: values.open === true },
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
    },
  });
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

/** The Advent server and its login flags: checked together (a token needs a server and back). */
function adventServer(values: SessionValues): { host: string; port: number } | undefined | Error {
  if (values.server === undefined) {
    // Without a server there is nothing for these to apply to: say so rather than ignore them.
    const orphan = (
      [
        'token',
        'token-file',
        'voice-id',
        'lang',
        'format',
        'input-audio-format',
        'mode',
        'emoji-mode',
      ] as const
    ).find((name) => values[name] !== undefined);
    return orphan ? new Error(`--${orphan} applies only with --server HOST:PORT`) : undefined;
  }
  const server = parseServer(values.server);
  if (server instanceof Error) return server;
  if (values.token !== undefined && values['token-file'] !== undefined)
    return new Error('give --token or --token-file, not both');
  if (values.token === undefined && values['token-file'] === undefined)
    return new Error('--server needs --token or --token-file');
  return server;
}

/** `host:port`, `[::1]:port`. */
export function parseServer(text: string): { host: string; port: number } | Error {
  const m = /^\[([^\]]+)\]:(\d+)$/.exec(text) ?? /^([^:\s]+):(\d+)$/.exec(text);
  if (!m) return new Error(`--server must be HOST:PORT (got '${text}')`);
  const port = Number(m[2]);
  if (!Number.isInteger(port) || port < 1 || port > 65535)
    return new Error(`--server port must be 1-65535 (got '${m[2]}')`);
  return { host: m[1]!, port };
}

/** The run-only overrides both `run` and `ui` pass to the agent (never saved). */
export function overridesOf(
  args: Pick<RunArgs, 'files' | 'promptTimeoutSec' | 'policies' | 'disabled'>,
): {
  filesRoots?: string[];
  promptTimeoutSec?: number;
  policies: Record<string, Policy>;
  disabled: string[];
} {
  return {
    filesRoots: args.files.length ? args.files.map((f) => path.resolve(f)) : undefined,
    promptTimeoutSec: args.promptTimeoutSec,
    policies: args.policies,
    disabled: args.disabled,
  };
}
