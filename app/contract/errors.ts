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
  /** What was named does not exist: an app not in list_apps, a reminder id never set. */
  'not_found',
  /** This computer, host or connection cannot do it (a platform without the command, no screen). */
  'unsupported',
  /** A bound was reached (too many reminders waiting): nothing was added. */
  'limit_reached',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];
