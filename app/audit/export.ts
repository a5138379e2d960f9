import {
  type AuditExportFormat,
  type AuditQuery,
  type AuditRecord,
  connectionIdOf,
} from '../contract/audit.js';
import type { AuditLog } from './log.js';

export const CSV_COLUMNS = [
  'seq',
  'ts',
  'connection',
  // Two connections may share a name (and an MCP app names itself): the id tells them apart.
  'connectionId',
  'dialect',
  'callId',
  'service',
  'decision',
  'outcome',
  'error',
  'message',
  'durationMs',
  // The user's deciding and the service's own run, inside durationMs (absent when none).
  'waitMs',
  'runMs',
  'params',
  'paramsSha256',
  'hash',
] as const;

export function toJson(records: readonly AuditRecord[]): string {
  return `${JSON.stringify(records, null, 2)}\n`;
}

/** RFC 4180: CRLF line ends, a header row, fields quoted when they hold `"`, `,`, CR or LF. */
export function toCsv(records: readonly AuditRecord[]): string {
  const rows = [CSV_COLUMNS.join(',')];
  for (const r of records)
    rows.push(CSV_COLUMNS.map((column) => csvCell(cellValue(r, column))).join(','));
  return `${rows.join('\r\n')}\r\n`;
}

function cellValue(r: AuditRecord, column: (typeof CSV_COLUMNS)[number]): string | number {
  if (column === 'params') return JSON.stringify(r.params) ?? '';
  if (column === 'connectionId') return connectionIdOf(r) ?? '';
  const value = r[column];
  return typeof value === 'number' ? value : (value ?? '');
}

/**
 * Every text cell is server- or user-controlled (a callId, a file name in params…). A spreadsheet
 * runs a cell starting with = + - @ (or a tab/CR before one) as a formula, so such text gets a
 * leading apostrophe (OWASP's advice). Numbers are ours and stay numbers.
 */
export function csvCell(value: string | number): string {
  let text = typeof value === 'number' ? String(value) : value;
  if (typeof value === 'string' && /^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** All records matching `query` (offset and limit ignored), in its order, as one file's text. */
export async function exportAudit(
  log: Pick<AuditLog, 'flush' | 'selectAsync'>,
  query: AuditQuery,
  format: AuditExportFormat,
): Promise<string> {
  // Include every append requested before the export.
  await log.flush();
  const records = await log.selectAsync(query);
  switch (format) {
    case 'json':
      return toJson(records);
    case 'csv':
      return toCsv(records);
    default:
      throw new Error(
        `audit export: unknown format ${JSON.stringify(format)} (use 'json' or 'csv')`,
      );
  }
}
