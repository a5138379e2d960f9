/** The robot dialect (protocols/robot-rpc.md): WebSocket JSON-RPC, the device is its MAC. */
import { type RobotProfile, robotProfile } from '../../contract/profiles/index.js';
import type { Dialect } from '../dialect.js';
import { generateDeviceId, normaliseRobotMac, orThrow } from '../kit/identity.js';
import { RobotSession } from './session.js';

export const robotDialect: Dialect<RobotProfile> = {
  profile: robotProfile,
  complete: (input, previous, ids) => ({
    profile: {
      ...input,
      macAddr: orThrow(
        normaliseRobotMac(input.macAddr ?? previous?.macAddr ?? generateDeviceId(ids)),
      ),
    },
  }),
  createSession(profile, ctx) {
    return new RobotSession({
      id: profile.id,
      name: profile.name,
      url: profile.url,
      macAddr: profile.macAddr ?? generateDeviceId(ctx.ids),
      gate: ctx.gate,
      tools: ctx.tools,
      clock: ctx.clock,
      ids: ctx.ids,
      timing: ctx.wsTiming,
    });
  },
};
