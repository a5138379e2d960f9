/**
 * Advent frame codec (protocols/advent.md §2).
 *
 *   "##START" | type (1 byte) | task id (8 ASCII) | seq (4 ASCII digits) | payload | "##END"
 *
 * There is no length field and no escaping, so the end of a frame is a judgement call:
 * - Text-like frames (everything but audio) end at the first `##END`: their UTF-8/JSON payload
 *   cannot carry the marker, so the first one is the end, and a frame ending exactly at the end of
 *   a chunk is delivered at once (no added latency for replies, calls and END_FRAME).
 * - Binary frames (AUDIO_FRAME and unknown types) may contain `##END` and `##START` in their
 *   payload. Such a frame ends at the last `##END` before the next `##START` that has a valid
 *   header; bytes between the two are garbage. When the buffer ends at a candidate `##END` with
 *   nothing after it, the frame is held as tentative until more bytes decide or `flush()` is
 *   called (the connection calls it after a short idle, and `end()` at EOF).
 * - With `earlyAudio`, a held AUDIO_FRAME is not waited for: its payload up to that `##END` is
 *   delivered at once, and should more bytes show the `##END` was payload, the rest of the frame
 *   follows as a second frame with the same header. Audio is a byte stream (PCM samples, Opus
 *   packets behind lengths), so its reader sees the same bytes in the same order either way, and
 *   a reply does not wait for an idle moment on every frame.
 * The only stream this cannot split correctly is an audio payload that itself contains
 * `##END##START` followed by a valid header; the PCM nudge on send makes that impossible for us.
 *
 * Parsing is linear in the bytes received however the stream is split: every search resumes where
 * the previous one stopped, and a frame above `maxFrameBytes` is reported and dropped instead of
 * growing the buffer without bound.
 */

export const FrameType = {
  AUTH: 1,
  AUDIO: 2,
  END: 3,
  TEXT: 4,
  STATUS: 5,
  MCP: 6,
  SPEAK: 7,
  LISTEN: 8,
  EMOJI: 9,
} as const;
export type KnownFrameType = (typeof FrameType)[keyof typeof FrameType];

export const FRAME_TYPE_NAMES: Record<number, string> = {
  1: 'AUTH',
  2: 'AUDIO_FRAME',
  3: 'END_FRAME',
  4: 'TEXT',
  5: 'STATUS',
  6: 'MCP',
  7: 'SPEAK',
  8: 'LISTEN',
  9: 'EMOJI',
};

export interface Frame {
  type: KnownFrameType;
  /** The 8 task id bytes as received, padding included (see `taskKey`). */
  taskId: string;
  seq: number;
  payload: Buffer;
}

export const SYSTEM_TASK = '00000000';
export const MCP_TASK = 'mcp00001';
export const DEFAULT_MAX_FRAME_BYTES = 4 * 1024 * 1024;

const START = Buffer.from('##START', 'latin1');
const END = Buffer.from('##END', 'latin1');
const HEADER = START.length + 1 + 8 + 4; // 20
const OVERHEAD = HEADER + END.length; // 25
const MAX_TYPE = 31; // type bytes we parse structurally; 1..9 are known, others are skipped
const HASH = 0x23;
/** Every marker ends in one of these: `##END` in 'D', `##START` in 'T'. */
const MARKER_LAST_D = 0x44;
const MARKER_LAST_T = 0x54;
/** Chunks up to this size are only appended unless they could complete something (see push). */
const SMALL_CHUNK = 64;
/** Garbage without a marker byte is still dropped at least this often, so it cannot pile up. */
const GARBAGE_WAKE = 4096;
const NO_FRAMES: Frame[] = [];

/** Task ids are compared in their padded 8-byte form. */
export function taskKey(taskId: string): string {
  return taskId.length >= 8 ? taskId.slice(0, 8) : taskId.padEnd(8, ' ');
}

export class ProtocolError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ProtocolError';
  }
}

// ---------------------------------------------------------------------------------------------
// Encoding

