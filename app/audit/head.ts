/**
 * The durable head: the last seq and hash of the log, kept outside the month files, so verify can
 * tell records cut off the end (or the newest replaced by junk) from a log that simply ends there.
 *
 * Written (and flushed) only for positions whose lines are already durable in the month file, so
 * the head is never ahead of the log, whatever stops the process or the machine: a head ahead of
 * the chain always means records were taken away. A head behind is accepted (its seq and hash
 * must still be found in the chain, and every record after it still carries its keyed MAC).
 *
 * It is written off the calls' path, at most FLUSH_DELAY_MS after a batch is durable, one write +
 * flush covering every batch of that moment: a reply waits for one disk flush (its record's), not
 * two, and the head costs the calls nothing. The price: records of the last FLUSH_DELAY_MS before
 * a crash are past the head, so cutting exactly those off the end would go unnoticed (adding or
 * changing one would not: each carries its MAC). A clean close writes the head at once.
 *
 * Two fixed-size slots, each a line with its own checksum, both holding the same head: a write
 * goes to slot 0, is flushed, then to slot 1 and is flushed. A write torn by a crash spoils one
 * slot and the other still holds a head (the new one, or the one before). An older head exists
 * only while a write is under way, so spoiling one slot can never bring back an older head to
 * hide records cut off the end: a damaged slot is reported (`damaged`), never silently passed over.
 * The file itself comes into being whole (both slots, through a rename: AuditIo.openHead), so a
 * reader looking between the first write's two slots on a new data folder sees no false damage.
 */
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import type { AuditIo, HeadHandle } from './append.js';
import { headMac } from './chain.js';
import { sha256Hex } from './redact.js';

export const HEAD_FILE = 'head';
/** Bytes per slot, newline included: the JSON below with its 64-hex hash and MAC fits in ~200. */
const SLOT_BYTES = 256;
const SLOTS = 2;
/** How long a durable batch may wait for the head to follow it (the window a crash leaves open). */
export const FLUSH_DELAY_MS = 25;

export interface Head {
  seq: number;
  hash: string;
  /** HMAC of seq and hash under the log's key (absent for a log without a key). */
  mac?: string;
}

const HEX64 = /^[0-9a-f]{64}$/;

function check(head: Head): string {
  return sha256Hex(`${head.seq}:${head.hash}:${head.mac ?? ''}`).slice(0, 16);
}

/** One slot's text: the head as JSON with its checksum, padded to SLOT_BYTES with a final newline. */
export function formatHeadSlot(head: Head): string {
  const json = JSON.stringify({
    seq: head.seq,
    hash: head.hash,
    ...(head.mac !== undefined && { mac: head.mac }),
    check: check(head),
  });
  return `${json.padEnd(SLOT_BYTES - 1, ' ')}\n`;
}

