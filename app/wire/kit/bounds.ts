/**
 * What a server can make the wire layer hold (DESIGN §1.7, issue 10 item 2). Every dialect keeps
 * these same limits, so a hostile server can fill none of its buffers, maps or strings:
 *
 * - reply text: at most `MAX_REPLY_CHARS` per reply; the rest of that reply is dropped, once
 *   logged. At most `MAX_OPEN_REPLIES` replies open at once; the oldest is closed (interrupted)
 *   to make room, with a log line. A server inventing task ids cannot grow either.
 * - names and ids the server chooses (a method, a tool name, a call id) are cut to
 *   `MAX_NAME_CHARS` / `MAX_ID_CHARS` before anything keeps them (maps, sets, the gate's call).
 * - what we write: past `WRITE_HIGH_WATER_BYTES` waiting in a socket's write buffer the link
 *   stops reading (no new calls come in), and past `WRITE_MAX_BUFFERED_BYTES` it drops the socket;
 *   with `MAX_CALLS_IN_FLIGHT` calls running for a socket, it stops reading too.
 */

/** One reply's text, in UTF-16 code units (a long spoken answer is a few thousand). */
export const MAX_REPLY_CHARS = 64 * 1024;
/** Replies being assembled at once (a conversation has one, barge-in briefly two). */
export const MAX_OPEN_REPLIES = 8;
/** Text a server wants shown (STATUS, alerts): a line or two, never a document. */
export const MAX_STATUS_CHARS = 2000;
/** Service, tool and method names (ours are `[a-z][a-z0-9_]*`, far shorter). */
export const MAX_NAME_CHARS = 256;
/** Call ids and JSON-RPC request ids. */
export const MAX_ID_CHARS = 256;
/** Calls answered at once per socket; past this the link reads no more until half have ended. */
export const MAX_CALLS_IN_FLIGHT = 64;
/** Bytes waiting to be written to one socket before the link stops reading from it. */
export const WRITE_HIGH_WATER_BYTES = 1024 * 1024;
/** …and before it gives up on a server that does not read what it asked for. */
export const WRITE_MAX_BUFFERED_BYTES = 16 * 1024 * 1024;

/** `text` cut to `max` characters with a note of its real length, never splitting a pair. */
export function cutString(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = max;
  // A high surrogate as the last kept unit would be half a character.
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end -= 1;
  return `${text.slice(0, end)}…[${text.length} characters]`;
}

/**
 * Reply audio decoded from one server frame (an Advent AUDIO_FRAME of length-prefixed Opus
 * packets). Opus lets a 2–4 byte packet stand for 120 ms, so without this one 4 MiB frame of
 * empty packets becomes hours of PCM, built in one go. Servers stream a few 60 ms packets per
 * frame (the reference sends three); 20 s leaves a whole sentence in one frame intact.
 */
export const MAX_REPLY_AUDIO_MS_PER_FRAME = 20_000;
/**
 * The shortest Opus packet taken from a server. Shorter ones (a table-of-contents byte and at most
 * a frame count) carry no coded audio, yet each decodes to up to 120 ms of concealment.
 */
export const MIN_OPUS_PACKET_BYTES = 3;