const TASK_ID = /^[\x20-\x7e]{1,8}$/;

/**
 * Encode one frame. Strict: known types only, a printable task id of at most 8 bytes (padded with
 * spaces), seq 0..9999, and no `##END` inside a text-like payload (it would end the frame early).
 */
export function encodeFrame(
  type: KnownFrameType,
  taskId: string,
  seq: number,
  payload: string | Uint8Array = '',
): Buffer {
  if (!(type >= 1 && type <= 9)) throw new ProtocolError(`unknown frame type ${type}`);
  if (!TASK_ID.test(taskId))
    throw new ProtocolError(`task id must be 1-8 printable ASCII characters: '${taskId}'`);
  if (!Number.isInteger(seq) || seq < 0 || seq > 9999)
    throw new ProtocolError(`seq must be 0..9999: ${seq}`);
  const body = typeof payload === 'string' ? Buffer.from(payload, 'utf8') : payload;
  if (
    type !== FrameType.AUDIO &&
    Buffer.from(body.buffer, body.byteOffset, body.byteLength).indexOf(END) >= 0
  ) {
    throw new ProtocolError(`a ${FRAME_TYPE_NAMES[type]} payload cannot contain '##END'`);
  }
  const out = Buffer.allocUnsafe(OVERHEAD + body.byteLength);
  START.copy(out, 0);
  out[7] = type;
  out.write(taskKey(taskId), 8, 8, 'latin1');
  out.write(String(seq).padStart(4, '0'), 16, 4, 'latin1');
  out.set(body, HEADER);
  END.copy(out, HEADER + body.byteLength);
  return out;
}

/**
 * Make a raw s16le PCM chunk safe to send: wherever `##END` or `##START` occurs, lower one sample
 * by one LSB (inaudible) so the marker disappears. Both markers begin with "##", and one of those
 * two bytes sits at an even offset, i.e. is a sample's low byte: 0x23 → 0x22 is exactly -1 LSB
 * and cannot create a new marker. Returns the input itself when nothing needed changing.
 */
export function nudgePcmMarkers(pcm: Uint8Array): Uint8Array {
  let buf = Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength);
  let copied = false;
  for (const marker of [END, START]) {
    let at = buf.indexOf(marker);
    while (at >= 0) {
      if (!copied) {
        buf = Buffer.from(buf);
        copied = true;
      }
      const low = at % 2 === 0 ? at : at + 1;
      buf[low] = HASH - 1;
      at = buf.indexOf(marker, at + 1);
    }
  }
  return copied ? buf : pcm;
}

// ---------------------------------------------------------------------------------------------
// Decoding

export type DecodeIssue =
  | { kind: 'garbage'; bytes: number }
  | { kind: 'unknown_type'; type: number; taskId: string; bytes: number }
  | { kind: 'frame_too_large'; limit: number; type: number; taskId: string }
  | { kind: 'truncated'; bytes: number };

export interface DecoderOptions {
  maxFrameBytes?: number;
  /**
   * Deliver a held AUDIO_FRAME at once, in pieces if its `##END` proves to be payload (see the
   * top). Only for readers that treat audio payloads as one stream per task.
   */
  earlyAudio?: boolean;
  /** Told about everything that was dropped, so the connection can log raw oddities. */
  onIssue?: (issue: DecodeIssue) => void;
}

function isTextLike(type: number): boolean {
  return type !== FrameType.AUDIO && type >= 1 && type <= 9;
}

/** A valid header starts at `at`: the marker, a type byte, 8 printable bytes, 4 digits. */
function headerAt(buf: Buffer, at: number): boolean {
  if (buf.length - at < HEADER) return false;
  for (let i = 0; i < START.length; i++) if (buf[at + i] !== START[i]) return false;
  const type = buf[at + 7]!;
  if (type < 1 || type > MAX_TYPE) return false;
  for (let i = at + 8; i < at + 16; i++) {
    const c = buf[i]!;
    if (c < 0x20 || c > 0x7e) return false;
  }
  for (let i = at + 16; i < at + 20; i++) {
    const c = buf[i]!;
    if (c < 0x30 || c > 0x39) return false;
  }
  return true;
}

