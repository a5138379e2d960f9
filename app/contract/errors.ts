/**
 * Stable error codes of the one gate (DESIGN §3). Each dialect maps them to its own wire shape;
 * the UI translates them. Never rename one: audit logs keep them forever.
 */
export const ERROR_CODES = [
  'unknown_service',
  'disabled',
  'invalid_params',
  'denied',
  'prompt_timeout',
  'no_prompt_ui',
  'service_error',
  'service_timeout',
  'path_outside_roots',
  'path_invalid',
  'file_exists',
  'file_too_large',
  'disk_full',
  'cancelled',
  'duplicate',
  /** The audit log could not record the call before it would run, so it was not run. */
  'audit_unavailable',
  /** What was named does not exist: an app not in list_apps, a reminder id never set. */
  'not_found',
  /** This computer, host or connection cannot do it (a platform without the command, no screen). */
  'unsupported',
  /** A bound was reached (too many reminders waiting): nothing was added. */
  'limit_reached',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

/** Why a command failed on its way to the core (the host's checks, the bridge). */
export const BRIDGE_ERROR_CODES = [
  'invalid_args',
  'unknown_command',
  'forbidden',
  'failed',
  /** The UI has no live bridge to the core right now. */
  'not_connected',
  /** The bridge closed before the command's answer came. */
  'connection_lost',
  /** This UI has too many commands waiting already; the command was not run. */
  'busy',
] as const;
export type BridgeErrorCode = (typeof BRIDGE_ERROR_CODES)[number];

/** Why the core refused a command (CoreApi): stable codes the UI translates. */
export const COMMAND_REFUSALS = [
  'unknown_connection',
  'unknown_service',
  'demo_readonly',
  'demo_unavailable',
  'needs_token',
  'invalid_profile',
  'invalid_settings',
  'no_active_connection',
  /** The active connection exists but is not up right now (connecting, reconnecting, offline). */
  'connection_not_ready',
  'not_supported',
  'empty_text',
  'no_voice_turn',
  /** One-click setup: the other app's folder is not there, so it is not installed. */
  'mcp_client_not_installed',
  /** One-click setup: the other app's config file is not JSON we can edit; it was left alone. */
  'mcp_client_config_invalid',
  /** One-click setup: the preview expired or the file changed since; nothing was written. */
  'mcp_client_setup_stale',
  /** One-click setup: the config file could not be read or written (permissions, disk). */
  'mcp_client_file_error',
] as const;
export type CommandRefusalCode = (typeof COMMAND_REFUSALS)[number];

export type CommandErrorCode = BridgeErrorCode | CommandRefusalCode;

/**
 * A command the core refused. `code` and `params` are what the UI shows (translated); `message`
 * is the same in English for logs and terminals.
 */
export class CommandRefusal extends Error {
  constructor(
    readonly code: CommandRefusalCode,
    message: string,
    readonly params: Readonly<Record<string, string | number>> = {},
  ) {
    super(message);
    this.name = 'CommandRefusal';
  }
}

const KNOWN_COMMAND_ERRORS: ReadonlySet<string> = new Set([
  ...BRIDGE_ERROR_CODES,
  ...COMMAND_REFUSALS,
]);

export function isCommandErrorCode(code: unknown): code is CommandErrorCode {
  return typeof code === 'string' && KNOWN_COMMAND_ERRORS.has(code);
}

/**
 * A command failure as the UI keeps it, from whatever a bridge delivered: a known code (else
 * `failed`), the sentence, and only string/number params.
 */
export function readCommandError(
  value: unknown,
  fallback: string,
): {
  code: CommandErrorCode;
  message: string;
  params: Record<string, string | number>;
} {
  const v = (value && typeof value === 'object' ? value : {}) as {
    code?: unknown;
    message?: unknown;
    params?: unknown;
  };
  const params: Record<string, string | number> = {};
  if (v.params && typeof v.params === 'object')
    for (const [k, p] of Object.entries(v.params).slice(0, 20))
      if (typeof p === 'string' || typeof p === 'number') params[k] = p;
  return {
    code: isCommandErrorCode(v.code) ? v.code : 'failed',
    message: typeof v.message === 'string' && v.message ? v.message : fallback,
    params,
  };
}
