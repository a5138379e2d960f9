/** Human text for the contract's codes and states, in the current language. */
import type { TFunction } from 'i18next';
import {
  COMMAND_REFUSALS,
  type CommandRefusalCode,
  type ConnectionState,
  ERROR_CODES,
  type ErrorCode,
  type NoticeWords,
  type RegistrationState,
} from '../../app/contract/index.js';
import { BridgeError } from '../bridge/types.js';
import { formatBytes, formatDateTime, formatTime, secondsUntil } from './format.js';

/** The sentence for a failed command: bridge problems translated, the core's message as is. */
export function errorText(t: TFunction, err: unknown): string {
  if (err instanceof BridgeError) {
    if (err.code === 'not_connected') return t('bridgeError.not_connected');
    if (err.code === 'connection_lost') return t('bridgeError.connection_lost');
    if (err.code === 'busy') return t('bridgeError.busy');
    if (isCommandRefusal(err.code)) {
      // "cannot carry chat / voice / spoken text" reads differently in each language.
      const key =
        err.code === 'not_supported'
          ? `commandRefusal.not_supported_${String(err.params.what)}`
          : `commandRefusal.${err.code}`;
      return t(key as 'commandRefusal.empty_text', { ...err.params, detail: err.message });
    }
    return err.message;
  }
  if (err instanceof Error) return err.message;
  if (err && typeof err === 'object' && typeof (err as { message?: unknown }).message === 'string')
    return (err as { message: string }).message;
  return String(err);
}

/**
 * The agent's own notice in the reader's language (a time in the reader's date format, a size as
 * "8.0 MB").
 */
export function noticeText(
  t: TFunction,
  words: NoticeWords,
  lang: string,
  fallback?: string,
): string {
  const text = wordsOf(t, words, lang);
  // A key this window's build does not know (a core newer than it) would show as the key itself:
  // the core's own sentence says it instead.
  return text === words.key && fallback !== undefined ? fallback : text;
}

function wordsOf(t: TFunction, words: NoticeWords, lang: string): string {
  if (words.key === 'notice.tokenExpiring')
    return t(words.key, { ...words.params, at: formatDateTime(words.params.at, lang) });
  if (words.key === 'notice.settingsTooLarge')
    return t(words.key, { ...words.params, bytes: formatBytes(words.params.bytes) });
  if (words.key === 'notice.mcpClientCutOff')
    return t(words.key, { bytes: formatBytes(words.params.bytes) });
  return t(words.key, words.params);
}

function isCommandRefusal(code: string): code is CommandRefusalCode {
  return (COMMAND_REFUSALS as readonly string[]).includes(code);
}

export function isErrorCode(code: string): code is ErrorCode {
  return (ERROR_CODES as readonly string[]).includes(code);
}

/**
 * The short line a person reads for a refusal ("Denied by you", "Blocked in Services"): a UI
 * mapping of the gate's stable codes. The gate's own sentence is written for the AI model
 * ("… do not retry unless the user asks again") and is only ever shown folded, as a detail.
 */
export function errorCodeText(t: TFunction, code: string | undefined): string {
  if (!code) return '';
  return isErrorCode(code) ? t(`errorCode.${code}`) : t('errorCode.unknown', { code });
}

/**
 * A remembered grant in words: the service's own key is every call of it; `service:action` is
 * one escalation of it ("replacing existing files").
 */
export function grantText(t: TFunction, service: string, key: string): string {
  if (key === service) return t('grants.all');
  const action = key.startsWith(`${service}:`) ? key.slice(service.length + 1) : key;
  return action === 'overwrite' ? t('grants.overwrite') : t('grants.other', { action });
}

/** A short state label ("Connected", "Reconnecting in 4 s"). */
export function connStateText(t: TFunction, state: ConnectionState, now: number): string {
  switch (state.status) {
    case 'reconnecting': {
      const seconds = secondsUntil(state.nextAt, now);
      return seconds > 0
        ? t('connState.reconnecting', { seconds })
        : t('connState.reconnectingNow');
    }
    case 'offline':
      return `${t('connState.offline')} · ${t(`offlineReason.${state.reason}`)}`;
    default:
      return t(`connState.${state.status}`);
  }
}

/** Per-connection registration of one service ("registered at 12:03"). */
export function registrationText(
  t: TFunction,
  reg: RegistrationState | undefined,
  service: string,
  lang: string,
): string | undefined {
  if (!reg) return undefined;
  switch (reg.state) {
    case 'registering':
      return t('registration.registering');
    case 'failed':
      return t('registration.failed', { message: reg.message });
    case 'registered':
      return reg.services.includes(service)
        ? t('registration.registered', { time: formatTime(reg.at, lang) })
        : t('registration.notOffered');
  }
}
