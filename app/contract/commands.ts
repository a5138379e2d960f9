/**
 * The one API between the core and any UI (DESIGN §4): command names, their argument schemas and
 * result types. Schemas are TypeBox, so the TypeScript types and the JSON Schemas the hosts
 * validate with (ajv) come from one source and cannot drift. Pure TS: the renderer imports this.
 */
import { type Static, type TLiteral, type TSchema, type TUnion, Type } from '@sinclair/typebox';
import {
  AUDIT_EXPORT_FORMATS,
  type AuditPage,
  type AuditRecord,
  type AuditVerifyResult,
  DECISIONS,
  OUTCOMES,
} from './audit.js';
import type { ChatItem } from './chat.js';
import type { NoticeWords } from './notice.js';
import type {
  ConnectionCapabilities,
  ConnectionRef,
  ConnectionState,
  RegistrationState,
} from './connection.js';
import type { CommandErrorCode } from './errors.js';
import {
  POLICIES,
  PROMPT_ANSWERS,
  type PendingPrompt,
  type Policy,
  type Risk,
  type ServiceGroup,
} from './policy.js';
import {
  MCP_CLIENT_APPS,
  type McpClientSetupPreview,
  type McpClientSetupResult,
  type McpClientView,
} from './mcp-clients.js';
import { LANGUAGES, type Language } from './profiles/spec.js';
import {
  AnyProfileInputSchema,
  type Profile,
  type ProfileInput,
  type ProfileKindView,
} from './profiles/index.js';
import type { ReminderFired, ReminderView, ScreenRequest } from './reminders.js';
import { type Offers, OfferKeySchema, OfferSchema } from './offer.js';
import { type McpHttpSettings, McpHttpSettingsSchema, type McpHttpState } from './mcp-serve.js';
import {
  type McpImportPreview,
  McpImportRequestSchema,
  type McpImportSourceView,
  type McpLogLine,
  McpServerInputSchema,
  type McpServerView,
  type McpToolHint,
} from './mcp.js';

export * from './profiles/index.js';

const Id = Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_.:-]+$' });
const ServiceName = Type.String({ minLength: 1, maxLength: 64, pattern: '^[a-z][a-z0-9_]*$' });
const Secret = Type.String({ maxLength: 16384 });

/** A TypeBox union of literals from one of the contract's const arrays (no second copy). */
type Literals<T extends readonly (string | number)[]> = {
  -readonly [K in keyof T]: TLiteral<T[K]>;
};
function oneOf<const T extends readonly (string | number)[]>(values: T): TUnion<Literals<T>> {
  return Type.Union(values.map((v) => Type.Literal(v))) as unknown as TUnion<Literals<T>>;
}

export const PolicySchema = oneOf(POLICIES);
export const PromptAnswerSchema = oneOf(PROMPT_ANSWERS);
const Decision = oneOf(DECISIONS);
export const AuditQuerySchema = Type.Object(
  {
    // A stored name is at most MAX_NAME chars plus its cut marker and sha256 (app/audit/bounds.ts).
    service: Type.Optional(Type.String({ maxLength: 256 })),
    /** Any of these (an MCP server's tools). */
    services: Type.Optional(Type.Array(Type.String({ maxLength: 256 }), { maxItems: 1000 })),
    decision: Type.Optional(Decision),
    outcome: Type.Optional(oneOf(OUTCOMES)),
    connection: Type.Optional(Type.String({ maxLength: 100 })),
    // Any id a record holds (cut like a name), not only the ids profiles may take today.
    connectionId: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
    from: Type.Optional(Type.String({ maxLength: 40 })),
    to: Type.Optional(Type.String({ maxLength: 40 })),
    text: Type.Optional(Type.String({ maxLength: 200 })),
    order: Type.Optional(Type.Union([Type.Literal('asc'), Type.Literal('desc')])),
    offset: Type.Optional(Type.Integer({ minimum: 0 })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
  },
  { additionalProperties: false },
);

export const SettingsPatchSchema = Type.Object(
  {
    filesRoots: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 4096 }), { maxItems: 20 }),
    ),
    promptTimeoutSec: Type.Optional(Type.Integer({ minimum: 5, maximum: 3600 })),
    language: Type.Optional(oneOf(LANGUAGES)),
    theme: Type.Optional(
      Type.Union([Type.Literal('system'), Type.Literal('light'), Type.Literal('dark')]),
    ),
    /** Serve the services to MCP clients over Streamable HTTP on 127.0.0.1. */
    mcpHttp: Type.Optional(McpHttpSettingsSchema),
  },
  { additionalProperties: false },
);
export type SettingsPatch = Static<typeof SettingsPatchSchema>;

