/** XiaoZhi MCP endpoint (protocols/xiaozhi.md B′). The URL's token lives in the SecretStore. */
import { URL_INVALID, URL_LABEL, WsUrl } from './patterns.js';
import { defineProfileKind } from './spec.js';

export const endpointProfile = defineProfileKind({
  kind: 'endpoint',
  title: { en: 'XiaoZhi MCP endpoint', 'zh-CN': '小智 MCP 接入点' },
  short: { en: 'MCP endpoint', 'zh-CN': 'MCP 接入点' },
  help: {
    en: 'Your services only, offered to a XiaoZhi MCP endpoint (the “MCP 接入点” address from the XiaoZhi console). No chat or voice.',
    'zh-CN':
      '只把你的服务提供给小智 MCP 接入点（小智控制台中的“MCP 接入点”地址），没有聊天和语音。',
  },
  capabilities: { chat: false, voice: false, speak: false },
  secret: { mode: 'url' },
  address: 'url',
  // Self-hosted XiaoZhi servers pass tools on to a model API that takes a few dozen at most.
  toolLimitHint: 32,
  fields: { url: WsUrl },
  form: [
    {
      key: 'url',
      input: 'text',
      section: 'basics',
      required: true,
      wide: true,
      label: URL_LABEL,
      placeholder: 'wss://api.xiaozhi.me/mcp/?token=…',
      invalid: URL_INVALID,
    },
  ],
  flags: {
    name: 'endpoint',
    value: 'url',
    help: 'a XiaoZhi MCP endpoint; the token is inside the address (wss://api.xiaozhi.me/mcp/?token=…): quote it in your shell. Tools only: no chat',
    display: 'MCP endpoint {host}',
  },
});
