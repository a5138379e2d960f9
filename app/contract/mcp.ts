/**
 * MCP servers imported as services (the MCP hub): what settings keep of each server, what the UI
 * sends to save one, and what it is shown (state, tools, problems). Secrets — env values and
 * headers marked secret, bearer tokens — never appear here with their values: settings name them
 * (`secretEnv`, `secretHeaders`) and the SecretStore holds them. Pure TS: the renderer imports it.
 */
import { type Static, Type } from '@sinclair/typebox';
import type { Policy } from './policy.js';

const Id = Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_.:-]+$' });
/** The name users gave the server (the key of its `mcpServers` entry). */
const ServerName = Type.String({ minLength: 1, maxLength: 64, pattern: '^[^\\u0000-\\u001f]+$' });
const EnvName = Type.String({ minLength: 1, maxLength: 256, pattern: '^[^=\\u0000]+$' });
const HeaderName = Type.String({
  minLength: 1,
  maxLength: 256,
  pattern: "^[!#$%&'*+.^_`|~0-9A-Za-z-]+$",
});
const Text = (max: number) => Type.String({ maxLength: max });
const NameMap = (key: typeof EnvName | typeof HeaderName) =>
  Type.Record(key, Text(16_384), { maxProperties: 100 });

export const MCP_TRANSPORTS = ['stdio', 'http', 'sse'] as const;
export type McpTransport = (typeof MCP_TRANSPORTS)[number];

const McpPolicy = Type.Union([Type.Literal('allow'), Type.Literal('ask'), Type.Literal('deny')]);

/** Fields shared by what settings keep and what the UI sends. */
const serverFields = {
  name: ServerName,
  /**
   * `stdio` runs `command`; `http` is Streamable HTTP (falling back to SSE for older servers when
   * the entry did not say which); `sse` is the older HTTP+SSE transport.
   */
  transport: Type.Union([Type.Literal('stdio'), Type.Literal('http'), Type.Literal('sse')]),
  command: Type.Optional(Type.String({ minLength: 1, maxLength: 4096 })),
  args: Type.Optional(Type.Array(Text(4096), { maxItems: 100 })),
  cwd: Type.Optional(Type.String({ minLength: 1, maxLength: 4096 })),
  url: Type.Optional(Type.String({ minLength: 1, maxLength: 2048, pattern: '^https?://' })),
  /** The entry said which HTTP transport it is (`type`): no fallback is tried then. */
  fixedTransport: Type.Optional(Type.Boolean()),
  disabled: Type.Optional(Type.Boolean()),
  /**
   * The user trusts what this server says about its tools: its `readOnlyHint` tools run without
   * asking (never its `destructiveHint` ones).
   */
  trusted: Type.Optional(Type.Boolean()),
  /** Policy for every tool of this server that has no policy of its own. */
  policy: Type.Optional(McpPolicy),
  /** How long one call may take (default 60 s). */
  timeoutSec: Type.Optional(Type.Integer({ minimum: 1, maximum: 3600 })),
};

const closed = { additionalProperties: false } as const;

/** A server as settings keep it. Secret values are in the SecretStore, under `mcp:<id>:…`. */
export const McpServerConfigSchema = Type.Object(
  {
    id: Id,
    ...serverFields,
    /** Non-secret environment variables. */
    env: Type.Optional(NameMap(EnvName)),
    /** Names of environment variables whose values are secrets (kept in the SecretStore). */
    secretEnv: Type.Optional(Type.Array(EnvName, { maxItems: 100 })),
    headers: Type.Optional(NameMap(HeaderName)),
    secretHeaders: Type.Optional(Type.Array(HeaderName, { maxItems: 100 })),
  },
  closed,
);
export type McpServerConfig = Static<typeof McpServerConfigSchema>;

/**
 * A server as the UI sends it (`id` absent for a new one). `env` and `headers` carry every value
 * the user typed; the names listed in `secretEnv`/`secretHeaders` are moved to the SecretStore.
 * A secret name with no value in `env`/`headers` keeps the value already stored.
 */
