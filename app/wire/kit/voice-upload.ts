/**
 * What every dialect's voice upload has in common, whatever it sends (PCM frames, Opus packets):
 * why it closed, and what a chunk or an end for a turn that is not open gets back. The upload
 * object is kept after it closes precisely so a late chunk gets this clear answer.
 */
import type { ConnectionState } from '../../contract/connection.js';
import { type ChunkResult, notReady } from '../session.js';

/**
 * Why an upload takes no more audio. `stopped`: the server's VAD already ended the input (Advent
 * `mode:vad`, robot `stop_stream`); late chunks are then dropped quietly, not refused.
 */
export type UploadClosed = 'ended' | 'cancelled' | 'stopped' | 'superseded' | 'lost';

/** The part of an upload these checks read. */
export interface ClosableUpload {
  readonly taskId: string;
  readonly closedBecause: UploadClosed | undefined;
  readonly open: boolean;
}

/** The user-facing reason a chunk for a closed upload is refused. */
export function closedUploadMessage(upload: ClosableUpload): string {
  const task = `voice turn '${upload.taskId}'`;
  switch (upload.closedBecause) {
    case 'ended':
      return `${task} has ended (voiceEnd was called); start a new one with voiceStart`;
    case 'cancelled':
      return `${task} was cancelled; start a new one with voiceStart`;
    case 'superseded':
      return `${task} was replaced by a newer turn; send audio for that one`;
    case 'lost':
      return `${task} ended when the connection was lost; start a new one once it is back`;
    default:
      return `${task} is closed`;
  }
}

/** An upload that turns the UI's PCM into what its dialect sends (PCM frames, Opus packets). */
export interface FramingUpload extends ClosableUpload {
  push(pcm: Uint8Array): Buffer[];
  flush(): Buffer[];
  close(because: 'ended'): void;
}

/** A link as the voice calls see it (the AdventLink and every ReconnectingLink are one). */
export interface VoiceLink {
  readonly isReady: boolean;
  readonly state: ConnectionState;
}

/**
 * `voiceChunk`, the same in every dialect: a chunk for a turn that is not open gets
 * `openUpload`'s answer, none is taken while the link is down, and each frame the upload makes of
 * `pcm` goes to `send`.
 */
export function sendVoiceChunk<U extends FramingUpload>(
  upload: U | undefined,
  taskId: string,
  pcm: Uint8Array,
  link: VoiceLink,
  send: (frame: Buffer, upload: U) => void,
): ChunkResult {
  const open = openUpload(upload, taskId, 'voiceChunk');
  if ('answer' in open) return open.answer;
  if (!link.isReady) return { ok: false, message: notReady(link.state) };
  for (const frame of open.upload.push(pcm)) send(frame, open.upload);
  return { ok: true };
}

/**
 * `voiceEnd`, the same in every dialect: while the link is up, what the upload still holds goes
 * to `send` and `finish` tells the server the dialect's way; the upload is closed either way.
 */
export function endVoiceUpload<U extends FramingUpload>(
  upload: U | undefined,
  taskId: string,
  link: VoiceLink,
  send: (frame: Buffer, upload: U) => void,
  finish: (upload: U) => void,
): ChunkResult {
  const open = openUpload(upload, taskId, 'voiceEnd');
  if ('answer' in open) return open.answer;
  if (link.isReady) {
    for (const frame of open.upload.flush()) send(frame, open.upload);
    finish(open.upload);
  }
  open.upload.close('ended');
  return { ok: true };
}

/**
 * The upload a `voiceChunk`/`voiceEnd` for `taskId` may go on with, or the answer the call gets
 * instead: no such turn (refused), a turn the server already ended (ignored), a closed one
 * (refused, saying why).
 */
function openUpload<U extends ClosableUpload>(
  upload: U | undefined,
  taskId: string,
  call: 'voiceChunk' | 'voiceEnd',
): { upload: U } | { answer: ChunkResult } {
  if (!upload || upload.taskId !== taskId) {
    const hint = call === 'voiceChunk' ? '; start one with voiceStart' : '';
    return { answer: { ok: false, message: `no voice turn '${taskId}' is open${hint}` } };
  }
  if (upload.closedBecause === 'stopped') return { answer: { ok: true, ignored: true } };
  if (!upload.open) return { answer: { ok: false, message: closedUploadMessage(upload) } };
  return { upload };
}
