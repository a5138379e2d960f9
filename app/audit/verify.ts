import { join } from 'node:path';
import type { AuditKeyCheck, AuditVerifyResult } from '../contract/audit.js';
import { GENESIS_HASH, headMac, recordHash, recordMac } from './chain.js';
import { type StoredRecord, classifyLine, isIntent, listMonthFiles } from './files.js';
import { type HeadRead, readHead } from './head.js';
import { scanLines } from './lines.js';

export interface ChainHead {
  seq: number;
  hash: string;
}

/**
 * Records no key vouches for (chain-secret.ts): `macs-missing`, found without the MACs they
 * should carry when the log was opened; `key-unavailable`, written by a log whose key could not
 * be read.
 */
export interface UncheckedRange {
  from: number;
  to: number;
  why: 'macs-missing' | 'key-unavailable';
}

const WHY: Record<UncheckedRange['why'] | 'before-key', string> = {
  'before-key':
    'were written before the log had its key (by an older version, or the key was lost or removed)',
  'macs-missing':
    "carry no keyed MAC (recorded while the log's key could not be read, or their MACs removed by someone)",
  'key-unavailable':
    "were recorded while the log's key could not be read (see the notice at start)",
};

export interface VerifyOptions {
  /** The chain's key (chain.ts); without it the MACs cannot be checked, and the result says so. */
  key?: string;
  /**
   * From this seq on every record, and the head, must carry a MAC (the SecretStore's record of
   * when the log got its key). Without it, MACs are required only after the first one seen.
   */
  keyedFrom?: number;
  /** The log held this seq once (the SecretStore's record): fewer records means some were taken. */
  atLeast?: number;
  /** The newest record a running log wrote (it may be newer than what a reader finds on disk). */
  expected?: ChainHead;
  /**
   * When the running log was opened, a slot of its head file was damaged and the whole one said
   * this seq (head.ts): records after it may have been cut off before then, unseen. The log has
   * rewritten its head since, so only the log that found the damage can say so.
   */
  headDamagedAt?: number;
  /** Records no key vouches for: named by verify (never passed), and no MAC is asked of them. */
  unchecked?: readonly UncheckedRange[];
}

interface Failure {
  firstBadSeq: number;
  file: string;
  reason: string;
}

/**
 * Re-reads every month file from disk (never the memory cache: the point is to see what someone
 * may have changed there) in month order and checks each record's hash, the prevHash chain, seq
 * continuity across files, each record's keyed MAC when the key is given, and the end of the
 * chain against the head file (head.ts), so records cut off the end, or the newest replaced by
 * junk, are caught by a reader that never saw the log run.
 *
 * Lines that are not whole records are counted, not failed: a crash tears a line, and if a real
 * record was damaged the chain breaks at the next one, or the head catches it at the end. A torn
 * newest line with the chain reaching the head is what a crash mid-write leaves: reported as
 * `tornTail`, not as tampering.
 */
export async function verifyAudit(
  dir: string,
  options: VerifyOptions = {},
): Promise<AuditVerifyResult> {
  const { key, expected, keyedFrom, atLeast, headDamagedAt } = options;
  const unchecked = [...(options.unchecked ?? [])].sort((a, b) => a.from - b.from);
  const exempt = (seq: number): boolean => unchecked.some((r) => seq >= r.from && seq <= r.to);
  const keyedAt = (seq: number): boolean =>
    keyedFrom !== undefined && seq >= keyedFrom && !exempt(seq);
  const names = await listMonthFiles(dir);
  let headRead: HeadRead;
  try {
    headRead = await readHead(dir);
  } catch {
    headRead = { exists: true, damaged: true };
  }
  const head = headRead.head;
  let records = 0;
  /** Records whose keyed MAC was checked against the key (not merely present). */
  let macsChecked = 0;
  let tornLines = 0;
  let lastLineTorn = false;
  /** Some record carries a MAC: from there on every record must. */
  let sawMac = false;
  let prev: ChainHead = { seq: 0, hash: GENESIS_HASH };
  let hashAtHead: string | undefined;
  /**
   * The hash of the record at `expected.seq` as found. Records after it were written while this
   * verify read the files (calls go on meanwhile): they are checked like the rest, and the log's
   * own end is judged at the seq it had when verify began.
   */
  let hashAtExpected: string | undefined;
  let failure: Failure | undefined;
  let lastPath = dir;

  for (const name of names) {
    const path = join(dir, name);
    lastPath = path;
    // Streamed line by line: a month of records is never all in memory at once.
    await scanLines(path, (line) => {
      const record = classifyLine(line);
      if (record === 'blank') return;
      if (record === 'torn') {
        tornLines += 1;
        lastLineTorn = true;
        return;
      }
      lastLineTorn = false;
      if (!isIntent(record)) records += 1;
      if (failure) return; // keep counting so the result describes the whole log
      const due = (sawMac && !exempt(record.seq)) || keyedAt(record.seq);
      const reason = checkRecord(record, prev, key, due);
      if (record.mac !== undefined) {
        sawMac = true;
        if (!reason && key !== undefined) macsChecked += 1;
      }
      if (reason) failure = { firstBadSeq: record.seq, file: path, reason };
      else {
        prev = { seq: record.seq, hash: record.hash };
        if (head && record.seq === head.seq) hashAtHead = record.hash;
        if (expected && record.seq === expected.seq) hashAtExpected = record.hash;
      }
    });
  }

  const keyedEnd = sawMac || head?.mac !== undefined || keyedAt(prev.seq);
  const keyed = keyedEnd || keyedFrom !== undefined;
  if (!failure) failure = uncheckedFailure(prev.seq, keyedFrom, unchecked, lastPath);
  if (!failure) failure = checkEnd(prev, headRead, keyedEnd, key, hashAtHead, lastPath);
  if (!failure && headDamagedAt !== undefined)
    failure = {
      firstBadSeq: headDamagedAt + 1,
      file: lastPath,
      reason: damagedSlotReason(headDamagedAt, 'when the agent last started'),
    };
  if (!failure && atLeast !== undefined && prev.seq < atLeast)
    failure = {
      firstBadSeq: prev.seq + 1,
      file: lastPath,
      reason: `records missing at the end (the log held seq ${atLeast} when the agent last started or closed; the last whole record on disk is seq ${prev.seq})`,
    };
  if (!failure && expected && (prev.seq < expected.seq || hashAtExpected !== expected.hash)) {
    failure =
      prev.seq < expected.seq
        ? {
            firstBadSeq: prev.seq + 1,
            file: lastPath,
            reason: `records missing at the end (log truncated: last on disk is seq ${prev.seq}, expected ${expected.seq})`,
          }
        : {
            firstBadSeq: expected.seq,
            file: lastPath,
            reason: 'chain does not match the records this log wrote (files replaced)',
          };
  }

  // `checked` only when some MAC was: a keyed log none of whose records carries one was not.
  const keyCheck: AuditKeyCheck = !keyed
    ? 'none'
    : key === undefined
      ? 'no-key'
      : macsChecked > 0
        ? 'checked'
        : 'none';
  const common = {
    records,
    files: names.length,
    tornLines,
    tornTail: lastLineTorn && !failure,
    keyCheck,
  };
  return failure ? { ok: false, ...common, ...failure } : { ok: true, ...common };
}

