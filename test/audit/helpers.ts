import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'vitest';
import { type AppendHandle, type AuditIo, nodeIo } from '../../app/audit/append.js';
import { AuditLog, type AuditLogOptions } from '../../app/audit/log.js';
import type { AuditEntry } from '../../app/contract/audit.js';

/** A fresh temp dir per call, removed after the test. */
export function useTempDirs(): () => Promise<string> {
  const dirs: string[] = [];
  afterEach(async () => {
    await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
  });
  return async () => {
    const dir = await mkdtemp(join(tmpdir(), 'advent-audit-'));
    dirs.push(dir);
    return dir;
  };
}

/**
 * A month file's text as the log holds it: without the room of NULs an open log keeps past its
 * end (append.ts ROOM_BYTES), which closing it cuts.
 */
export async function logText(path: string): Promise<string> {
  return (await readFile(path, 'utf8')).replace(/\0+$/, '');
}

/**
 * Real file access whose month-file handles behave as `change` says: each method it leaves out
 * goes to the real handle. How tests make a disk fill up, fail or be watched.
 */
export function changedIo(change: (real: AppendHandle) => Partial<AppendHandle>): AuditIo {
  return {
    ...nodeIo,
    openAppend: async (path) => {
      const real = await nodeIo.openAppend(path);
      return {
        stat: () => real.stat(),
        read: (...a) => real.read(...a),
        write: (...a) => real.write(...a),
        sync: () => real.sync(),
        truncate: (n) => real.truncate(n),
        close: () => real.close(),
        ...change(real),
      };
    },
  };
}

/** Opens logs that are closed after the test: a log keeps its month file open for appending. */
export function useLogs(): (options: AuditLogOptions) => Promise<AuditLog> {
  const logs: AuditLog[] = [];
  afterEach(async () => {
    await Promise.all(logs.splice(0).map((log) => log.close()));
  });
  return async (options) => {
    const log = await AuditLog.open(options);
    logs.push(log);
    return log;
  };
}

/** A clock the test moves by hand. */
export function manualClock(iso: string): { now(): number; set(iso: string): void } {
  let t = Date.parse(iso);
  return {
    now: () => t,
    set: (next) => {
      t = Date.parse(next);
    },
  };
}

export function entry(overrides: Partial<AuditEntry> = {}): AuditEntry {
  return {
    ts: '2026-11-15T10:00:00.000Z',
    connection: 'home',
    dialect: 'advent',
    callId: 'c1',
    service: 'get_current_time',
    params: {},
    decision: 'auto',
    outcome: 'ok',
    durationMs: 3,
    ...overrides,
  };
}