function parseSlot(line: string): Head | undefined {
  let v: unknown;
  try {
    v = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (typeof v !== 'object' || v === null) return undefined;
  const r = v as Record<string, unknown>;
  if (!Number.isSafeInteger(r.seq) || (r.seq as number) < 0) return undefined;
  if (typeof r.hash !== 'string' || !HEX64.test(r.hash)) return undefined;
  if (r.mac !== undefined && (typeof r.mac !== 'string' || !HEX64.test(r.mac))) return undefined;
  const head: Head = {
    seq: r.seq as number,
    hash: r.hash,
    ...(r.mac !== undefined && { mac: r.mac as string }),
  };
  return r.check === check(head) ? head : undefined;
}

export interface HeadRead {
  /** The newest whole slot; undefined when there is no head file or no whole slot in it. */
  head?: Head;
  /** The file exists (a head file with no whole slot is damage, not a log from before heads). */
  exists: boolean;
  /**
   * A slot is not whole (torn, changed or missing): a head write cut short by a crash, or someone
   * hiding the newest head. `head` is then the other slot's, which may be older than the log was.
   */
  damaged?: boolean;
}

/** Reads the head of the log in `dir`. */
export async function readHead(dir: string): Promise<HeadRead> {
  let bytes: Buffer;
  try {
    // Only the two slots are read, however large someone made the file.
    const file = await open(join(dir, HEAD_FILE), 'r');
    try {
      const buf = Buffer.alloc(SLOTS * SLOT_BYTES);
      const { bytesRead } = await file.read(buf, 0, buf.length, 0);
      bytes = buf.subarray(0, bytesRead);
    } finally {
      await file.close();
    }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { exists: false };
    throw err;
  }
  let best: Head | undefined;
  let whole = 0;
  for (let k = 0; k < SLOTS; k++) {
    // Each slot at its own place: a slot cut short never shifts the next one into its place.
    const head = parseSlot(
      bytes.subarray(k * SLOT_BYTES, (k + 1) * SLOT_BYTES - 1).toString('utf8'),
    );
    if (!head) continue;
    whole += 1;
    // Two whole slots differ only after a crash between their writes: the newer one is the head.
    if (!best || head.seq > best.seq) best = head;
  }
  return { head: best, exists: true, ...(whole < SLOTS && { damaged: true }) };
}

/** Writes the head into both slots in turn, through one handle kept open. */
export class HeadWriter {
  private handle: HeadHandle | undefined;
  /** The newest durable position of the log not yet in the head file. */
  private pending: { seq: number; hash: string } | undefined;
  private writing: Promise<void> | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly io: AuditIo,
    private readonly dir: string,
    private readonly key: string | undefined,
  ) {}

  /**
   * Notes that the log is durable up to `seq`/`hash`. The head file follows within
   * FLUSH_DELAY_MS, written and flushed off the calls' path: a stream of calls costs one head
   * write per delay, not one per batch, and nothing of it is on a reply's way.
   */
  note(seq: number, hash: string): void {
    this.pending = { seq, hash };
    if (!this.writing) this.arm();
  }

  /** Schedules the next write FLUSH_DELAY_MS from now, unless one is scheduled already. */
  private arm(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.writeOut(false);
    }, FLUSH_DELAY_MS);
    this.timer.unref?.();
  }

  /** Writes the newest noted position now and waits for it to be on disk. */
  async flush(): Promise<void> {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    while (this.writing) await this.writing;
    await this.writeOut(true);
  }

  async close(): Promise<void> {
    await this.flush();
    const handle = this.handle;
    this.handle = undefined;
    if (handle) await handle.close().catch(() => undefined);
  }

  /**
   * Writes and flushes the newest noted position; failures wait for the next. A position noted
   * while it was being written waits for the next timer, so a stream of calls costs one head
   * write + flush per FLUSH_DELAY_MS, not one after another (they would share the disk with the
   * log's own flushes). `untilCurrent` (flush, close) writes until nothing newer is waiting.
   */
  private writeOut(untilCurrent: boolean): Promise<void> {
    if (this.writing) return this.writing;
    if (!this.pending) return Promise.resolve();
    const run = async (): Promise<void> => {
      do {
        const { seq, hash } = this.pending as { seq: number; hash: string };
        this.pending = undefined;
        await this.writeSlot(seq, hash).catch(() => undefined);
      } while (untilCurrent && this.pending);
    };
    // `finally` runs after this assignment (always asynchronously), so `writing` never sticks.
    this.writing = run().finally(() => {
      this.writing = undefined;
      if (this.pending) this.arm();
    });
    return this.writing;
  }

  /**
   * Writes `seq`/`hash` into slot 0, flushes, then into slot 1 and flushes: at every moment at
   * least one slot is whole, and once this returns both hold the new head (no older one is left
   * for a damaged slot to fall back on).
   */
  private async writeSlot(seq: number, hash: string): Promise<void> {
    const head: Head = {
      seq,
      hash,
      ...(this.key !== undefined && { mac: headMac(this.key, seq, hash) }),
    };
    const slot = formatHeadSlot(head);
    const bytes = Buffer.from(slot, 'utf8');
    try {
      // A missing file is made with this head in every slot; writing them again below costs a
      // new data folder two flushes, once.
      this.handle ??= await this.io.openHead(join(this.dir, HEAD_FILE), slot.repeat(SLOTS));
      for (let slot = 0; slot < SLOTS; slot++) {
        await this.handle.write(bytes, 0, bytes.length, slot * SLOT_BYTES);
        await this.handle.sync();
      }
    } catch (err) {
      const handle = this.handle;
      this.handle = undefined;
      await handle?.close().catch(() => undefined);
      throw err;
    }
  }
}
