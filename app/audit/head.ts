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
 * Two fixed-size slots, written alternately, each a line with its own checksum: a write torn by a
 * crash spoils one slot, and the other still holds the head before it.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { AuditIo, HeadHandle } from './append.js';
import { headMac } from './chain.js';
import { sha256Hex } from './redact.js';

export const HEAD_FILE = 'head';
/** Bytes per slot, newline included: the JSON below with its 64-hex hash and MAC fits in ~200. */
const SLOT_BYTES = 256;
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
  /** Which slot the newest head is in (the next write goes to the other). */
  slot: number;
}

/** Reads the head of the log in `dir`. */
export async function readHead(dir: string): Promise<HeadRead> {
  let text: string;
  try {
    text = await readFile(join(dir, HEAD_FILE), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { exists: false, slot: 1 };
    throw err;
  }
  let best: Head | undefined;
  let slot = 1;
  text.split('\n').forEach((line, k) => {
    const head = parseSlot(line);
    if (head && (!best || head.seq > best.seq)) {
      best = head;
      slot = k;
    }
  });
  return { head: best, exists: true, slot };
}

/** Writes the head, alternating slots, through one handle kept open. */
export class HeadWriter {
  private handle: HeadHandle | undefined;
  /** The newest durable position of the log not yet in the head file. */
  private pending: { seq: number; hash: string } | undefined;
  private writing: Promise<void> | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** The slot the newest head is in. */
  private slot: number;

  constructor(
    private readonly io: AuditIo,
    private readonly dir: string,
    private readonly key: string | undefined,
    read: HeadRead,
  ) {
    this.slot = read.slot;
  }

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

  /** Writes `seq`/`hash` into the slot not holding the newest head, and flushes it. */
  private async writeSlot(seq: number, hash: string): Promise<void> {
    const head: Head = {
      seq,
      hash,
      ...(this.key !== undefined && { mac: headMac(this.key, seq, hash) }),
    };
    const bytes = Buffer.from(formatHeadSlot(head), 'utf8');
    const slot = this.slot === 0 ? 1 : 0;
    try {
      this.handle ??= await this.io.openHead(join(this.dir, HEAD_FILE));
      await this.handle.write(bytes, 0, bytes.length, slot * SLOT_BYTES);
      await this.handle.sync();
    } catch (err) {
      const handle = this.handle;
      this.handle = undefined;
      await handle?.close().catch(() => undefined);
      throw err;
    }
    this.slot = slot;
  }
}
