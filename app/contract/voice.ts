/**
 * What every UI's push-to-talk agrees on, so a press means the same in the window, a host and the
 * tests. Pure TS: the renderer imports it.
 */

/**
 * A press shorter than this is a slip: nothing of it reaches any server (no task, no frame). The
 * audio of a press is held where it is captured until the press lasts this long.
 */
export const MIN_PRESS_MS = 300;

/**
 * The most audio a held press keeps while its turn is not started yet (the hold itself, plus
 * however long the core takes to answer `voiceStart`): 10 s of 16 kHz s16 mono. Past it the
 * oldest is dropped, so a stuck start cannot grow memory without end.
 */
export const MAX_HELD_AUDIO_BYTES = 10 * 32_000;
