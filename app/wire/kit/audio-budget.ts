/**
 * How much reply audio one session may decode. A server sends reply audio about as fast as it is
 * played, a little ahead to fill the player (a whole sentence at once when its TTS is quick). Each
 * tiny Opus packet may stand for 120 ms, so without a budget a steady flood of them keeps the
 * event loop decoding hours of audio nobody will hear, and the UI receiving it. The budget is a
 * bucket of `burstMs` of audio, refilled at `pace` times real time: every honest reply fits, and a
 * flood decodes at most `pace` seconds of audio per second.
 */
import type { Clock } from '../../clock.js';

/** Audio a session may decode at once after a quiet spell: two minutes, a long answer whole. */
export const REPLY_AUDIO_BURST_MS = 120_000;
/** How many times faster than it plays reply audio may keep arriving once the burst is spent. */
export const REPLY_AUDIO_PACE = 4;

export class AudioBudget {
  private credit: number;
  private at: number;

  constructor(
    private readonly clock: Pick<Clock, 'now'>,
    private readonly burstMs = REPLY_AUDIO_BURST_MS,
    private readonly pace = REPLY_AUDIO_PACE,
  ) {
    this.credit = burstMs;
    this.at = clock.now();
  }

  /**
   * Whether another packet may be decoded now. Checked before decoding, so the packet that spends
   * the last of the credit is kept whole (≤ 120 ms over).
   */
  get open(): boolean {
    const now = this.clock.now();
    // A clock stepping back refills nothing (and takes nothing away).
    this.credit = Math.min(this.burstMs, this.credit + Math.max(0, now - this.at) * this.pace);
    this.at = now;
    return this.credit > 0;
  }

  /** `pcmBytes` of s16 mono PCM at `rate` were decoded. */
  spend(pcmBytes: number, rate: number): void {
    this.credit -= (pcmBytes / 2 / rate) * 1000;
  }
}

/** The warning a reply gets (once) when its audio is dropped for arriving too fast. */
export function overBudgetMessage(taskId: string): string {
  return `reply audio of '${taskId}' is arriving far faster than it can be played (more than ${REPLY_AUDIO_BURST_MS / 1000} s at once, then ${REPLY_AUDIO_PACE}× real time); the excess is dropped`;
}
