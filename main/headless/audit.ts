/** `advent-agent audit`: read the audit log of a data dir. */
import path from 'node:path';
import { AuditLog } from '../../app/audit/log.js';
import { AuditChainSecret } from '../../app/audit/chain-secret.js';
import { FileSecretStore } from '../../app/settings/secrets.js';
import type { AuditVerifyResult } from '../../app/contract/audit.js';
import type { AuditArgs } from './args.js';
import type { CliIo } from './io.js';
import { formatAuditLine } from './printer.js';
import { oneLine, safeJson } from './terminal-text.js';

/**
 * The audit chain's key, when this folder's secrets are the terminal's file. The desktop app keeps
 * its secrets in the OS keychain, out of the terminal's reach: then there is none, and verify says
 * the keyed check was not possible.
 */
async function folderKey(
  dataDir: string,
): Promise<Awaited<ReturnType<typeof AuditChainSecret.peek>>> {
  try {
    return await AuditChainSecret.peek(
      await FileSecretStore.open(path.join(dataDir, 'secrets.json')),
    );
  } catch {
    return {};
  }
}

export function verifyReport(v: AuditVerifyResult): string {
  const lines: string[] = [];
  if (v.ok) {
    lines.push(
      `✓ audit log intact: ${v.records} record(s) in ${v.files} file(s)${v.tornLines ? `, ${v.tornLines} torn line(s) skipped` : ''}${v.keyCheck === 'checked' ? ', keyed chain checked' : ''}`,
    );
  } else {
    lines.push(
      oneLine(`✗ audit log damaged at record #${v.firstBadSeq} in ${v.file}: ${v.reason}`),
    );
  }
  if (v.tornTail) {
    lines.push(
      '  the newest line was cut short by a crash while it was being written (not tampering)',
    );
  }
  if (v.keyCheck === 'no-key') {
    lines.push(
      "! the keyed check was not possible: this folder's audit key is not available here (the desktop app keeps it in the system keychain); everything else was checked",
    );
  }
  return `${lines.join('\n')}\n`;
}

export async function auditCommand(args: AuditArgs, io: CliIo): Promise<number> {
  const dataDir = path.resolve(args.dataDir ?? io.dataDir());
  const dir = path.join(dataDir, 'audit');
  const log = await AuditLog.open({ dir, ...(args.verify ? await folderKey(dataDir) : {}) });
  try {
    if (args.verify) {
      const v = await log.verify();
      io.stdout.write(verifyReport(v));
      return v.ok ? 0 : 1;
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
