/** The Advent dialect (protocols/advent.md): TCP, a token, chat, voice and SPEAK. */
import { type AdventProfile, adventProfile } from '../../contract/profiles/index.js';
import type { Dialect } from '../dialect.js';
import { requiredSecret } from '../kit/secret.js';
import { AdventSession } from './session.js';

export const adventDialect: Dialect<AdventProfile> = {
  profile: adventProfile,
  complete: (input) => ({ profile: input }),
  createSession(profile, ctx) {
    return new AdventSession({
      id: profile.id,
      name: profile.name,
      host: profile.host,
      port: profile.port,
      token: requiredSecret(ctx.secret, 'token', profile.name),
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
      tools: ctx.tools,
      clock: ctx.clock,
      ids: ctx.ids,
      timing: ctx.timing,
    });
  },
};
