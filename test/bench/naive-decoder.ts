/**
 * The baseline the frame decoder is measured against: the naive receive loop of the vendor's
 * sample Python client, ported as literally as Node allows.
 *
 *   buffer += chunk                      → Buffer.concat of everything held plus the new chunk
 *   start = buffer.find(b'##START')      → indexOf from the buffer's start, every time
 *   end = buffer.find(b'##END', start)   → likewise (start is 0 in a clean stream)
 *   frame = buffer[start:end + 5]        → a copy per frame
 *   buffer = buffer[end + 5:]            → the remainder copied again, per frame
 *
 * It has none of the protocol's robustness rules (no resynchronisation, no header validation, no
 * size bound, the first `##END` always ends the frame), so it is only fed streams it decodes
 * correctly: nudged PCM and text that cannot contain a marker. The bench checks that before timing.
 */

const START = Buffer.from('##START', 'latin1');
const END = Buffer.from('##END', 'latin1');
const HEADER = 20;

export interface NaiveFrame {
  type: number;
  taskId: string;
  seq: number;
  payload: Buffer;
}

export class NaiveDecoder {
  private buffer: Buffer = Buffer.alloc(0);

  push(chunk: Uint8Array): NaiveFrame[] {
    const out: NaiveFrame[] = [];
    this.buffer = Buffer.concat([this.buffer, chunk]);
    for (;;) {
      const start = this.buffer.indexOf(START);
      if (start < 0) break;
      const end = this.buffer.indexOf(END, start);
      if (end < 0) break;
      const frame = Buffer.from(this.buffer.subarray(start, end + END.length));
      out.push({
        type: frame[7]!,
        taskId: frame.toString('latin1', 8, 16),
        seq: Number(frame.toString('latin1', 16, 20)),
        payload: frame.subarray(HEADER, frame.length - END.length),
      });
      this.buffer = Buffer.from(this.buffer.subarray(end + END.length));
    }
    return out;
  }
}
