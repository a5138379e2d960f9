import type { JSONSchemaType } from 'ajv';
import { type Static, Type } from '@sinclair/typebox';
import {
  type AdventProfile,
  Id,
  type Language,
  type Profile,
  ProfileName,
} from '../contract/profiles/index.js';

/** What every saved profile has; the rest is its kind's business. */
const AnyProfileSchema = Type.Object(
  { id: Id, kind: Type.String({ minLength: 1, maxLength: 40 }), name: ProfileName },
  { additionalProperties: true },
);
export type AnyProfile = Static<typeof AnyProfileSchema>;
import type { Policy } from '../contract/policy.js';
import { type McpServerConfig, McpServerConfigSchema } from '../contract/mcp.js';
import { type Offers, OffersSchema } from '../contract/offer.js';
import type { McpHttpSettings } from '../contract/mcp-serve.js';

/** Profiles are defined by the contract (the UI edits them); the token lives in the SecretStore under `profile:<id>:token`. */
export type { AdventProfile, Profile };

export interface ServiceSettings {
  enabled?: boolean;
  policy?: Policy;
}

export interface Settings {
  version: 1;
  files: {
    /** Absolute folders create_file and every file service may write into. */
    roots: string[];
    maxFileBytes: number;
  };
  promptTimeoutSec: number;
  services: Record<string, ServiceSettings>;
  /** Grant keys (service name or `name:action`) the user chose "Always allow" for. */
  alwaysGrants: string[];
  connections: Profile[];
  language: Language;
  theme: 'system' | 'light' | 'dark';
  /**
   * Imported MCP servers, in the order the user added them (that order settles name collisions).
   * Optional so settings written before the MCP hub stay valid.
   */
  mcpServers?: McpServerConfig[];
  /**
   * Which services each connection is offered, by profile id (`mcp-clients`: every MCP app
   * connected to the agent). A connection with none is offered every enabled service.
   */
  offer?: Offers;
  /** The MCP HTTP endpoint for other apps (off when absent). */
  mcpHttp?: McpHttpSettings;
}

export const settingsSchema: JSONSchemaType<Settings> = {
  type: 'object',
  additionalProperties: false,
  required: [
    'version',
    'files',
    'promptTimeoutSec',
    'services',
    'alwaysGrants',
    'connections',
    'language',
    'theme',
  ],
  properties: {
    version: { type: 'integer', const: 1 },
    files: {
      type: 'object',
      additionalProperties: false,
      required: ['roots', 'maxFileBytes'],
      properties: {
        roots: { type: 'array', items: { type: 'string', minLength: 1 } },
        maxFileBytes: { type: 'integer', minimum: 1, maximum: 1024 * 1024 * 1024 },
      },
    },
    promptTimeoutSec: { type: 'integer', minimum: 5, maximum: 3600 },
    services: {
      type: 'object',
      required: [],
      additionalProperties: {
        type: 'object',
        additionalProperties: false,
        required: [],
        properties: {
          enabled: { type: 'boolean', nullable: true },
          policy: { type: 'string', enum: ['allow', 'ask', 'deny'], nullable: true },
        },
      },
    },
    alwaysGrants: { type: 'array', items: { type: 'string', minLength: 1 }, uniqueItems: true },
    // The common shape here; each profile is then checked against its kind's own schema (the
    // contract's TypeBox schema, by validate.ts), for the kinds the agent was started with.
    connections: {
      type: 'array',
      items: AnyProfileSchema as unknown as JSONSchemaType<Profile>,
    },
    language: { type: 'string', enum: ['en', 'zh-CN'] },
    theme: { type: 'string', enum: ['system', 'light', 'dark'] },
    mcpServers: {
      type: 'array',
      nullable: true,
      maxItems: 100,
      items: McpServerConfigSchema as unknown as JSONSchemaType<McpServerConfig>,
    },
    offer: { ...(OffersSchema as unknown as JSONSchemaType<Offers>), nullable: true },
    mcpHttp: {
      type: 'object',
      nullable: true,
      additionalProperties: false,
      required: ['enabled', 'port'],
      properties: {
        enabled: { type: 'boolean' },
        port: { type: 'integer', minimum: 1024, maximum: 65535 },
      },
    },
  },
};

export const DEFAULT_MAX_FILE_BYTES = 10 * 1024 * 1024;
export const DEFAULT_PROMPT_TIMEOUT_SEC = 60;

export function defaultSettings(defaultRoot: string): Settings {
  return {
    version: 1,
    files: { roots: [defaultRoot], maxFileBytes: DEFAULT_MAX_FILE_BYTES },
    promptTimeoutSec: DEFAULT_PROMPT_TIMEOUT_SEC,
    services: {},
    alwaysGrants: [],
    connections: [],
    language: 'en',
    theme: 'system',
  };
}
