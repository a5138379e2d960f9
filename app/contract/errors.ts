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
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];