/** Could the `n` bytes at `at` (fewer than a header) still become a valid header? */
function couldBeHeader(buf: Buffer, at: number): boolean {
  const n = buf.length - at;
  for (let i = 0; i < n && i < HEADER; i++) {
    const c = buf[at + i]!;
    if (i < 7) {
      if (c !== START[i]) return false;
    } else if (i === 7) {
      if (c < 1 || c > MAX_TYPE) return false;
    } else if (i < 16) {
      if (c < 0x20 || c > 0x7e) return false;
    } else if (c < 0x30 || c > 0x39) return false;
  }
  return true;
}

/** Whether to end a held binary frame at its last `##END`: not yet, after an idle moment, or at EOF. */
type Force = 'no' | 'idle' | 'eof';

// The decoder's states, as in `ws`'s receiver (lib/receiver.js): `parse` switches on the state and
// each state reads as the rule of protocols/advent.md §2 it implements.
/** Between frames: drop bytes up to the next valid header, reporting them as garbage. */
const SEEK_HEADER = 0;
/** In a text-like frame: its first `##END` ends it. */
const TEXT_BODY = 1;
/** In an AUDIO_FRAME or a frame of unknown type: the last `##END` before the next valid header ends it. */
const BINARY_BODY = 2;
/** After an oversized frame was reported: drop bytes up to the next valid header, quietly. */
const SKIP = 3;
type State = typeof SEEK_HEADER | typeof TEXT_BODY | typeof BINARY_BODY | typeof SKIP;

/**
 * What a state returns when it needs more bytes: the count of leading bytes it is done with,
 * encoded below zero so that any other return value is simply the position to go on from.
 */
function waitFrom(consumed: number): number {
  return -1 - consumed;
}

export class FrameDecoder {
  private readonly max: number;
  private readonly onIssue: (issue: DecodeIssue) => void;
  private readonly earlyAudio: boolean;
  /** earlyAudio: how many bytes of the current frame's payload were already delivered. */
  private delivered = 0;

  /** Unconsumed bytes live in buf[head, tail); in a frame, the frame starts at `head`. */
  private buf: Buffer = Buffer.alloc(0);
  private head = 0;
  private tail = 0;

  private state: State = SEEK_HEADER;
  /**
   * In a frame, as an offset from its start: every marker that starts before `scan` has been seen,
   * so no byte is searched twice (but for the few at a chunk's end that may begin a marker).
   */
  private scan = 0;
  /** BINARY_BODY: just after the last `##END` seen (offset from the frame's start), or -1. */
  private lastEnd = -1;
  /**
   * Below this many buffered bytes, a small chunk without a marker's last byte cannot complete a
   * marker, a header or the size limit, so it is appended without parsing: one byte at a time
   * costs a few nanoseconds instead of a full scan.
   */
  private wakeLen = 0;
  // Consecutive frames almost always share a task id: reuse the decoded string. (Comparing the
  // bytes with the string's char codes instead of a copy of them was 5 % slower on case (a).)
  private lastTaskBytes = new Uint8Array(8);
  private lastTaskId = '';

  constructor(options: DecoderOptions = {}) {
    this.max = options.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES;
    this.onIssue = options.onIssue ?? (() => {});
    this.earlyAudio = options.earlyAudio ?? false;
  }

  /** Bytes held waiting for the rest of a frame. */
  get buffered(): number {
    return this.tail - this.head;
  }

  /**
   * True when a binary frame could be complete but is held in case its `##END` was payload: the
   * caller should `flush()` after a short idle moment.
   */
  get hasTentative(): boolean {
    return this.state === BINARY_BODY && this.lastEnd >= 0;
  }

