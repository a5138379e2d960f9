/** The XiaoZhi MCP endpoint dialect (protocols/xiaozhi.md B′): tools only, the token in the URL. */
import { type EndpointProfile, endpointProfile } from '../../contract/profiles/index.js';
import type { Dialect } from '../dialect.js';
import { requiredSecret } from '../kit/secret.js';
import { joinUrlToken, splitUrlToken } from '../kit/url.js';
import { EndpointSession } from './session.js';

export const endpointDialect: Dialect<EndpointProfile> = {
  profile: endpointProfile,
  // A token pasted inside the address is kept as the profile's secret, never in settings.
  complete: (input) => {
    const { url, token } = splitUrlToken(input.url);
    return { profile: { ...input, url }, secret: token };
  },
  createSession(profile, ctx) {
    const token = requiredSecret(ctx.secret, 'token', profile.name);
    return new EndpointSession({
      id: profile.id,
      name: profile.name,
      url: async () => joinUrlToken(profile.url, await token()),
      serverInfo: { name: 'advent-agent', version: ctx.version },
      gate: ctx.gate,
      tools: ctx.tools,
      clock: ctx.clock,
      ids: ctx.ids,
      timing: ctx.wsTiming,
    });
  },
};
