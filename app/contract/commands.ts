/**
 * The one API between the core and any UI (DESIGN §4): command names, their argument schemas and
 * result types. Schemas are TypeBox, so the TypeScript types and the JSON Schemas the hosts
 * validate with (ajv) come from one source and cannot drift. Pure TS: the renderer imports this.
 */
import { type Static, type TSchema, Type } from '@sinclair/typebox';
import type { AuditPage, AuditRecord, AuditVerifyResult } from './audit.js';
import type { ChatItem } from './chat.js';
import type {
  ConnectionCapabilities,
  ConnectionRef,
  ConnectionState,
  RegistrationState,
} from './connection.js';
import type { CommandErrorCode } from './errors.js';
import type { PendingPrompt, Policy, Risk, ServiceGroup } from './policy.js';
import {
  AnyProfileInputSchema,
  type Profile,
  type ProfileInput,
  type ProfileKindView,
} from './profiles/index.js';

export * from './profiles/index.js';

const Id = Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_.:-]+$' });
const ServiceName = Type.String({ minLength: 1, maxLength: 64, pattern: '^[a-z][a-z0-9_]*$' });
const Secret = Type.String({ maxLength: 16384 });

export const PolicySchema = Type.Union([
  Type.Literal('allow'),
  Type.Literal('ask'),
  Type.Literal('deny'),
]);
export const PromptAnswerSchema = Type.Union([
  Type.Literal('once'),
  Type.Literal('session'),
  Type.Literal('always'),
  Type.Literal('deny'),
]);

const Decision = Type.Union([
  Type.Literal('auto'),
  Type.Literal('allowed-once'),
  Type.Literal('allowed-session'),
  Type.Literal('allowed-always'),
  Type.Literal('denied'),
  Type.Literal('timeout'),
  Type.Literal('disabled'),
  Type.Literal('invalid'),
  Type.Literal('user-run'),
  Type.Literal('duplicate'),
]);
export const AuditQuerySchema = Type.Object(
  {
    service: Type.Optional(Type.String({ maxLength: 64 })),
    decision: Type.Optional(Decision),
    outcome: Type.Optional(
      Type.Union([Type.Literal('ok'), Type.Literal('error'), Type.Literal('refused')]),
    ),
    connection: Type.Optional(Type.String({ maxLength: 100 })),
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
    language: Type.Optional(Type.Union([Type.Literal('en'), Type.Literal('zh-CN')])),
    theme: Type.Optional(
      Type.Union([Type.Literal('system'), Type.Literal('light'), Type.Literal('dark')]),
    ),
  },
  { additionalProperties: false },
);
export type SettingsPatch = Static<typeof SettingsPatchSchema>;

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
  answerPrompt: Type.Tuple([Id, PromptAnswerSchema]),
  runService: Type.Tuple([ServiceName, Type.Record(Type.String(), Type.Unknown())]),
  queryAudit: Type.Tuple([AuditQuerySchema]),
  exportAudit: Type.Tuple([
    AuditQuerySchema,
    Type.Union([Type.Literal('json'), Type.Literal('csv')]),
  ]),
  verifyAudit: Type.Tuple([]),
  getSettings: Type.Tuple([]),
  saveSettings: Type.Tuple([SettingsPatchSchema]),
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
}

export interface SettingsView {
  filesRoots: string[];
  maxFileBytes: number;
  promptTimeoutSec: number;
  language: 'en' | 'zh-CN';
  theme: 'system' | 'light' | 'dark';
  dataDir: string;
  logDir?: string;
  /** Where secrets are kept, and a warning when that is weak (Linux without a keyring). */
  secrets: { kind: string; warning?: string };
  /** The host: Electron gets a folder picker, the browser host a text field. */
  host: 'electron' | 'browser' | 'terminal';
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
  answerPrompt: boolean;
  runService: RunResult;
  queryAudit: AuditPage;
  exportAudit: string;
  verifyAudit: AuditVerifyResult;
  getSettings: SettingsView;
  saveSettings: SettingsView;
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
  notice: { level: 'info' | 'warn' | 'error'; message: string; connection?: ConnectionRef };
  settings: SettingsView;
};

export type EventName = keyof EventPayloads;
export const EVENT_NAMES: EventName[] = [
  'connection',
  'connectionRemoved',
  'chat',
  'audio',
  'mood',
  'listen',
  'services',
  'prompt',
  'promptResolved',
  'audit',
  'notice',
  'settings',
];

export function isEventName(name: unknown): name is EventName {
  return typeof name === 'string' && (EVENT_NAMES as string[]).includes(name);
}
