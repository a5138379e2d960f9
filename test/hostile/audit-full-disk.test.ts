/**
 * A full disk at the transition: the audit's writes start failing (ENOSPC, injected through
 * AuditIo) at every possible point of a sequence of file-creating calls. Whichever write is the
 * first to fail, no file exists without its intent on disk, a call whose intent was refused never
 * ran, and the user is told through the gate's auditError.
 */
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { AuditIo } from '../../app/audit/append.js';
import { changedIo } from '../audit/helpers.js';
import { AuditLog } from '../../app/audit/log.js';
import { systemClock } from '../../app/clock.js';
import { type DispatchResult, Dispatcher } from '../../app/dispatch.js';
import { seededIds } from '../../app/ids.js';
import { Broker } from '../../app/permissions/broker.js';
import { PolicyStore } from '../../app/permissions/policy.js';
import { builtinServices } from '../../app/services/builtin/index.js';
import { createFilesSandbox } from '../../app/services/files/sandbox.js';
import { Registry } from '../../app/services/registry.js';

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

/** Month-file writes succeed until the `failFrom`-th (1-based); from then on the disk is full. */
function fillingIo(failFrom: number): AuditIo {
  let writes = 0;
  return changedIo((real) => ({
    write: async (buffer, offset, length, position) => {
      writes += 1;
      if (writes < failFrom) return real.write(buffer, offset, length, position);
      // Half the bytes land, then the disk is full: the worst case for the log.
      await real.write(buffer, offset, Math.floor(length / 2), position);
      throw Object.assign(new Error('ENOSPC: no space left on device, write'), {
        code: 'ENOSPC',
      });
    },
  }));
}

async function run(failFrom: number) {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'advent-full-'));
  dirs.push(dir);
  const root = path.join(dir, 'files');
  const log = await AuditLog.open({ dir: path.join(dir, 'audit'), io: fillingIo(failFrom) });
  const registry = new Registry();
  for (const s of builtinServices()) registry.add(s);
  const policy = new PolicyStore({
    getPolicies: () => ({ create_file: 'allow' }),
    alwaysGrants: () => [],
    persistAlways: async () => undefined,
  });
  const gate = new Dispatcher({
    registry,
    policy: { decide: (q) => policy.decide(q), remember: (k, s) => policy.remember(k, s) },
    broker: new Broker({ clock: systemClock, ids: seededIds(3), timeoutMs: () => 100 }),
    audit: log,
    files: createFilesSandbox({ roots: () => [root], maxFileBytes: () => 1 << 20 }),
    clock: systemClock,
  });
  const told: string[] = [];
  gate.events.on('auditError', ({ message }) => told.push(message));
  const results: DispatchResult[] = [];
  for (let k = 0; k < 4; k++) {
    results.push(
      await gate.dispatch({
        connection: { id: 'h', name: 'hostile' },
        dialect: 'advent',
        callId: `c${k}`,
        service: 'create_file',
        params: { filename: `f${k}.txt`, content: 'data' },
      }),
    );
  }
  await log.close();
  let text = '';
  for (const name of (await readdir(path.join(dir, 'audit'))).filter((n) => n.endsWith('.jsonl')))
    text += await readFile(path.join(dir, 'audit', name), 'utf8');
  const intents = new Set<string>();
  for (const line of text.split('\n')) {
    try {
      const r = JSON.parse(line) as { phase?: string; params?: { filename?: string } };
      if (r.phase === 'intent' && r.params?.filename) intents.add(r.params.filename);
    } catch {
      // the half record the full disk cut short (rolled back, or isolated on its own line)
    }
  }
  const files = await readdir(root).catch(() => [] as string[]);
  return { results, told, intents, files };
}

describe('the disk fills at the transition between recording and running', () => {
  it.each([1, 2, 3, 4, 5, 6, 7, 8])(
    'first failing audit write #%i: no file without its intent, refused intents never ran',
    async (failFrom) => {
      const { results, told, intents, files } = await run(failFrom);
      for (const file of files) expect(intents).toContain(file);
      results.forEach((result, k) => {
        const file = `f${k}.txt`;
        if (!result.ok && result.code === 'audit_unavailable') {
          expect(files).not.toContain(file);
          expect(result.message).toMatch(/was not run/);
        }
        if (result.ok) expect(intents).toContain(file);
      });
      // Each call is two writes (intent, outcome): the first failure refuses a call or loses an
      // outcome, and from then on nothing runs.
      const ran = results.filter((r) => r.ok).length;
      expect(ran).toBe(Math.floor((failFrom - 1) / 2) + ((failFrom - 1) % 2));
      expect(told.join('\n')).toMatch(/no space left on device/);
    },
  );
});