export const McpServerInputSchema = Type.Object(
  {
    id: Type.Optional(Id),
    ...serverFields,
    env: Type.Optional(NameMap(EnvName)),
    secretEnv: Type.Optional(Type.Array(EnvName, { maxItems: 100 })),
    headers: Type.Optional(NameMap(HeaderName)),
    secretHeaders: Type.Optional(Type.Array(HeaderName, { maxItems: 100 })),
  },
  closed,
);
export type McpServerInput = Static<typeof McpServerInputSchema>;

/** Where a server stands, for its row: starting / ready N tools / failed: reason / restarting in N s. */
export type McpServerState =
  | { status: 'stopped' }
  | { status: 'starting' }
  | { status: 'ready'; tools: number }
  | { status: 'failed'; reason: string }
  /** `at`: epoch ms of the next attempt. */
  | { status: 'restarting'; attempt: number; at: number; reason: string };

/** What the server claims about a tool (MCP annotations: hints, never trusted blindly). */
export interface McpToolHint {
  readOnly?: boolean;
  destructive?: boolean;
  idempotent?: boolean;
  openWorld?: boolean;
}

export interface McpToolView {
  /** The tool's own name on its server. */
  tool: string;
  /** The service it became (`<server>_<tool>`), absent when it could not be offered. */
  service?: string;
  title: string;
  hint: McpToolHint;
  /** Why it is not offered (an invalid schema…). */
  problem?: string;
}

export interface McpServerView {
  id: string;
  name: string;
  transport: McpTransport;
  command?: string;
  args: string[];
  cwd?: string;
  url?: string;
  /** Non-secret environment variables with their values. */
  env: Record<string, string>;
  /** Names only: the values are secrets. */
  secretEnv: string[];
  headers: Record<string, string>;
  secretHeaders: string[];
  enabled: boolean;
  trusted: boolean;
  policy?: Policy;
  timeoutSec: number;
  /** Given by `--mcp-config` for this run only: not saved, not editable. */
  runOnly: boolean;
  state: McpServerState;
  tools: McpToolView[];
  /** The server's own name and version from `initialize`, once known. */
  serverInfo?: { name: string; version: string; protocolVersion?: string };
}

export interface McpLogLine {
  /** Epoch ms. */
  at: number;
  /** `stderr` of the process, or a line of the agent's own about this server. */
  stream: 'stderr' | 'stdout' | 'agent';
  text: string;
}

export const MCP_IMPORT_SOURCES = ['claude', 'cursor', 'vscode'] as const;
export type McpImportSource = (typeof MCP_IMPORT_SOURCES)[number];

/** What to import from: a known app's file, any file, or pasted JSON. */
export const McpImportRequestSchema = Type.Union([
  Type.Object(
    {
      source: Type.Union([Type.Literal('claude'), Type.Literal('cursor'), Type.Literal('vscode')]),
    },
    closed,
  ),
  Type.Object({ path: Type.String({ minLength: 1, maxLength: 4096 }) }, closed),
  Type.Object({ json: Type.String({ minLength: 1, maxLength: 1_048_576 }) }, closed),
]);
export type McpImportRequest = Static<typeof McpImportRequestSchema>;

export interface McpImportCandidate {
  name: string;
  transport: McpTransport;
  command?: string;
  args: string[];
  url?: string;
  /** Names of the variables and headers that will be kept as secrets. */
  secretEnv: string[];
  secretHeaders: string[];
  envNames: string[];
  headerNames: string[];
  disabled: boolean;
  trusted: boolean;
  /** A saved server of the same name is replaced (its grants do not carry over). */
  replaces: boolean;
  /** Things worth knowing before confirming (a `${input:…}` placeholder to fill in…). */
  notes: string[];
}

/** Nothing is saved or started until `confirmMcpImport(id, names)`. */
export interface McpImportPreview {
  id: string;
  from: string;
  servers: McpImportCandidate[];
  /** Entries that could not be read, each with why. */
  problems: string[];
}

/** The known config files on this computer, and whether each exists. */
export interface McpImportSourceView {
  source: McpImportSource;
  path: string;
  exists: boolean;
}