  /** Feed bytes; returns the frames they complete. The decoder may keep views into `chunk`. */
  push(chunk: Uint8Array): Frame[] {
    const n = chunk.byteLength;
    if (n === 0) return NO_FRAMES;
    // One byte at a time (a server writing byte by byte): just store it unless it ends a marker.
    // Here in `push` itself, not in `read`: one call per byte less is a quarter of case (b)'s time.
    if (n === 1 && this.tail < this.buf.length && this.tail - this.head + 1 < this.wakeLen) {
      const c = chunk[0]!;
      if (
        !(c === MARKER_LAST_D && this.markerEndsAt(chunk as Buffer, 0, END)) &&
        !(c === MARKER_LAST_T && this.markerEndsAt(chunk as Buffer, 0, START))
      ) {
        this.buf[this.tail++] = c;
        return NO_FRAMES;
      }
    }
    const out = this.read(chunk, n);
    return this.earlyAudio ? this.deliverHeld(out) : out;
  }

  private read(chunk: Uint8Array, n: number): Frame[] {
    const incoming = Buffer.isBuffer(chunk)
      ? chunk
      : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    if (
      n <= SMALL_CHUNK &&
      this.tail - this.head + n < this.wakeLen &&
      !this.completesMarker(incoming)
    ) {
      this.append(incoming);
      return NO_FRAMES;
    }
    const out: Frame[] = [];
    if (this.tail === this.head) {
      // Nothing pending: parse the chunk in place and copy only its unfinished tail.
      this.consume(incoming, false, 'no', out);
      return out;
    }
    // Bytes are pending: complete them with as little of the chunk as will likely do (up to its
    // first `##END` and the header after it), then go back to reading the chunk itself, so one
    // frame straddling a boundary does not make every later byte go through our buffer.
    const firstEnd = incoming.indexOf(END);
    const prefix = firstEnd < 0 ? n : Math.min(n, firstEnd + END.length + HEADER);
    this.append(incoming.subarray(0, prefix));
    this.consume(this.buf.subarray(this.head, this.tail), true, 'no', out);
    if (prefix === n) return out;
    const left = this.tail - this.head;
    if (left <= prefix) {
      // Every byte still buffered is a copy of this chunk's start: drop the copy, read the chunk.
      this.head = this.tail = 0;
      this.consume(incoming.subarray(prefix - left), false, 'no', out);
    } else {
      this.append(incoming.subarray(prefix));
      this.consume(this.buf.subarray(this.head, this.tail), true, 'no', out);
    }
    return out;
  }

  /** Deliver a held binary frame now (after an idle moment, or at end of stream). */
  flush(): Frame[] {
    const out: Frame[] = [];
    if (this.hasTentative) this.consume(this.buf.subarray(this.head, this.tail), true, 'idle', out);
    return out;
  }

  /** End of stream: deliver what is complete, report what is not, and reset. */
  finish(): Frame[] {
    const out: Frame[] = [];
    if (this.inFrame()) this.consume(this.buf.subarray(this.head, this.tail), true, 'eof', out);
    const left = this.tail - this.head;
    if (left > 0 && this.state !== SKIP)
      this.onIssue({ kind: this.inFrame() ? 'truncated' : 'garbage', bytes: left });
    this.reset();
    return out;
  }

  reset(): void {
    this.delivered = 0;
    this.buf = Buffer.alloc(0);
    this.head = this.tail = 0;
    this.state = SEEK_HEADER;
    this.wakeLen = 0;
  }

  /**
   * earlyAudio: the held AUDIO_FRAME's payload up to its last `##END` that was not delivered yet,
   * as a frame of its own after `out`. The frame being read always starts at `head` in our buffer.
   */
  private deliverHeld(out: Frame[]): Frame[] {
    if (!this.hasTentative) return out;
    const buf = this.buf;
    const at = this.head;
    if (buf[at + 7] !== FrameType.AUDIO) return out;
    const end = this.lastEnd - END.length - HEADER;
    if (end <= this.delivered) return out;
    const frame: Frame = {
      type: FrameType.AUDIO,
      taskId: this.taskIdAt(buf, at + 8),
      seq: seqAt(buf, at + 16),
      payload: Buffer.from(buf.subarray(at + HEADER + this.delivered, at + HEADER + end)),
    };
    this.delivered = end;
    if (out === NO_FRAMES) return [frame];
    out.push(frame);
    return out;
  }

