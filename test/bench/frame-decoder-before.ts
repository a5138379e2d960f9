/**
 * REFERENCE ONLY, frozen: `FrameDecoder` of app/wire/advent/frame.ts as it was before it was
 * rewritten as named states (issue 9 §6; copied from commit 7b031c6, renamed
 * `FrameDecoderBefore`, code unchanged). The decode bench (decode.ts) times it next to today's
 * decoder on the same bytes so the two can be compared in one run. Nothing else uses it; do not
 * change it, or the comparison means nothing.
 */
import {
  DEFAULT_MAX_FRAME_BYTES,
  type DecodeIssue,
  type DecoderOptions,
  type Frame,
  FrameType,
  type KnownFrameType,
} from '../../app/wire/advent/frame.js';

const START = Buffer.from('##START', 'latin1');
const END = Buffer.from('##END', 'latin1');
const HEADER = START.length + 1 + 8 + 4; // 20
const OVERHEAD = HEADER + END.length; // 25
const MAX_TYPE = 31; // type bytes we parse structurally; 1..9 are known, others are skipped
/** Every marker ends in one of these: `##END` in 'D', `##START` in 'T'. */
const MARKER_LAST_D = 0x44;
const MARKER_LAST_T = 0x54;
/** Chunks up to this size are only appended unless they could complete something (see push). */
const SMALL_CHUNK = 64;
/** Garbage without a marker byte is still dropped at least this often, so it cannot pile up. */
const GARBAGE_WAKE = 4096;
const NO_FRAMES: Frame[] = [];

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

export class FrameDecoderBefore {
  private readonly max: number;
  private readonly onIssue: (issue: DecodeIssue) => void;

  /** Unconsumed bytes live in buf[head, tail). */
  private buf: Buffer = Buffer.alloc(0);
  private head = 0;
  private tail = 0;

  // The frame being read. Offsets are relative to `head` between pushes.
  private inFrame = false;
  /** Where to resume searching: for `##END` (text-like) or for the next `##START` (binary). */
  private scan = 0;
  /** Binary frames: offset just after the last `##END` candidate, or -1. */
  private lastEnd = -1;
  /** Binary frames: where to resume searching for `##END` candidates. */
  private endScan = 0;
  /** Dropping the rest of an oversized frame: skip quietly until the next header. */
  private skipping = false;
  /** Where the fast path just validated the next header (relative to the data being parsed). */
  private checkedHeaderAt = -1;
  /** A header that may be arriving starts here (relative to `head`), or -1. */
  private partialAt = -1;
  /**
   * Below this many buffered bytes, a small chunk without a marker's last byte cannot complete a
   * marker, a header or the size limit, so it is appended without parsing: one byte at a time
   * costs a few nanoseconds instead of a full scan.
   */
  private wakeLen = 0;
  // Consecutive frames almost always share a task id: reuse the decoded string.
  private lastTaskBytes = new Uint8Array(8);
  private lastTaskId = '';

  constructor(options: DecoderOptions = {}) {
    this.max = options.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES;
    this.onIssue = options.onIssue ?? (() => {});
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
    return this.inFrame && this.lastEnd >= 0;
  }

  /** Feed bytes; returns the frames they complete. The decoder may keep views into `chunk`. */
  push(chunk: Uint8Array): Frame[] {
    const n = chunk.byteLength;
    if (n === 0) return NO_FRAMES;
    if (n === 1 && this.tail < this.buf.length && this.tail - this.head + 1 < this.wakeLen) {
      // One byte at a time (a server writing byte by byte): just store it unless it ends a marker.
      const c = chunk[0]!;
      if (
        !(c === MARKER_LAST_D && this.markerEndsAt(chunk as Buffer, 0, END)) &&
        !(c === MARKER_LAST_T && this.markerEndsAt(chunk as Buffer, 0, START))
      ) {
        this.buf[this.tail++] = c;
        return NO_FRAMES;
      }
    }
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
    if (this.inFrame) this.consume(this.buf.subarray(this.head, this.tail), true, 'eof', out);
    const left = this.tail - this.head;
    if (left > 0 && !this.skipping)
      this.onIssue({ kind: this.inFrame ? 'truncated' : 'garbage', bytes: left });
    this.reset();
    return out;
  }

  reset(): void {
    this.buf = Buffer.alloc(0);
    this.head = this.tail = 0;
    this.resetFrame();
    this.skipping = false;
    this.partialAt = -1;
    this.wakeLen = 0;
  }

  private resetFrame(): void {
    this.inFrame = false;
    this.scan = 0;
    this.lastEnd = -1;
    this.endScan = 0;
  }

