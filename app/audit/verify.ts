import { join } from 'node:path';
import type { AuditRecord, AuditVerifyResult } from '../contract/audit.js';
import { GENESIS_HASH, recordHash } from './chain.js';
import { classifyLine, listMonthFiles } from './files.js';
import { scanLines } from './lines.js';

export interface ChainHead {
  seq: number;
  hash: string;
}

interface Failure {
  firstBadSeq: number;
  file: string;
  reason: string;
}

/**
 * Re-reads every month file from disk (never the memory cache: the point is to see what someone
 * may have changed there) in month order and checks each record's hash, the prevHash chain and seq
 * continuity across files. Lines that are not whole records are counted, not failed: a crash tears
 * a line, and if a real record was damaged the chain breaks at the next one anyway.
 *
 * `expected` is the newest record a running log wrote: without it, records cut off the end of the
 * last file would be indistinguishable from records never written.
 */
export async function verifyAudit(dir: string, expected?: ChainHead): Promise<AuditVerifyResult> {
  const names = await listMonthFiles(dir);
  let records = 0;
  let tornLines = 0;
  let prev: ChainHead = { seq: 0, hash: GENESIS_HASH };
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
        return;
      }
      records += 1;
      if (failure) return; // keep counting so the result describes the whole log
      const reason = checkRecord(record, prev);
      if (reason) failure = { firstBadSeq: record.seq, file: path, reason };
      else prev = { seq: record.seq, hash: record.hash };
    });
  }

  if (!failure && expected && (prev.seq !== expected.seq || prev.hash !== expected.hash)) {
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

  const files = names.length;
  return failure
    ? { ok: false, records, files, tornLines, ...failure }
    : { ok: true, records, files, tornLines };
}

function checkRecord(record: AuditRecord, prev: ChainHead): string | undefined {
  // Hash first: an edited record (seq included) is reported as edited, not as a gap.
  if (recordHash(record) !== record.hash) return 'hash mismatch (record edited)';
  if (record.prevHash !== prev.hash) return 'chain broken (record removed or reordered)';
  if (record.seq !== prev.seq + 1) {
    return `seq out of order (expected ${prev.seq + 1}, found ${record.seq})`;
  }
  return undefined;
}
