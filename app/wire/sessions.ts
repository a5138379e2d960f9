/**
 * One live session for a saved profile, whatever its kind. The only place that knows which class
 * speaks which dialect; everything above it (agent, API, hosts) sees a LiveSession.
 */
import type { Clock } from '../clock.js';
import type { Profile } from '../contract/commands.js';
import type { IdSource } from '../ids.js';
import type { Timing } from './advent/connection.js';
import { AdventSession } from './advent/session.js';
import type { Gate, LiveSession, ToolEntry } from './session.js';
import { RobotSession } from './robot/session.js';
import type { WsTiming } from './kit/ws-link.js';
import { joinUrlToken } from './kit/url.js';
import { EndpointSession } from './endpoint/session.js';
import { XiaozhiSession } from './xiaozhi/session.js';
import { generateClientId, generateDeviceId } from './kit/identity.js';

/** Where a profile's secret comes from: the SecretStore, or a terminal flag for this run. */
export type SecretSource = () => Promise<string | undefined> | string | undefined;

export interface SessionContext {
  gate: Gate;
  tools: () => readonly ToolEntry[];
  secret: SecretSource;
  clock: Clock;
  ids: IdSource;
  timing?: Partial<Timing>;
  wsTiming?: Partial<WsTiming>;
  version: string;
}

export function createSession(profile: Profile, ctx: SessionContext): LiveSession {
  const required = async (what: string): Promise<string> => {
    const value = await ctx.secret();
    if (!value) throw new Error(`no ${what} is saved for '${profile.name}'`);
    return value;
  };
  const serverInfo = { name: 'advent-agent', version: ctx.version };
  // What every WebSocket dialect is given alike: the gate, the services, time, ids, link timing.
  const wsShared = {
    gate: ctx.gate,
    tools: ctx.tools,
    clock: ctx.clock,
    ids: ctx.ids,
    timing: ctx.wsTiming,
  };
  switch (profile.kind) {
    case 'advent':
      return new AdventSession({
        id: profile.id,
        name: profile.name,
        host: profile.host,
        port: profile.port,
        token: () => required('token'),
        authParams: {
          voiceid: profile.voiceId,
          lang: profile.lang,
          format: profile.format,
          input_audio_format: profile.inputAudioFormat,
          mode: profile.mode,
          emoji_mode: profile.emojiMode,
        },
        voice: { opusLengthOrder: profile.opusLengthOrder ?? 'be' },
        gate: ctx.gate,
        services: () =>
          Object.fromEntries(
            ctx
              .tools()
              .filter((t) => !t.userOnly)
              .map((t) => [t.name, { description: t.description, parameters: t.inputSchema }]),
          ),
        clock: ctx.clock,
        ids: ctx.ids,
        timing: ctx.timing,
      });
    case 'xiaozhi':
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
        serverInfo,
        ...wsShared,
      });
    case 'endpoint':
      return new EndpointSession({
        id: profile.id,
        name: profile.name,
        url: async () => joinUrlToken(profile.url, await required('token')),
        serverInfo,
        ...wsShared,
      });
    case 'robot':
      return new RobotSession({
        id: profile.id,
        name: profile.name,
        url: profile.url,
        macAddr: profile.macAddr ?? generateDeviceId(ctx.ids),
        ...wsShared,
      });
  }
}