  private consume(data: Buffer, owned: boolean, force: Force, out: Frame[]): void {
    const consumed = this.parse(data, out, owned, force);
    if (owned) {
      this.head += consumed;
      if (this.head === this.tail) this.head = this.tail = 0;
    } else if (consumed < data.length) {
      this.head = this.tail = 0;
      this.append(data.subarray(consumed));
    }
    if (this.inFrame && consumed > 0) {
      this.scan -= consumed;
      this.endScan -= consumed;
      if (this.lastEnd >= 0) this.lastEnd -= consumed;
    }
    let wake = this.tail - this.head + GARBAGE_WAKE;
    if (this.partialAt >= 0) wake = Math.min(wake, this.partialAt - consumed + HEADER);
    if (this.inFrame) wake = Math.min(wake, this.max + OVERHEAD + 1);
    this.wakeLen = wake;
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
   * Parse frames out of `data` and return how many leading bytes are consumed. Frame state offsets
   * are relative to `data` while this runs. `force` ends a held binary frame at its last `##END`.
   */
  private parse(data: Buffer, out: Frame[], owned: boolean, force: Force): number {
    let pos = 0;
    this.partialAt = -1;
    this.checkedHeaderAt = -1;
    for (;;) {
      if (!this.inFrame) {
        // Frames usually follow each other directly: look right here before searching.
        let at = pos;
        let keepFrom = pos;
        if (pos !== this.checkedHeaderAt && !headerAt(data, pos))
          ({ at, keepFrom } = findHeader(data, pos));
        this.checkedHeaderAt = -1;
        if (at < 0 && keepFrom < data.length) this.partialAt = keepFrom;
        const dropped = (at < 0 ? keepFrom : at) - pos;
        if (dropped > 0 && !this.skipping) this.onIssue({ kind: 'garbage', bytes: dropped });
        if (at < 0) return keepFrom;
        this.skipping = false;
        pos = at;
        this.inFrame = true;
        this.scan = this.endScan = pos + HEADER;
        this.lastEnd = -1;
      }

      const frameEnd = isTextLike(data[pos + 7]!)
        ? this.findTextEnd(data, pos)
        : this.findBinaryEnd(data, pos, force);
      if (frameEnd < 0) {
        if (data.length - pos <= this.max + OVERHEAD) return pos;
        // No end in sight within the limit: report, then skip quietly to the next header.
        this.tooLarge(data, pos);
        this.resetFrame();
        this.skipping = true;
        pos = data.length - (START.length - 1);
        continue;
      }
      if (frameEnd - pos > this.max + OVERHEAD) this.tooLarge(data, pos);
      else this.emit(data, pos, frameEnd, out, owned);
      this.resetFrame();
      pos = frameEnd;
    }
  }

  private findTextEnd(data: Buffer, pos: number): number {
    const at = data.indexOf(END, this.scan);
    if (at >= 0) return at + END.length;
    this.scan = Math.max(pos + HEADER, data.length - (END.length - 1));
    return -1;
  }

  /** A binary frame ends at the last `##END` before the next valid header; -1 while undecided. */
  private findBinaryEnd(data: Buffer, pos: number, force: Force): number {
    if (this.lastEnd < 0 && this.scan === pos + HEADER) {
      // Fast path: the first `##END` directly followed by a valid header ends the frame. The
      // general rule below (the last `##END` before the next valid header) gives the same answer,
      // because any `##START` before the first `##END` is payload either way.
      const at = data.indexOf(END, pos + HEADER);
      if (at >= 0 && headerAt(data, at + END.length)) {
        this.checkedHeaderAt = at + END.length;
        return at + END.length;
      }
    }
    for (;;) {
      const next = data.indexOf(START, this.scan);
      this.collectEnds(data, next < 0 ? data.length : next);
      if (next < 0) {
        this.scan = Math.max(pos + HEADER, data.length - (START.length - 1));
        break;
      }
      if (data.length - next < HEADER && couldBeHeader(data, next) && force !== 'eof') {
        // A header may be arriving: decide when it is whole (at end of stream it never will).
        this.scan = next;
        this.partialAt = next;
        break;
      }
      if (this.lastEnd >= 0 && headerAt(data, next)) return this.lastEnd;
      // A `##START` inside the payload.
      this.scan = next + 1;
    }
    return force !== 'no' && this.lastEnd >= 0 ? this.lastEnd : -1;
  }

  /** Record `##END` candidates that finish at or before `limit`. */
  private collectEnds(data: Buffer, limit: number): void {
    for (;;) {
      const at = data.indexOf(END, this.endScan);
      if (at < 0) {
        this.endScan = Math.max(this.endScan, data.length - (END.length - 1));
        return;
      }
      if (at + END.length > limit) {
        this.endScan = at;
        return;
      }
      this.lastEnd = at + END.length;
      this.endScan = at + 1;
    }
  }

  private tooLarge(data: Buffer, pos: number): void {
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

  private emit(data: Buffer, pos: number, frameEnd: number, out: Frame[], owned: boolean): void {
    const type = data[pos + 7]!;
    const taskId = this.taskIdAt(data, pos + 8);
    if (type < 1 || type > 9) {
      this.onIssue({ kind: 'unknown_type', type, taskId, bytes: frameEnd - pos });
      return;
    }
    const seq =
      (data[pos + 16]! - 0x30) * 1000 +
      (data[pos + 17]! - 0x30) * 100 +
      (data[pos + 18]! - 0x30) * 10 +
      (data[pos + 19]! - 0x30);
    const body = data.subarray(pos + HEADER, frameEnd - END.length);
    // Our buffer is reused, so its bytes are copied out; an incoming chunk is not, so a view is safe.
    out.push({
      type: type as KnownFrameType,
      taskId,
      seq,
      payload: owned ? Buffer.from(body) : body,
    });
  }
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