  private inFrame(): boolean {
    return this.state === TEXT_BODY || this.state === BINARY_BODY;
  }

  private consume(data: Buffer, owned: boolean, force: Force, out: Frame[]): void {
    const consumed = this.parse(data, owned, force, out);
    if (owned) {
      this.head += consumed;
      if (this.head === this.tail) this.head = this.tail = 0;
    } else if (consumed < data.length) {
      this.head = this.tail = 0;
      this.append(data.subarray(consumed));
    }
    this.wakeLen = this.wake();
  }

  /** How many bytes may be held, when no marker completes, before parsing could decide more. */
  private wake(): number {
    const held = this.tail - this.head;
    switch (this.state) {
      case SEEK_HEADER:
      case SKIP:
        // Anything held is the start of a possible header, decided once it is whole; garbage
        // without a marker byte is dropped in batches.
        return held > 0 ? HEADER : GARBAGE_WAKE;
      case TEXT_BODY:
        return Math.min(held + GARBAGE_WAKE, this.max + OVERHEAD + 1);
      case BINARY_BODY: {
        const wake = Math.min(held + GARBAGE_WAKE, this.max + OVERHEAD + 1);
        // Held bytes past `scan` are a whole `##START` only when binaryBody stopped at a header
        // still arriving (otherwise it leaves fewer): decide when that header is whole.
        return held - this.scan >= START.length ? Math.min(wake, this.scan + HEADER) : wake;
      }
    }
  }

  private append(chunk: Buffer): void {
    const pending = this.tail - this.head;
    const need = pending + chunk.length;
    if (this.tail + chunk.length > this.buf.length) {
      // Compact only when that frees at least half the buffer, else grow: copies stay amortised O(1).
      if (need <= this.buf.length >>> 1) {
        this.buf.copy(this.buf, 0, this.head, this.tail);
      } else {
        const next = Buffer.allocUnsafe(Math.max(need * 2, 64 * 1024));
        this.buf.copy(next, 0, this.head, this.tail);
        this.buf = next;
      }
      this.head = 0;
      this.tail = pending;
    }
    if (chunk.length <= SMALL_CHUNK) {
      // Buffer#copy costs more than a short loop for a few bytes (one-byte writes are common).
      const buf = this.buf;
      let at = this.tail;
      for (let i = 0; i < chunk.length; i++) buf[at++] = chunk[i]!;
    } else {
      chunk.copy(this.buf, this.tail);
    }
    this.tail += chunk.length;
  }

  /**
   * Parse frames out of `data` and return how many leading bytes are consumed: the state loop.
   * `owned`: `data` is our buffer (frames get copies). `force` ends a held binary frame.
   */
  private parse(data: Buffer, owned: boolean, force: Force, out: Frame[]): number {
    let pos = 0;
    for (;;) {
      switch (this.state) {
        case SEEK_HEADER:
        case SKIP:
          pos = this.seekHeader(data, pos);
          break;
        case TEXT_BODY:
          pos = this.textBody(data, pos, owned, out);
          break;
        case BINARY_BODY:
          pos = this.binaryBody(data, pos, owned, force, out);
          break;
      }
      if (pos < 0) return -1 - pos;
    }
  }

  /** SEEK_HEADER, SKIP: drop bytes up to the next valid header, then read its frame. */
  private seekHeader(data: Buffer, pos: number): number {
    // Frames usually follow each other directly: look right here before searching.
    if (headerAt(data, pos)) return this.open(data, pos);
    const { at, keepFrom } = findHeader(data, pos);
    const dropped = (at < 0 ? keepFrom : at) - pos;
    if (dropped > 0 && this.state === SEEK_HEADER)
      this.onIssue({ kind: 'garbage', bytes: dropped });
    return at < 0 ? waitFrom(keepFrom) : this.open(data, at);
  }