/**
 * The first range of records on disk (up to `last`) that no key vouches for: before the key's
 * first record, or named by the SecretStore or the log. Reported, never passed: the chain alone
 * does not show whether someone rewrote them.
 */
function uncheckedFailure(
  last: number,
  keyedFrom: number | undefined,
  unchecked: readonly UncheckedRange[],
  file: string,
): Failure | undefined {
  const ranges: { from: number; to: number; why: keyof typeof WHY }[] = [];
  if (keyedFrom !== undefined && keyedFrom > 1)
    ranges.push({ from: 1, to: keyedFrom - 1, why: 'before-key' });
  ranges.push(...unchecked);
  const first = ranges.filter((r) => r.from <= last).sort((a, b) => a.from - b.from)[0];
  if (!first) return undefined;
  const to = Math.min(first.to, last);
  return {
    firstBadSeq: first.from,
    file,
    reason: `records ${first.from}–${to} ${WHY[first.why]}: they cannot be checked for tampering`,
  };
}

/** The end of the chain against the head file. */
function checkEnd(
  last: ChainHead,
  { head, exists: headExists, damaged }: HeadRead,
  keyed: boolean,
  key: string | undefined,
  hashAtHead: string | undefined,
  file: string,
): Failure | undefined {
  if (!head) {
    // Logs from before the head file have none; a keyed log always has one once it has records.
    if (keyed && last.seq > 0) {
      return {
        firstBadSeq: last.seq,
        file,
        reason: headExists
          ? 'the head file is damaged: the end of the log cannot be checked'
          : 'the head file is missing: the end of the log cannot be checked',
      };
    }
    return undefined;
  }
  if (key !== undefined && keyed && head.mac !== headMac(key, head.seq, head.hash)) {
    return {
      firstBadSeq: head.seq,
      file,
      reason: "the head's keyed MAC does not match (head rewritten by someone without the key)",
    };
  }
  if (last.seq < head.seq) {
    return {
      firstBadSeq: last.seq + 1,
      file,
      reason: `records missing at the end (log cut: the last whole record on disk is seq ${last.seq}, the head says ${head.seq})`,
    };
  }
  // A head behind the log is what a crash between the log's write and the head's leaves.
  if (hashAtHead !== head.hash) {
    return {
      firstBadSeq: head.seq,
      file,
      reason: 'the chain does not match the head (records replaced)',
    };
  }
  // The whole slot may be the head from before the last write: whatever came after it could have
  // been cut off unseen. After a crash that is most likely a torn head write, but it is not proof.
  if (damaged) return { firstBadSeq: head.seq + 1, file, reason: damagedSlotReason(head.seq) };
  return undefined;
}

function damagedSlotReason(seq: number, when?: string): string {
  return `one of the head file's two copies was damaged${when ? ` ${when}` : ''} (a head write cut short when the agent stopped, or the file changed by someone): whether records after seq ${seq} were removed cannot be checked`;
}

function checkRecord(
  record: StoredRecord,
  prev: ChainHead,
  key: string | undefined,
  keyed: boolean,
): string | undefined {
  // Hash first: an edited record (seq included) is reported as edited, not as a gap.
  if (recordHash(record) !== record.hash) return 'hash mismatch (record edited)';
  if (record.prevHash !== prev.hash) return 'chain broken (record removed or reordered)';
  if (record.seq !== prev.seq + 1) {
    return `seq out of order (expected ${prev.seq + 1}, found ${record.seq})`;
  }
  if (record.mac === undefined) {
    // Records before the log had a key carry none; once one did, every later one must.
    return keyed ? 'keyed MAC missing (record re-chained by someone without the key)' : undefined;
  }
  if (key !== undefined && record.mac !== recordMac(key, record.hash)) {
    return 'keyed MAC does not match (record re-chained by someone without the key, or written under another key)';
  }
  return undefined;
}
