/**
 * Patterns of profile fields: one source for the schemas of every kind, the connection form and
 * the terminal flags (each builds a RegExp from them).
 */
import { Type } from '@sinclair/typebox';

export const PROFILE_PATTERNS = {
  /** Values sent in the Advent login must not contain `##` (it separates the fields). */
  loginValue: '^(?!.*##)[^\\r\\n]*$',
  wsUrl: '^wss?://[^\\s]+$',
  mac: '^[0-9A-Fa-f]{2}([:-][0-9A-Fa-f]{2}){5}$',
  uuid: '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$',
} as const;

/** A WebSocket address; a token the user pasted inside it is moved to the SecretStore on save. */
export const WsUrl = Type.String({
  minLength: 1,
  maxLength: 2048,
  pattern: PROFILE_PATTERNS.wsUrl,
});
export const Mac = Type.String({ pattern: PROFILE_PATTERNS.mac });
export const Uuid = Type.String({ pattern: PROFILE_PATTERNS.uuid });

/** The form's texts for fields every WebSocket kind has. */
export const URL_LABEL = { en: 'Address', 'zh-CN': '地址' } as const;
export const URL_INVALID = {
  en: 'Enter a ws:// or wss:// address without spaces.',
  'zh-CN': '请输入不含空格的 ws:// 或 wss:// 地址。',
} as const;
export const MAC_INVALID = {
  en: 'A MAC address looks like aa:bb:cc:dd:ee:ff.',
  'zh-CN': 'MAC 地址形如 aa:bb:cc:dd:ee:ff。',
} as const;
export const GENERATED = { en: 'generated and kept', 'zh-CN': '自动生成并保留' } as const;
export const MANUAL_MODE = { en: 'Manual (push to talk)', 'zh-CN': '手动（按住说话）' } as const;
export const AUTO_MODE = { en: 'Automatic', 'zh-CN': '自动' } as const;