/**
 * A screen capture a page sends back (base64, so it fits the JSON bridge): the page scales it down
 * first; the browser host's bridge takes at most 1 MiB per message.
 */
export const ScreenCaptureSchema = Type.Object(
  {
    data: Type.String({ minLength: 1, maxLength: 900_000, pattern: '^[A-Za-z0-9+/=]+$' }),
    mimeType: Type.Union([Type.Literal('image/jpeg'), Type.Literal('image/png')]),
    width: Type.Integer({ minimum: 1, maximum: 16384 }),
    height: Type.Integer({ minimum: 1, maximum: 16384 }),
  },
  { additionalProperties: false },
);

/** A binary argument (voice chunks): checked by the hosts with ArrayBuffer.isView / instanceof. */
export const BinarySchema = Type.Unsafe<ArrayBuffer | Uint8Array>({ binary: true });

/** Argument tuples of every command. */
export const COMMAND_ARGS = {
  snapshot: Type.Tuple([]),
  connect: Type.Tuple([Id]),
  disconnect: Type.Tuple([Id]),
  setActiveConnection: Type.Tuple([Id]),
  /**
   * Checked here for its shape only: the core knows the kinds it was started with and checks the
   * kind's own fields (a test may add a kind the contract does not list).
   */
  saveConnection: Type.Unsafe<[ProfileInput, string?]>({
    type: 'array',
    items: [AnyProfileInputSchema, Secret],
    additionalItems: false,
    minItems: 1,
    maxItems: 2,
  }),
  deleteConnection: Type.Tuple([Id]),
  /** The login token of a profile; kept in the SecretStore, never in settings or logs. */
  setSecret: Type.Tuple([Id, Secret]),
  startDemo: Type.Tuple([]),
  sendText: Type.Tuple([Type.String({ minLength: 1, maxLength: 8000 })]),
  speak: Type.Tuple([Type.String({ minLength: 1, maxLength: 2000 })]),
  voiceStart: Type.Tuple([]),
  voiceChunk: Type.Tuple([BinarySchema]),
  voiceEnd: Type.Tuple([]),
  voiceCancel: Type.Tuple([]),
  setServiceEnabled: Type.Tuple([ServiceName, Type.Boolean()]),
  setServicePolicy: Type.Tuple([ServiceName, PolicySchema]),
  revokeGrants: Type.Tuple([ServiceName]),
  /**
   * Which services a connection is offered (by profile id, or `mcp-clients` for every MCP app
   * connected to the agent); null offers every enabled service again.
   */
  setOffer: Type.Tuple([OfferKeySchema, Type.Union([OfferSchema, Type.Null()])]),
  answerPrompt: Type.Tuple([Id, PromptAnswerSchema]),
  runService: Type.Tuple([ServiceName, Type.Record(Type.String(), Type.Unknown())]),
  queryAudit: Type.Tuple([AuditQuerySchema]),
  exportAudit: Type.Tuple([AuditQuerySchema, oneOf(AUDIT_EXPORT_FORMATS)]),
  verifyAudit: Type.Tuple([]),
  getSettings: Type.Tuple([]),
  saveSettings: Type.Tuple([SettingsPatchSchema]),
  listMcpServers: Type.Tuple([]),
  /** Save (add or edit) an MCP server; secrets it names go to the SecretStore. */
  saveMcpServer: Type.Tuple([McpServerInputSchema]),
  removeMcpServer: Type.Tuple([Id]),
  setMcpServerEnabled: Type.Tuple([Id, Type.Boolean()]),
  /** Trust what the server says about its tools (its read-only tools then run without asking). */
  trustMcpServer: Type.Tuple([Id, Type.Boolean()]),
  /** The policy of the server's tools that have none of their own; null goes back to the default. */
  setMcpServerPolicy: Type.Tuple([Id, Type.Union([PolicySchema, Type.Null()])]),
  restartMcpServer: Type.Tuple([Id]),
  readMcpLog: Type.Tuple([Id]),
  listMcpImportSources: Type.Tuple([]),
  /** Read servers from a file or pasted JSON; nothing is saved or started until confirmed. */
  previewMcpImport: Type.Tuple([McpImportRequestSchema]),
  confirmMcpImport: Type.Tuple([
    Id,
    Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { maxItems: 100 }),
  ]),
  /** Claude Desktop, Cursor, VS Code: their config files and the entry that runs this agent. */
  listMcpClients: Type.Tuple([]),
  /** The change adding our entry makes to one app's config file; nothing is written. */
  previewMcpClientSetup: Type.Tuple([oneOf(MCP_CLIENT_APPS)]),
  /** Write what a preview showed (after a backup); refused if the file changed since. */
  applyMcpClientSetup: Type.Tuple([Id]),
  listReminders: Type.Tuple([]),
  /** Cancel a pending reminder, or clear a fired or missed one from the list. */
  cancelReminder: Type.Tuple([Id]),
  /** The page's answer to a `screenRequest`: the capture, or null when the user declined. */
  answerScreen: Type.Tuple([Id, Type.Union([Type.Null(), ScreenCaptureSchema])]),
  /**
   * A new bearer token for the MCP HTTP endpoint, returned this once to show and copy: it cannot
   * be read back later. Clients holding the old one are disconnected and refused from then on.
   */
  resetMcpHttpToken: Type.Tuple([]),
} satisfies Record<string, TSchema>;

