/** Small facts about profiles the connection and voice views share. */
import type { ProfileInput, ProfileView } from '../../../app/contract/commands.js';

/** The profile as saveConnection takes it (the view-only fields dropped), with `patch` applied. */
export function toInput<P extends ProfileView>(
  profile: P,
  patch: Partial<Extract<ProfileInput, { kind: P['kind'] }>> = {},
): ProfileInput {
  const { demo: _demo, hasToken: _hasToken, address: _address, ...saved } = profile;
  void _demo;
  void _hasToken;
  void _address;
  return { ...saved, ...patch } as ProfileInput;
}

/** How a voice turn ends on this connection: the user (manual) or the server (vad/auto). */
export function voiceMode(profile: ProfileView | undefined): 'manual' | 'vad' | 'auto' {
  if (profile?.kind === 'advent') return profile.mode ?? 'manual';
  if (profile?.kind === 'xiaozhi') return profile.listenMode ?? 'manual';
  return 'manual';
}
