/**
 * Reminders and timers as every UI sees them, and the screen capture a browser page is asked
 * for. Pure types (the renderer imports this).
 */
import type { ConnectionRef } from './connection.js';

export const REMINDER_KINDS = ['timer', 'reminder'] as const;
export type ReminderKind = (typeof REMINDER_KINDS)[number];

/**
 * `pending` waits for its time; `fired` rang; `missed` fell due while the app was closed (shown at
 * the next start, never dropped silently); `cancelled` is removed from the list at once.
 */
export const REMINDER_STATES = ['pending', 'fired', 'missed', 'cancelled'] as const;
export type ReminderState = (typeof REMINDER_STATES)[number];

export interface ReminderView {
  /** `r-` and 8 hex digits. */
  id: string;
  kind: ReminderKind;
  /** What to remind of: the timer's label or the reminder's text (may be empty for a timer). */
  text: string;
  /** Epoch ms. */
  dueAt: number;
  createdAt: number;
  state: ReminderState;
  /** When it rang, or when the app noticed it was missed. */
  firedAt?: number;
  /** Who set it (LOCAL_CONNECTION for the user). */
  connection: ConnectionRef;
}

/**
 * A reminder rang. `speech` says who speaks it: the active connection's voice (Advent `SPEAK`),
 * or the window (Web Speech API, where a voice exists) when no connection can.
 */
export interface ReminderFired {
  reminder: ReminderView;
  speech: 'connection' | 'window';
}

/** A page is asked to capture the screen (browser host: the user picks it with getDisplayMedia). */
export interface ScreenRequest {
  id: string;
  /** The server the capture is for (the permission prompt already asked about it). */
  connection: ConnectionRef;
  /** Epoch ms after which the request is given up. */
  expiresAt: number;
}

/** What a page answers with: the picture, base64, already scaled down by the page. */
export interface ScreenCapture {
  data: string;
  mimeType: 'image/jpeg' | 'image/png';
  width: number;
  height: number;
}
