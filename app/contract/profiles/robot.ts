/** Robot JSON-RPC server (protocols/robot-rpc.md). No token: the device is its MAC. */
import { Type } from '@sinclair/typebox';
import { GENERATED, MAC_INVALID, Mac, URL_INVALID, URL_LABEL, WsUrl } from './patterns.js';
import { defineProfileKind } from './spec.js';

export const robotProfile = defineProfileKind({
  kind: 'robot',
  title: { en: 'Robot server (JSON-RPC)', 'zh-CN': '机器人服务器（JSON-RPC）' },
  short: { en: 'Robot', 'zh-CN': '机器人' },
  help: {
    en: 'A robot backend speaking mcp/registerTools: your services, its replies and PCM voice.',
    'zh-CN': '使用 mcp/registerTools 的机器人后端：你的服务、它的回复和 PCM 语音。',
  },
  capabilities: { chat: true, voice: true, speak: false },
  address: 'url',
  fields: {
    url: WsUrl,
    /** `mac_addr` sent when registering; generated once and kept when left empty. */
    macAddr: Type.Optional(Mac),
  },
  form: [
    {
      key: 'url',
      input: 'text',
      section: 'basics',
      required: true,
      wide: true,
      label: URL_LABEL,
      placeholder: 'ws://192.168.1.10:8888/ws',
      invalid: URL_INVALID,
    },
    {
      key: 'macAddr',
      input: 'text',
      section: 'device',
      generated: true,
      label: { en: 'MAC address', 'zh-CN': 'MAC 地址' },
      placeholder: GENERATED,
      invalid: MAC_INVALID,
      flag: 'mac',
    },
  ],
  flags: {
    name: 'robot',
    value: 'url',
    help: 'a robot server (ws://HOST:8888/ws) speaking mcp/registerTools',
    display: 'Robot {host}',
  },
});
