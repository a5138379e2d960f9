/** `advent-agent audit`: read the audit log of a data dir. */
import path from 'node:path';
import { AuditLog } from '../../app/audit/log.js';
import type { AuditArgs } from './args.js';
import type { CliIo } from './io.js';
import { formatAuditLine } from './printer.js';
import { oneLine, safeJson } from './terminal-text.js';

export async function auditCommand(args: AuditArgs, io: CliIo): Promise<number> {
  const dir = path.join(path.resolve(args.dataDir ?? io.dataDir()), 'audit');
  const log = await AuditLog.open({ dir });
  try {
    if (args.verify) {
      const v = await log.verify();
      if (v.ok) {
        io.stdout.write(
          `✓ audit log intact: ${v.records} record(s) in ${v.files} file(s)${v.tornLines ? `, ${v.tornLines} torn line(s) skipped` : ''}\n`,
        );
        return 0;
      }
      io.stdout.write(
        `${oneLine(`✗ audit log damaged at record #${v.firstBadSeq} in ${v.file}: ${v.reason}`)}\n`,
      );
      return 1;
    }
    const records = await log.selectAsync({ service: args.service, order: 'asc' });
    for (const r of records)
      io.stdout.write(args.json ? `${safeJson(r)}\n` : `${formatAuditLine(r)}\n`);
    if (!args.json) io.stdout.write(`${records.length} record(s) in ${dir}\n`);
    return 0;
  } finally {
    await log.close();
  }
}
