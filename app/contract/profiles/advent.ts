/** Advent TCP server (protocols/advent.md). Token: SecretStore `profile:<id>:token`. */
import { Type } from '@sinclair/typebox';
import { AUTO_MODE, MANUAL_MODE, PROFILE_PATTERNS } from './patterns.js';
import { defineProfileKind } from './spec.js';

const LoginValue = Type.String({ maxLength: 200, pattern: PROFILE_PATTERNS.loginValue });
const Format = Type.Union([Type.Literal('pcm'), Type.Literal('opus')]);
const NO_HASHES = {
  en: 'This value cannot contain “##” or line breaks.',
  'zh-CN': '此值不能包含“##”或换行。',
};
const FORMATS = [
  { value: 'pcm', label: 'PCM' },
  { value: 'opus', label: 'Opus' },
];

export const adventProfile = defineProfileKind({
  kind: 'advent',
  title: { en: 'Advent server', 'zh-CN': 'Advent 服务器' },
  short: { en: 'Advent', 'zh-CN': 'Advent' },
  help: {
    en: 'Chat and voice over the Advent TCP protocol; your services are registered with it.',
    'zh-CN': '通过 Advent TCP 协议聊天和语音，并向其注册你的服务。',
  },
  capabilities: { chat: true, voice: true, speak: true },
  secret: { mode: 'required', section: 'login', flag: 'token' },
  address: 'host-port',
  fields: {
    host: Type.String({ minLength: 1, maxLength: 255, pattern: '^[^\\s/]+$' }),
    port: Type.Integer({ minimum: 1, maximum: 65535 }),
    voiceId: Type.Optional(LoginValue),
    lang: Type.Optional(LoginValue),
    format: Type.Optional(Format),
    inputAudioFormat: Type.Optional(Format),
    /** Byte order of the 2-byte Opus packet length (protocol §6.2: unknown; 'be' is the guess). */
    opusLengthOrder: Type.Optional(Type.Union([Type.Literal('be'), Type.Literal('le')])),
    mode: Type.Optional(
      Type.Union([Type.Literal('manual'), Type.Literal('vad'), Type.Literal('auto')]),
    ),
    emojiMode: Type.Optional(LoginValue),
  },
  form: [
    {
      key: 'host',
      input: 'text',
      section: 'basics',
      required: true,
      label: { en: 'Host', 'zh-CN': '主机' },
      placeholder: '127.0.0.1',
      invalid: {
        en: 'Enter a host name or address, without spaces or slashes.',
        'zh-CN': '请输入主机名或地址，不能包含空格或斜杠。',
      },
    },
    {
      key: 'port',
      input: 'number',
      section: 'basics',
      required: true,
      label: { en: 'Port', 'zh-CN': '端口' },
      placeholder: '8009',
      invalid: {
        en: 'The port is a number from 1 to 65535.',
        'zh-CN': '端口是 1 到 65535 之间的数字。',
      },
    },
    {
      key: 'voiceId',
      input: 'text',
      section: 'login',
      label: { en: 'Voice id', 'zh-CN': '音色 ID' },
      invalid: NO_HASHES,
      flag: 'voice-id',
    },
    {
      key: 'lang',
      input: 'text',
      section: 'login',
      label: { en: 'Language', 'zh-CN': '语言' },
      placeholder: { en: 'e.g. en or zh', 'zh-CN': '例如 en 或 zh' },
      invalid: NO_HASHES,
      flag: 'lang',
    },
    {
      key: 'emojiMode',
      input: 'text',
      section: 'login',
      label: { en: 'Emoji mode', 'zh-CN': '表情模式' },
      invalid: NO_HASHES,
      flag: 'emoji-mode',
    },
    {
      key: 'format',
      input: 'choice',
      section: 'audio',
      label: { en: 'Reply audio', 'zh-CN': '回复音频' },
      choices: FORMATS,
      flag: 'format',
    },
    {
      key: 'inputAudioFormat',
      input: 'choice',
      section: 'audio',
      label: { en: 'Microphone audio', 'zh-CN': '麦克风音频' },
      choices: FORMATS,
      flag: 'input-audio-format',
    },
    {
      key: 'mode',
      input: 'choice',
      section: 'audio',
      label: { en: 'Listening mode', 'zh-CN': '收听模式' },
      choices: [
        { value: 'manual', label: MANUAL_MODE },
        { value: 'vad', label: { en: 'Voice detection', 'zh-CN': '语音检测' } },
        { value: 'auto', label: AUTO_MODE },
      ],
      flag: 'mode',
    },
  ],
  flags: {
    name: 'server',
    value: 'host-port',
    help: 'an Advent server (plain TCP); its login fields are sent exactly as given',
    display: '{host}:{port}',
  },
});