export type CommandName = keyof typeof COMMAND_ARGS;
export const COMMAND_NAMES = Object.keys(COMMAND_ARGS) as CommandName[];
export type CommandArgs<K extends CommandName> = Static<(typeof COMMAND_ARGS)[K]>;

export function isCommandName(name: unknown): name is CommandName {
  return typeof name === 'string' && Object.hasOwn(COMMAND_ARGS, name);
}

// ---------------------------------------------------------------------------------------------
// Views the UI renders (results and event payloads)

export type ProfileView = Profile & {
  /** The built-in simulator, started for a first look; not saved. */
  demo?: boolean;
  hasToken: boolean;
  /** Where it connects, for people: `host:port`, or the address without its token. */
  address: string;
};

export interface ConnectionView {
  profile: ProfileView;
  state: ConnectionState;
  registration?: RegistrationState;
  active: boolean;
  capabilities: ConnectionCapabilities;
}

export interface ServiceView {
  name: string;
  title: string;
  /** Written for the AI model: when to call it and how. */
  description: string;
  /** Written for people: what it does, in one short sentence (the UI translates known ones). */
  summary: string;
  group: ServiceGroup;
  risk: Risk;
  userOnly: boolean;
  enabled: boolean;
  policy: Policy;
  alwaysGrants: string[];
  parameters: Record<string, unknown>;
  /** An imported MCP tool: the server it comes from (the UI lists it under that server). */
  server?: { id: string; name: string; tool: string };
  /** What the server claims about the tool (hints, not trusted unless the server is). */
  hint?: McpToolHint;
  /** An imported tool's declared output schema, kept as the server sent it. */
  outputSchema?: Record<string, unknown>;
}

export interface SettingsView {
  filesRoots: string[];
  maxFileBytes: number;
  promptTimeoutSec: number;
  language: Language;
  theme: 'system' | 'light' | 'dark';
  dataDir: string;
  logDir?: string;
  /** Where secrets are kept, and a warning when that is weak (Linux without a keyring). */
  secrets: { kind: string; warning?: string };
  /** The host: Electron gets a folder picker, the browser host a text field. */
  host: 'electron' | 'browser' | 'terminal';
  /** Which services each connection is offered, by profile id or `mcp-clients` (absent: all). */
  offer: Offers;
  /** The MCP HTTP endpoint as set (a run's `--mcp-http` included). */
  mcpHttp: McpHttpSettings;
}

export interface Snapshot {
  version: string;
  /** The connection kinds this agent can hold, with what the form needs to edit each. */
  kinds: ProfileKindView[];
  connections: ConnectionView[];
  services: ServiceView[];
  chat: ChatItem[];
  prompts: PendingPrompt[];
  settings: SettingsView;
  /** The MCP HTTP endpoint: off, listening (its address) or failed (why). */
  mcpHttp: McpHttpState;
}

export type RunResult =
  | { ok: true; data: unknown; auditSeq?: number }
  | { ok: false; code: string; message: string; auditSeq?: number };

