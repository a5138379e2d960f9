/**
 * A test-only connection kind, to prove that adding a kind is a folder plus one entry in each of
 * the two lists (the contract's specs, the core's dialects). Its pure part: the profile spec.
 */
import { Type } from '@sinclair/typebox';
import { PROFILE_PATTERNS, defineProfileKind } from '../../../app/contract/profiles/index.js';

export const echoProfile = defineProfileKind({
  kind: 'echo',
  title: { en: 'Echo server', 'zh-CN': '回声服务器' },
  short: { en: 'Echo', 'zh-CN': '回声' },
  help: {
    en: 'A test server that repeats what you say and may call your services.',
    'zh-CN': '一个测试服务器：重复你说的话，也可以调用你的服务。',
  },
  capabilities: { chat: true, voice: false, speak: false },
  address: 'url',
  fields: {
    url: Type.String({ minLength: 1, maxLength: 2048, pattern: PROFILE_PATTERNS.wsUrl }),
    /** Put in front of every echoed reply. */
    prefix: Type.Optional(Type.String({ maxLength: 20, pattern: '^[a-z]*$' })),
  },
  form: [
    {
      key: 'url',
      input: 'text',
      section: 'basics',
      required: true,
      wide: true,
      label: { en: 'Address', 'zh-CN': '地址' },
      placeholder: 'ws://127.0.0.1:9000/echo',
      invalid: { en: 'Enter a ws:// address.', 'zh-CN': '请输入 ws:// 地址。' },
    },
    {
      key: 'prefix',
      input: 'text',
      section: 'behaviour',
      label: { en: 'Reply prefix', 'zh-CN': '回复前缀' },
      invalid: { en: 'Lowercase letters only.', 'zh-CN': '只能用小写字母。' },
      flag: 'echo-prefix',
    },
  ],
  flags: { name: 'echo', value: 'url', help: 'an echo server (tests)', display: 'Echo {host}' },
});
