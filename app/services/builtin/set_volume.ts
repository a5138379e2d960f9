import type { Desktop } from '../platform/desktop.js';
import { changeVolume } from '../platform/device.js';
import { ServiceFailure, type Service } from '../service.js';

export type SetVolumeParams = { level?: number; mute?: boolean };

function sentence(p: SetVolumeParams): string {
  const parts: string[] = [];
  if (p.mute === true) parts.push('Mute the sound');
  if (p.mute === false) parts.push('Unmute the sound');
  if (p.level !== undefined)
    parts.push(`${parts.length ? 'set' : 'Set'} the volume to ${p.level}%`);
  return parts.join(' and ');
}

export function setVolumeService(desktop: Desktop): Service<SetVolumeParams> {
  return {
    name: 'set_volume',
    title: 'Set the volume',
    summary: 'Changes the output volume or mutes the sound.',
    group: 'system',
    description:
      "Change the user's output volume: level 0–100 (percent), and/or mute true or false.",
    parameters: {
      type: 'object',
      properties: {
        level: {
          type: 'integer',
          minimum: 0,
          maximum: 100,
          description: 'Volume in percent, 0–100',
        },
        mute: { type: 'boolean', description: 'true mutes the sound, false unmutes it' },
      },
      additionalProperties: false,
    },
    risk: 'system',
    timeoutMs: 15_000,
    preview(params) {
      if (params.level === undefined && params.mute === undefined)
        throw new ServiceFailure(
          'invalid_params',
          'give level (0–100), mute (true or false), or both',
        );
      return { summary: sentence(params), resolvedPaths: [] };
    },
    async run(params, ctx) {
      await changeVolume(desktop, { level: params.level, mute: params.mute }, ctx.signal);
      return { message: `Done: ${sentence(params).replace(/^./, (c) => c.toLowerCase())}` };
    },
  };
}