export interface CommandResults {
  snapshot: Snapshot;
  connect: void;
  disconnect: void;
  setActiveConnection: void;
  saveConnection: ProfileView;
  deleteConnection: void;
  setSecret: void;
  startDemo: ProfileView;
  sendText: { taskId: string };
  speak: { taskId: string };
  voiceStart: { taskId: string };
  voiceChunk: void;
  voiceEnd: void;
  voiceCancel: void;
  setServiceEnabled: void;
  setServicePolicy: void;
  revokeGrants: void;
  setOffer: void;
  answerPrompt: boolean;
  runService: RunResult;
  queryAudit: AuditPage;
  exportAudit: string;
  verifyAudit: AuditVerifyResult;
  getSettings: SettingsView;
  saveSettings: SettingsView;
  listMcpServers: McpServerView[];
  saveMcpServer: McpServerView;
  removeMcpServer: void;
  setMcpServerEnabled: void;
  trustMcpServer: void;
  setMcpServerPolicy: void;
  restartMcpServer: void;
  readMcpLog: McpLogLine[];
  listMcpImportSources: McpImportSourceView[];
  previewMcpImport: McpImportPreview;
  confirmMcpImport: McpServerView[];
  listMcpClients: McpClientView[];
  previewMcpClientSetup: McpClientSetupPreview;
  applyMcpClientSetup: McpClientSetupResult;
  listReminders: ReminderView[];
  cancelReminder: boolean;
  answerScreen: boolean;
  resetMcpHttpToken: string;
}

/** What every host implements and every bridge exposes. */
export type AgentApi = {
  [K in CommandName]: (...args: CommandArgs<K>) => Promise<CommandResults[K]>;
};

/**
 * A command failure as it crosses a bridge: a stable code the UI translates (with `params` for
 * the sentence), and the same in English for logs.
 */
export interface CommandError {
  code: CommandErrorCode;
  message: string;
  params?: Readonly<Record<string, string | number>>;
}

// ---------------------------------------------------------------------------------------------
// Events

export type EventPayloads = {
  connection: ConnectionView;
  connectionRemoved: { id: string };
  chat: ChatItem;
  /** Reply audio: 16-bit little-endian mono PCM. */
  audio: { connection: string; taskId: string; seq: number; sampleRate: number; pcm: ArrayBuffer };
  mood: { connection: string; taskId: string; emoji: string };
  listen: { connection: string; taskId: string; message: unknown };
  services: ServiceView[];
  prompt: PendingPrompt;
  promptResolved: { id: string; resolution: string };
  audit: AuditRecord;
  notice: {
    level: 'info' | 'warn' | 'error';
    message: string;
    connection?: ConnectionRef;
    /**
     * `protocol`: `message` is a technical line from a connection's protocol handling (an odd
     * frame, a dropped reply), in the dialect's own words. A UI shows a human line instead and
     * folds this text into details; a terminal may print it as is.
     */
    kind?: 'protocol';
    /** The agent's own notice in words for people, which a UI shows translated instead. */
    words?: NoticeWords;
  };
  settings: SettingsView;
  /** The whole reminder list, after any change. */
  reminders: ReminderView[];
  /** A reminder rang (or was found missed at start): show it, and speak it where `speech` says. */
  reminder: ReminderFired;
  /** Capture the screen for a call (browser host). */
  screenRequest: ScreenRequest;
  /** The request was answered, timed out or withdrawn: close its dialog. */
  screenRequestDone: { id: string };
  /** An MCP server's state, tools or configuration changed. */
  mcpServer: McpServerView;
  mcpServerRemoved: { id: string };
  /** The MCP HTTP endpoint started, stopped or failed. */
  mcpHttp: McpHttpState;
};

export type EventName = keyof EventPayloads;
/** Every event, once: `satisfies` makes leaving one out (or adding an unknown one) a type error. */
const EVENT_SET = {
  connection: true,
  connectionRemoved: true,
  chat: true,
  audio: true,
  mood: true,
  listen: true,
  services: true,
  prompt: true,
  promptResolved: true,
  audit: true,
  notice: true,
  settings: true,
  mcpServer: true,
  mcpServerRemoved: true,
  reminders: true,
  reminder: true,
  screenRequest: true,
  screenRequestDone: true,
  mcpHttp: true,
} as const satisfies Record<EventName, true>;
export const EVENT_NAMES = Object.keys(EVENT_SET) as EventName[];

export function isEventName(name: unknown): name is EventName {
  return typeof name === 'string' && (EVENT_NAMES as string[]).includes(name);
}
