/**
 * The Electron host's log: electron-log to a file in the app's log folder and to the console,
 * with every message passed through `redact` first, so tokens never reach a log line, whatever
 * form they arrive in (a JWT in an error message, `?token=` in a URL, an Authorization header, a
 * `password` field of a logged object).
 */
import path from 'node:path';
import { ipcMain } from 'electron';
import log from 'electron-log/main';
import { isSecretKey } from '../../app/audit/redact.js';

export const REDACTED = '[redacted]';

const PATTERNS: readonly [RegExp, string][] = [
  // JWTs: a base64url JSON header ("eyJ" is `{"`), payload and signature.
  [/\beyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*/g, REDACTED],
  // Any other three long base64url parts joined by dots (opaque signed tokens).
  [/\b[A-Za-z0-9_-]{20,}\.[A-Za-z0-9_-]{20,}\.[A-Za-z0-9_-]{20,}\b/g, REDACTED],
  // Authorization schemes followed by their credential.
  [/\b(Bearer|Basic|Token)\s+[A-Za-z0-9._~+/=-]+/gi, `$1 ${REDACTED}`],
  // `name=value` and `name: value` where the name says secret (query strings, headers, logfmt, JSON).
  [
    /(["']?)\b([\w-]*(?:token|secret|password|passwd|api[_-]?key|authorization|cookie|credential)[\w-]*)\1(\s*[=:]\s*)(["']?)(?!\[redacted\])(?:Bearer\s+|Basic\s+)?[^\s"'&,;}]+\4/gi,
    `$1$2$1$3$4${REDACTED}$4`,
  ],
];

/** Masks secrets in free text. Pure: tested on its own. */
export function redact(text: string): string {
  let out = text;
  for (const [pattern, replacement] of PATTERNS) out = out.replace(pattern, replacement);
  return out;
}

const MAX_DEPTH = 6;

/** A copy of a logged value with secret-named keys masked and every string passed to `redact`. */
export function redactValue(value: unknown, depth = 0, seen = new WeakSet<object>()): unknown {
  if (typeof value === 'string') return redact(value);
  if (value === null || typeof value !== 'object') return value;
  if (seen.has(value)) return '[Circular]';
  if (depth >= MAX_DEPTH) return Array.isArray(value) ? '[…array]' : '[…object]';
  if (ArrayBuffer.isView(value) || value instanceof ArrayBuffer)
    return `[binary ${value.byteLength} bytes]`;
  seen.add(value);
  try {
    if (value instanceof Error) {
      const copy = new Error(redact(value.message));
      copy.name = value.name;
      copy.stack = value.stack === undefined ? undefined : redact(value.stack);
      return copy;
    }
    if (Array.isArray(value)) return value.map((v) => redactValue(v, depth + 1, seen));
    if (value instanceof Map)
      return new Map(
        [...value].map(([k, v]) => [
          k,
          typeof k === 'string' && isSecretKey(k) ? REDACTED : redactValue(v, depth + 1, seen),
        ]),
      );
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value))
      out[k] = isSecretKey(k) ? REDACTED : redactValue(v, depth + 1, seen);
    return out;
  } finally {
    seen.delete(value);
  }
}

type LogMessage = Parameters<(typeof log.hooks)[number]>[0];

/** The electron-log hook: every transport gets the redacted message. */
export function redactHook(message: LogMessage): LogMessage {
  return { ...message, data: message.data.map((d: unknown) => redactValue(d)) };
}

export type Log = Pick<typeof log, 'error' | 'warn' | 'info' | 'debug'>;

/**
 * electron-log's channel: on import, electron-log/main listens (ipcMain.on and ipcMain.handle) on
 * it for renderer log lines and options, without asking who calls. Our renderer never logs
 * through it, and every channel of ours goes through handle()'s sender check.
 */
export const ELECTRON_LOG_CHANNEL = '__ELECTRON_LOG__';

/**
 * Configure electron-log once, before anything logs. No `log.initialize()`: that would inject
 * electron-log's own preload and IPC into our sandboxed renderer, which logs nothing of value.
 * Its IPC transport is turned off (in development it sends every main-process line, tokens
 * redacted or not, to every window) and its unchecked channel removed.
 */
export function setupLog({
  logDir,
  level = 'info',
}: {
  logDir?: string;
  level?: 'info' | 'debug';
}): Log {
  log.hooks.push(redactHook);
  log.transports.file.level = level;
  log.transports.file.maxSize = 5 * 1024 * 1024;
  if (logDir) log.transports.file.resolvePathFn = () => path.join(logDir, 'main.log');
  log.transports.console.level = process.env.ADVENT_LOG_CONSOLE === '0' ? false : level;
  // Absent outside Electron (electron-log adds it only when process.versions.electron is set).
  if (log.transports.ipc) log.transports.ipc.level = false;
  ipcMain.removeHandler(ELECTRON_LOG_CHANNEL);
  ipcMain.removeAllListeners(ELECTRON_LOG_CHANNEL);
  log.errorHandler.startCatching({ showDialog: false });
  return log;
}

export { log };
