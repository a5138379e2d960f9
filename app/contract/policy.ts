import type { ConnectionRef } from './connection.js';

export const POLICIES = ['allow', 'ask', 'deny'] as const;
export type Policy = (typeof POLICIES)[number];

export const PROMPT_ANSWERS = ['once', 'session', 'always', 'deny'] as const;
export type PromptAnswer = (typeof PROMPT_ANSWERS)[number];

/**
 * How much a service can do (DESIGN §3): `read` harmless facts (auto-allowed), `private` carries
 * the user's data off the computer (file contents, clipboard, screen: asks), `write` changes
 * something, `system` acts on the computer itself.
 */
export const RISKS = ['read', 'private', 'write', 'system'] as const;
export type Risk = (typeof RISKS)[number];

/**
 * How the Services page groups services. Imported MCP tools are grouped under their server
 * instead (ServiceView.server).
 */
export const SERVICE_GROUPS = [
  'time',
  'files',
  'apps',
  'clipboard',
  'system',
  'screen',
  'other',
] as const;
export type ServiceGroup = (typeof SERVICE_GROUPS)[number];

/** A permission question waiting for the user (DESIGN §3 Broker). */
export interface PendingPrompt {
  id: string;
  connection: ConnectionRef;
  service: string;
  /** The key a remembered grant is stored under: the service name, or `name:action` for escalations like overwrite. */
  grantKey: string;
  params: unknown;
  /** One human sentence: "Create file notes/todo.txt (1.2 KB) in ~/Documents/Advent Agent". */
  summary: string;
  resolvedPaths: string[];
  /** Epoch ms. */
  expiresAt: number;
  /**
   * An imported MCP tool: its server and what the server claims about it (the UI words it, e.g.
   * "The server says this only reads"). Claims from an untrusted server are shown, not relied on.
   */
  hint?: PromptHint;
}

export interface PromptHint {
  server: string;
  trusted: boolean;
  readOnly?: boolean;
  destructive?: boolean;
  openWorld?: boolean;
}

/**
 * How a prompt ended: the user's answer, no answer in time, `cancelled` (no window could ask:
 * none open, the last one left, the app closing), or `withdrawn` (the server that asked stopped
 * waiting: it cancelled the call or its connection ended).
 */
export type PromptResolution = PromptAnswer | 'timeout' | 'cancelled' | 'withdrawn';
