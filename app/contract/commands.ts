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
import type { PendingPrompt, Policy, Risk, ServiceGroup } from './policy.js';
import type { ReminderFired, ReminderView, ScreenRequest } from './reminders.js';

const Id = Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_.:-]+$' });
const ServiceName = Type.String({ minLength: 1, maxLength: 64, pattern: '^[a-z][a-z0-9_]*$' });
/**
 * Patterns of profile fields: one source for the schemas below, the connection form and the
 * terminal flags (each builds a RegExp from them).
 */
export const PROFILE_PATTERNS = {
  /** Values sent in the Advent login must not contain `##` (it separates the fields). */
  loginValue: '^(?!.*##)[^\\r\\n]*$',
  wsUrl: '^wss?://[^\\s]+$',
  mac: '^[0-9A-Fa-f]{2}([:-][0-9A-Fa-f]{2}){5}$',
  uuid: '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$',
} as const;

const LoginValue = Type.String({ maxLength: 200, pattern: PROFILE_PATTERNS.loginValue });

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

const Name = Type.String({ minLength: 1, maxLength: 100 });
/** A WebSocket address; a token the user pasted inside it is moved to the SecretStore on save. */
const WsUrl = Type.String({ minLength: 1, maxLength: 2048, pattern: PROFILE_PATTERNS.wsUrl });
const Mac = Type.String({ pattern: PROFILE_PATTERNS.mac });
const Uuid = Type.String({ pattern: PROFILE_PATTERNS.uuid });
const AutoConnect = Type.Optional(Type.Boolean());

/** Advent TCP server (protocols/advent.md). Token: SecretStore `profile:<id>:token`. */
const adventFields = {
  kind: Type.Literal('advent'),
  name: Name,
  host: Type.String({ minLength: 1, maxLength: 255, pattern: '^[^\\s/]+$' }),
  port: Type.Integer({ minimum: 1, maximum: 65535 }),
  voiceId: Type.Optional(LoginValue),
  lang: Type.Optional(LoginValue),
  format: Type.Optional(Type.Union([Type.Literal('pcm'), Type.Literal('opus')])),
  inputAudioFormat: Type.Optional(Type.Union([Type.Literal('pcm'), Type.Literal('opus')])),
  /** Byte order of the 2-byte Opus packet length (protocol §6.2: unknown; 'be' is the guess). */
  opusLengthOrder: Type.Optional(Type.Union([Type.Literal('be'), Type.Literal('le')])),
  mode: Type.Optional(
    Type.Union([Type.Literal('manual'), Type.Literal('vad'), Type.Literal('auto')]),
  ),
  emojiMode: Type.Optional(LoginValue),
  autoConnect: AutoConnect,
};

/** XiaoZhi device protocol (protocols/xiaozhi.md B). Optional token: SecretStore. */
const xiaozhiFields = {
  kind: Type.Literal('xiaozhi'),
  name: Name,
  url: WsUrl,
  /** Device-Id (a MAC); generated once and kept when left empty. */
  deviceId: Type.Optional(Mac),
  /** Client-Id (a UUID); generated once and kept when left empty. */
  clientId: Type.Optional(Uuid),
  /** Binary audio framing: 1 raw Opus, 2 16-byte header, 3 4-byte header. */
  protocolVersion: Type.Optional(Type.Union([Type.Literal(1), Type.Literal(2), Type.Literal(3)])),
  /** Identity as query parameters instead of headers (some servers want that). */
  authInQuery: Type.Optional(Type.Boolean()),
  /** Reconnect after a service toggle so the server lists tools again. Default on. */
  reconnectOnToolsChanged: Type.Optional(Type.Boolean()),
  /** Send `{"type":"ping"}` every minute while idle (some servers answer `pong`). */
  keepAlive: Type.Optional(Type.Boolean()),
  /** Hands-free: `auto` (the server detects the end of speech); push-to-talk uses `manual`. */
  listenMode: Type.Optional(Type.Union([Type.Literal('manual'), Type.Literal('auto')])),
  autoConnect: AutoConnect,
};

/** XiaoZhi MCP endpoint (protocols/xiaozhi.md B′). The URL's token lives in the SecretStore. */
const endpointFields = {
  kind: Type.Literal('endpoint'),
  name: Name,
  url: WsUrl,
  autoConnect: AutoConnect,
};

