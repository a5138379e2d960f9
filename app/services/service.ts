import type { Clock } from '../clock.js';
import type { Dialect } from '../contract/audit.js';
import type { ConnectionRef } from '../contract/connection.js';
import type { ErrorCode } from '../contract/errors.js';
import type { McpToolHint } from '../contract/mcp.js';
import type { Risk, ServiceGroup } from '../contract/policy.js';
import type { FilesSandbox } from './files/sandbox.js';

/** A JSON Schema object describing a service's params (checked against the meta-schema on registration). */
export interface ParamSchema {
  type: 'object';
  properties?: Record<string, unknown>;
  required?: string[];
  additionalProperties?: boolean | Record<string, unknown>;
  [keyword: string]: unknown;
}

export interface ServiceContext {
  /** Aborted when the service's time is up or the session stops; long work must watch it. */
  signal: AbortSignal;
  callId: string;
  connection: ConnectionRef;
  files: FilesSandbox;
  clock: Clock;
  /** The dialect of the call: what its result can carry (MCP dialects carry images). */
  dialect?: Dialect;
  /** Where the server takes pictures to explain (XiaoZhi `capabilities.vision`), if it said. */
  vision?: VisionTarget;
}

/**
 * A XiaoZhi server's vision service, announced in MCP `initialize` as `capabilities.vision`
 * ({url, token}); the device identity goes along as headers, as the firmware sends them.
 */
export interface VisionTarget {
  url: string;
  token?: string;
  deviceId?: string;
  clientId?: string;
}

/** What a call would do, computed before permission is asked, so the prompt can say it plainly. */
export interface CallPreview {
  /** One human sentence, e.g. "Create file notes/todo.txt (1.2 KB) in ~/Documents/Advent Agent". */
  summary: string;
  resolvedPaths: string[];
  /**
   * An action that needs its own approval beyond the service's (e.g. 'overwrite'): it is never
   * auto-allowed by an `allow` policy and its grants are remembered under `name:action`.
   */
  escalation?: string;
}

export interface Service<P = Record<string, unknown>> {
  /** `[a-z][a-z0-9_]*` */
  name: string;
  title: string;
  /** For the AI model: when to call it and how. Servers see this, never the UI. */
  description: string;
  /** For people: what it does, one short sentence (the UI shows this, not `description`). */
  summary?: string;
  /** Where the Services page lists it (default 'other'). */
  group?: ServiceGroup;
  parameters: ParamSchema;
  risk: Risk;
  /** Runnable by the user from the UI only; never offered to a server. */
  userOnly?: boolean;
  timeoutMs: number;
  /** Called after params validate and before the permission check. Throws ServiceFailure to refuse early. */
  preview?(params: P, ctx: ServiceContext): Promise<CallPreview> | CallPreview;
  /**
   * Does the work. `plan` is what `preview` returned and the user approved (undefined for a
   * service without a preview): the service does exactly that and nothing beyond it.
   */
  run(params: P, ctx: ServiceContext, plan?: CallPreview): Promise<unknown>;
  /** An imported MCP tool: its server (`id` of the settings entry) and its name there. */
  server?: { id: string; name: string; tool: string };
  /** What an imported tool's server claims about it (MCP annotations): shown, not relied on. */
  hint?: McpToolHint;
  /** An imported tool's declared output schema, its `$ref`s inlined within bounds (mcp/tools.ts). */
  outputSchema?: Record<string, unknown>;
  /**
   * The schema servers are shown when it must differ from `parameters` (an imported tool's
   * `$ref`s inlined, where `parameters` is the same schema prepared for the validator).
   */
  serverParameters?: ParamSchema;
}

/**
 * The one exception a service throws on purpose. The dispatcher turns it into an error value with
 * this code; any other exception becomes `service_error`. The message is read by the AI model, so
 * it says what went wrong and what to do instead.
 */
export class ServiceFailure extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'ServiceFailure';
  }
}

export const SERVICE_NAME = /^[a-z][a-z0-9_]*$/;