  /** A valid header starts at `at`: read its frame's body. */
  private open(data: Buffer, at: number): number {
    this.state = isTextLike(data[at + 7]!) ? TEXT_BODY : BINARY_BODY;
    this.delivered = 0;
    this.scan = HEADER;
    this.lastEnd = -1;
    return at;
  }

  /** TEXT_BODY: the payload cannot hold `##END`, so the first one ends the frame. */
  private textBody(data: Buffer, pos: number, owned: boolean, out: Frame[]): number {
    const at = data.indexOf(END, pos + this.scan);
    if (at >= 0) {
      // Frames usually follow each other directly: read the next one at once.
      const end = this.close(data, pos, at + END.length, owned, out);
      return headerAt(data, end) ? this.open(data, end) : end;
    }
    this.scan = Math.max(HEADER, data.length - pos - (END.length - 1));
    return this.awaitEnd(data, pos);
  }

  /**
   * BINARY_BODY: the payload may hold `##END` and `##START`, so the frame ends at the last `##END`
   * before the next valid header. When the bytes run out after an `##END`, the frame is held
   * (tentative) until more bytes or `force` decide.
   */
  private binaryBody(
    data: Buffer,
    pos: number,
    owned: boolean,
    force: Force,
    out: Frame[],
  ): number {
    if (this.lastEnd < 0 && this.scan === HEADER) {
      // Fast path: the first `##END` directly followed by a valid header ends the frame. The
      // general rule below gives the same answer, because any `##START` before the first `##END`
      // is payload either way. The next frame is read at once: its header is already checked.
      const at = data.indexOf(END, pos + HEADER);
      if (at >= 0 && headerAt(data, at + END.length)) {
        return this.open(data, this.close(data, pos, at + END.length, owned, out));
      }
    }
    for (;;) {
      const from = pos + this.scan;
      const next = data.indexOf(START, from);
      this.seeEnds(data, pos, from, next < 0 ? data.length : next);
      if (next < 0) {
        this.scan = Math.max(HEADER, data.length - pos - (START.length - 1));
        break;
      }
      if (data.length - next < HEADER && force !== 'eof' && couldBeHeader(data, next)) {
        // A header may be arriving: decide when it is whole (at end of stream it never will).
        this.scan = next - pos;
        break;
      }
      if (this.lastEnd >= 0 && headerAt(data, next))
        return this.close(data, pos, pos + this.lastEnd, owned, out);
      // A `##START` inside the payload.
      this.scan = next + 1 - pos;
    }
    if (force !== 'no' && this.lastEnd >= 0)
      return this.close(data, pos, pos + this.lastEnd, owned, out);
    return this.awaitEnd(data, pos);
  }

  /**
   * Note the last `##END` in data[from, limit). `##END` and `##START` cannot overlap, so one
   * cursor serves both searches; the few bytes searched again after a chunk's end find the same
   * `##END` again, which changes nothing.
   */
  private seeEnds(data: Buffer, pos: number, from: number, limit: number): void {
    if (limit - from < END.length) return;
    const at = data.subarray(from, limit).lastIndexOf(END);
    if (at >= 0) this.lastEnd = from + at + END.length - pos;
  }

  /** The frame at `pos` has no end yet: wait for more bytes, or give it up if it is too large. */
  private awaitEnd(data: Buffer, pos: number): number {
    if (data.length - pos <= this.max + OVERHEAD) return waitFrom(pos);
    // Reported without waiting for its end: then skip quietly to the next header.
    this.tooLarge(data, pos);
    this.state = SKIP;
    return data.length - (START.length - 1);
  }

  /** The frame at `pos` ends at `end`: deliver it (or report it), and look for the next one. */
  private close(data: Buffer, pos: number, end: number, owned: boolean, out: Frame[]): number {
    if (end - pos > this.max + OVERHEAD) this.tooLarge(data, pos);
    else this.emit(data, pos, end, owned, out);
    this.state = SEEK_HEADER;
    return end;
  }

