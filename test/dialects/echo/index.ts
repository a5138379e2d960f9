/** The echo dialect's descriptor: its spec, how a profile is completed, how a session starts. */
import type { Dialect } from '../../../app/wire/dialect.js';
import { echoProfile } from './profile.js';
import { EchoSession } from './session.js';

interface EchoProfile {
  id: string;
  kind: string;
  name: string;
  url: string;
  prefix?: string;
  autoConnect?: boolean;
}

export const echoDialect: Dialect<EchoProfile> = {
  profile: echoProfile,
  complete: (input) => ({ profile: input }),
  createSession: (profile, ctx) =>
    new EchoSession({
      id: profile.id,
      name: profile.name,
      url: `${profile.url}${profile.url.includes('?') ? '&' : '?'}prefix=${profile.prefix ?? 'echo'}`,
      gate: ctx.gate,
      tools: ctx.tools,
      clock: ctx.clock,
      ids: ctx.ids,
      timing: ctx.wsTiming,
    }),
};