/** Robot JSON-RPC server (protocols/robot-rpc.md). No token: the device is its MAC. */
const robotFields = {
  kind: Type.Literal('robot'),
  name: Name,
  url: WsUrl,
  /** `mac_addr` sent when registering; generated once and kept when left empty. */
  macAddr: Type.Optional(Mac),
  autoConnect: AutoConnect,
};

const closed = { additionalProperties: false } as const;

/** A profile as the UI sends it: `id` absent for a new one. */
export const ProfileInputSchema = Type.Union([
  Type.Object({ id: Type.Optional(Id), ...adventFields }, closed),
  Type.Object({ id: Type.Optional(Id), ...xiaozhiFields }, closed),
  Type.Object({ id: Type.Optional(Id), ...endpointFields }, closed),
  Type.Object({ id: Type.Optional(Id), ...robotFields }, closed),
]);
/** A profile as saved in settings. Tokens are never here: they live in the SecretStore. */
export const ProfileSchema = Type.Union([
  Type.Object({ id: Id, ...adventFields }, closed),
  Type.Object({ id: Id, ...xiaozhiFields }, closed),
  Type.Object({ id: Id, ...endpointFields }, closed),
  Type.Object({ id: Id, ...robotFields }, closed),
]);
export type Profile = Static<typeof ProfileSchema>;
export type ProfileKind = Profile['kind'];
export const PROFILE_KINDS: readonly ProfileKind[] = ['advent', 'xiaozhi', 'endpoint', 'robot'];
export type AdventProfile = Extract<Profile, { kind: 'advent' }>;
/** What each kind of connection can carry (the UI disables the rest and says why). */
export const CAPABILITIES: Record<ProfileKind, ConnectionCapabilities> = {
  advent: { chat: true, voice: true, speak: true },
  xiaozhi: { chat: true, voice: true, speak: false },
  endpoint: { chat: false, voice: false, speak: false },
  robot: { chat: true, voice: true, speak: false },
};
export type XiaozhiProfile = Extract<Profile, { kind: 'xiaozhi' }>;
export type EndpointProfile = Extract<Profile, { kind: 'endpoint' }>;
export type RobotProfile = Extract<Profile, { kind: 'robot' }>;
export type ProfileInput = Static<typeof ProfileInputSchema>;

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
  saveConnection: Type.Tuple([ProfileInputSchema]),
  deleteConnection: Type.Tuple([Id]),
  /** The login token of a profile; kept in the SecretStore, never in settings or logs. */
  setSecret: Type.Tuple([Id, Type.String({ maxLength: 16384 })]),
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
  listReminders: Type.Tuple([]),
  /** Cancel a pending reminder, or clear a fired or missed one from the list. */
  cancelReminder: Type.Tuple([Id]),
  /** The page's answer to a `screenRequest`: the capture, or null when the user declined. */
  answerScreen: Type.Tuple([Id, Type.Union([Type.Null(), ScreenCaptureSchema])]),
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
  host: 'electron' | 'browser';
}

export interface Snapshot {
  version: string;
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
  listReminders: ReminderView[];
  cancelReminder: boolean;
  answerScreen: boolean;
}

/** What every host implements and every bridge exposes. */
export type AgentApi = {
  [K in CommandName]: (...args: CommandArgs<K>) => Promise<CommandResults[K]>;
};

/** A command failure as it crosses a bridge: a stable code and a sentence for the user. */
export interface CommandError {
  code: 'invalid_args' | 'unknown_command' | 'forbidden' | 'failed';
  message: string;
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
  /** The whole reminder list, after any change. */
  reminders: ReminderView[];
  /** A reminder rang (or was found missed at start): show it, and speak it where `speech` says. */
  reminder: ReminderFired;
  /** Capture the screen for a call (browser host). */
  screenRequest: ScreenRequest;
  /** The request was answered, timed out or withdrawn: close its dialog. */
  screenRequestDone: { id: string };
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
  'reminders',
  'reminder',
  'screenRequest',
  'screenRequestDone',
];

export function isEventName(name: unknown): name is EventName {
  return typeof name === 'string' && (EVENT_NAMES as string[]).includes(name);
}