  private tooLarge(data: Buffer, pos: number): void {
    // What earlyAudio delivered of it stays delivered (at most the limit); the rest is dropped.
    this.delivered = 0;
    this.onIssue({
      kind: 'frame_too_large',
      limit: this.max,
      type: data[pos + 7]!,
      taskId: data.toString('latin1', pos + 8, pos + 16),
    });
  }

  /** Does some byte of `chunk` complete a `##END` or `##START` (looking back into the buffer)? */
  private completesMarker(chunk: Buffer): boolean {
    for (let i = 0; i < chunk.length; i++) {
      const c = chunk[i];
      if (
        (c === MARKER_LAST_D && this.markerEndsAt(chunk, i, END)) ||
        (c === MARKER_LAST_T && this.markerEndsAt(chunk, i, START))
      ) {
        return true;
      }
    }
    return false;
  }

  private markerEndsAt(chunk: Uint8Array, i: number, marker: Buffer): boolean {
    for (let k = marker.length - 1, j = i; k >= 0; k--, j--) {
      const at = this.tail + j; // j < 0 reaches back into the buffered bytes
      const b = j >= 0 ? chunk[j] : at >= this.head ? this.buf[at] : undefined;
      if (b !== marker[k]) return false;
    }
    return true;
  }

  private taskIdAt(data: Buffer, at: number): string {
    const last = this.lastTaskBytes;
    let same = this.lastTaskId !== '';
    for (let i = 0; i < 8 && same; i++) same = data[at + i] === last[i];
    if (!same) {
      for (let i = 0; i < 8; i++) last[i] = data[at + i]!;
      this.lastTaskId = data.toString('latin1', at, at + 8);
    }
    return this.lastTaskId;
  }

  private emit(data: Buffer, pos: number, end: number, owned: boolean, out: Frame[]): void {
    const type = data[pos + 7]!;
    const taskId = this.taskIdAt(data, pos + 8);
    if (type < 1 || type > 9) {
      this.onIssue({ kind: 'unknown_type', type, taskId, bytes: end - pos });
      return;
    }
    const seq = seqAt(data, pos + 16);
    let body = data.subarray(pos + HEADER, end - END.length);
    if (this.delivered > 0) {
      // earlyAudio delivered its start already: only the rest is new, if any.
      body = body.subarray(this.delivered);
      this.delivered = 0;
      if (body.length === 0) return;
    }
    // Our buffer is reused, so its bytes are copied out; an incoming chunk is not, so a view is safe.
    out.push({
      type: type as KnownFrameType,
      taskId,
      seq,
      payload: owned ? Buffer.from(body) : body,
    });
  }
}

/** The 4 ASCII digits of a header's seq (already checked to be digits). */
function seqAt(data: Buffer, at: number): number {
  return (
    (data[at]! - 0x30) * 1000 +
    (data[at + 1]! - 0x30) * 100 +
    (data[at + 2]! - 0x30) * 10 +
    (data[at + 3]! - 0x30)
  );
}

/** The next valid header at or after `from`; else where the kept tail (a possible header start) begins. */
function findHeader(data: Buffer, from: number): { at: number; keepFrom: number } {
  let at = data.indexOf(START, from);
  while (at >= 0) {
    if (data.length - at < HEADER) {
      if (couldBeHeader(data, at)) return { at: -1, keepFrom: at };
    } else if (headerAt(data, at)) {
      return { at, keepFrom: at };
    }
    at = data.indexOf(START, at + 1);
  }
  // No whole marker left: keep the longest tail that is a prefix of `##START`.
  for (let i = Math.max(from, data.length - (START.length - 1)); i < data.length; i++) {
    if (couldBeHeader(data, i)) return { at: -1, keepFrom: i };
  }
  return { at: -1, keepFrom: data.length };
}
