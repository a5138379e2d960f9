/** The XiaoZhi device dialect (protocols/xiaozhi.md B): WebSocket, optional token, Opus voice, MCP. */
import { type XiaozhiProfile, xiaozhiProfile } from '../../contract/profiles/index.js';
import type { Dialect } from '../dialect.js';
import {
  generateClientId,
  generateDeviceId,
  normaliseClientId,
  normaliseDeviceId,
  orThrow,
} from '../kit/identity.js';
import { XiaozhiSession } from './session.js';

export const xiaozhiDialect: Dialect<XiaozhiProfile> = {
  profile: xiaozhiProfile,
  // The server knows a device by these two: generated once, then kept across edits and runs.
  complete: (input, previous, ids) => ({
    profile: {
      ...input,
      deviceId: orThrow(
        normaliseDeviceId(input.deviceId ?? previous?.deviceId ?? generateDeviceId(ids)),
      ),
      clientId: orThrow(
        normaliseClientId(input.clientId ?? previous?.clientId ?? generateClientId(ids)),
      ),
    },
  }),
  createSession(profile, ctx) {
    return new XiaozhiSession({
      id: profile.id,
      name: profile.name,
      url: profile.url,
      // Optional: a self-hosted server often needs none.
      token: async () => (await ctx.secret()) || undefined,
      deviceId: profile.deviceId ?? generateDeviceId(ctx.ids),
      clientId: profile.clientId ?? generateClientId(ctx.ids),
      protocolVersion: profile.protocolVersion,
      authInQuery: profile.authInQuery,
      reconnectOnToolsChanged: profile.reconnectOnToolsChanged,
      keepAliveMs: profile.keepAlive ? 60_000 : 0,
      listenMode: profile.listenMode,
      serverInfo: { name: 'advent-agent', version: ctx.version },
      gate: ctx.gate,
      tools: ctx.tools,
      clock: ctx.clock,
      ids: ctx.ids,
      timing: ctx.wsTiming,
    });
  },
};
