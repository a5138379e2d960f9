/** XiaoZhi device protocol (protocols/xiaozhi.md B). Optional token: SecretStore. */
import { Type } from '@sinclair/typebox';
import {
  AUTO_MODE,
  GENERATED,
  MAC_INVALID,
  MANUAL_MODE,
  Mac,
  URL_INVALID,
  URL_LABEL,
  Uuid,
  WsUrl,
} from './patterns.js';
import { defineProfileKind } from './spec.js';

export const xiaozhiProfile = defineProfileKind({
  kind: 'xiaozhi',
  title: { en: 'XiaoZhi server (device)', 'zh-CN': '小智服务器（设备）' },
  short: { en: 'XiaoZhi', 'zh-CN': '小智' },
  help: {
    en: 'This computer joins a XiaoZhi server as a device: chat, voice (Opus) and your services over MCP.',
    'zh-CN': '本机作为设备接入小智服务器：聊天、语音（Opus），并通过 MCP 提供你的服务。',
  },
  capabilities: { chat: true, voice: true, speak: false },
  secret: { mode: 'optional', section: 'device', flag: 'xiaozhi-token' },
  address: 'url',
  // Self-hosted XiaoZhi servers pass tools on to a model API that takes a few dozen at most.
  toolLimitHint: 32,
  fields: {
    url: WsUrl,
    /** Device-Id (a MAC); generated once and kept when left empty. */
    deviceId: Type.Optional(Mac),
    /** Client-Id (a UUID); generated once and kept when left empty. */
    clientId: Type.Optional(Uuid),
    /** Binary audio framing: 1 raw Opus, 2 16-byte header, 3 4-byte header. */
    protocolVersion: Type.Optional(Type.Union([Type.Literal(1), Type.Literal(2), Type.Literal(3)])),
    /** Identity as query parameters instead of headers (some servers want that). */
    authInQuery: Type.Optional(Type.Boolean()),
    /** Reconnect after a service toggle so the server lists tools again. Default on. */
    reconnectOnToolsChanged: Type.Optional(Type.Boolean()),
    /** Send `{"type":"ping"}` every minute while idle (some servers answer `pong`). */
    keepAlive: Type.Optional(Type.Boolean()),
    /** Hands-free: `auto` (the server detects the end of speech); push-to-talk uses `manual`. */
    listenMode: Type.Optional(Type.Union([Type.Literal('manual'), Type.Literal('auto')])),
  },
  form: [
    {
      key: 'url',
      input: 'text',
      section: 'basics',
      required: true,
      wide: true,
      label: URL_LABEL,
      placeholder: 'ws://192.168.1.10:8000/xiaozhi/v1/',
      invalid: URL_INVALID,
    },
    {
      key: 'deviceId',
      input: 'text',
      section: 'device',
      generated: true,
      label: { en: 'Device-Id (MAC)', 'zh-CN': 'Device-Id（MAC）' },
      placeholder: GENERATED,
      invalid: MAC_INVALID,
      flag: 'device-id',
    },
    {
      key: 'clientId',
      input: 'text',
      section: 'device',
      generated: true,
      label: { en: 'Client-Id (UUID)', 'zh-CN': 'Client-Id（UUID）' },
      placeholder: GENERATED,
      invalid: {
        en: 'A Client-Id is a UUID such as 123e4567-e89b-12d3-a456-426614174000.',
        'zh-CN': 'Client-Id 是 UUID，例如 123e4567-e89b-12d3-a456-426614174000。',
      },
      flag: 'client-id',
    },
    {
      key: 'protocolVersion',
      input: 'choice',
      section: 'device',
      label: { en: 'Audio protocol version', 'zh-CN': '音频协议版本' },
      choices: [
        { value: 2, label: '2' },
        { value: 3, label: '3' },
      ],
      emptyChoice: { en: '1 (raw Opus, the default)', 'zh-CN': '1（原始 Opus，默认）' },
      flag: 'protocol-version',
    },
    {
      key: 'authInQuery',
      input: 'check',
      section: 'device',
      label: {
        en: 'Send the identity in the address (for servers that ignore headers)',
        'zh-CN': '在地址中发送身份信息（适用于忽略请求头的服务器）',
      },
    },
    {
      key: 'reconnectOnToolsChanged',
      input: 'check',
      section: 'device',
      defaultValue: true,
      label: {
        en: 'Reconnect when services change, so the server lists them again',
        'zh-CN': '服务变化时重新连接，让服务器重新获取列表',
      },
    },
    {
      key: 'keepAlive',
      input: 'check',
      section: 'device',
      label: { en: 'Send a keep-alive ping every minute', 'zh-CN': '每分钟发送一次保活 ping' },
    },
    {
      key: 'listenMode',
      input: 'choice',
      section: 'audio',
      label: { en: 'Listening mode', 'zh-CN': '收听模式' },
      choices: [
        { value: 'manual', label: MANUAL_MODE },
        { value: 'auto', label: AUTO_MODE },
      ],
    },
  ],
  flags: {
    name: 'xiaozhi',
    value: 'url',
    help: 'a XiaoZhi server, joined as a device (ws://HOST:8000/xiaozhi/v1/): chat, Opus voice and MCP',
    display: 'XiaoZhi {host}',
  },
});
