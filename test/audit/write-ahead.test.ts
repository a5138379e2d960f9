import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { AuditIo } from '../../app/audit/append.js';
import { exportAudit } from '../../app/audit/export.js';
import type { AuditLog } from '../../app/audit/log.js';
import { systemClock } from '../../app/clock.js';
import { type CallRequest, Dispatcher } from '../../app/dispatch.js';
import { seededIds } from '../../app/ids.js';
import { Broker } from '../../app/permissions/broker.js';
import { PolicyStore } from '../../app/permissions/policy.js';
import { createFilesSandbox } from '../../app/services/files/sandbox.js';
import { Registry } from '../../app/services/registry.js';
import type { Service } from '../../app/services/service.js';
import type { Risk } from '../../app/contract/policy.js';
import { changedIo, logText, manualClock, useLogs, useTempDirs } from './helpers.js';

const tempDir = useTempDirs();
const openLog = useLogs();

/** The lines of the month file, parsed (intent and outcome records alike). */
async function onDisk(dir: string): Promise<Record<string, unknown>[]> {
  const text = await logText(join(dir, '2026-11.jsonl')).catch(() => '');
  return text
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

function gateOver(log: AuditLog, run: Service['run'], risk: Risk = 'write') {
  const registry = new Registry();
  registry.add({
    name: 'touch',
    title: 'Touch',
    description: 'test service',
    parameters: { type: 'object', properties: { name: { type: 'string' } } },
    risk,
    timeoutMs: 1000,
    run,
  });
  const policy = new PolicyStore({
    getPolicies: () => ({ touch: 'allow' }),
    alwaysGrants: () => [],
    persistAlways: async () => undefined,
  });
  const errors: string[] = [];
  const dispatcher = new Dispatcher({
    registry,
    policy: { decide: (q) => policy.decide(q), remember: (k, s) => policy.remember(k, s) },
    broker: new Broker({ clock: systemClock, ids: seededIds(1), timeoutMs: () => 100 }),
    audit: log,
    files: createFilesSandbox({ roots: () => ['/nonexistent'], maxFileBytes: () => 1 }),
    clock: systemClock,
  });
  dispatcher.events.on('auditError', ({ message }) => errors.push(message));
  return { dispatcher, errors };
}

const call = (callId: string, params: unknown = { name: 'a' }): CallRequest => ({
  connection: { id: 'p1', name: 'home' },
  dialect: 'advent',
  callId,
  service: 'touch',
  params,
});

/** An AuditIo whose writes fail with ENOSPC while `full` says so. */
function fillableIo(): { io: AuditIo; fill(on: boolean): void } {
  let full = false;
  const io = changedIo((real) => ({
    write: (...a) =>
      full
        ? Promise.reject(Object.assign(new Error('ENOSPC: simulated'), { code: 'ENOSPC' }))
        : real.write(...a),
  }));
  return { io, fill: (on) => (full = on) };
}

describe('write-ahead at the gate', () => {
  it('makes the intent durable before a write service runs, and the outcome before the reply', async () => {
    const dir = await tempDir();
    const log = await openLog({ dir, clock: manualClock('2026-11-15T10:00:00Z') });
    let seenWhileRunning: Record<string, unknown>[] = [];
    const { dispatcher } = gateOver(log, async () => {
      seenWhileRunning = await onDisk(dir);
      return 'made';
    });
    const result = await dispatcher.dispatch(call('w1'));
    expect(result).toMatchObject({ ok: true, data: 'made' });
    // While the service ran, its intent (call, params, decision) was already in the file.
    expect(seenWhileRunning).toEqual([
      expect.objectContaining({
        seq: 1,
        phase: 'intent',
        callId: 'w1',
        service: 'touch',
        decision: 'auto',
        params: { name: 'a' },
      }),
    ]);
    expect(seenWhileRunning[0]).not.toHaveProperty('outcome');
    // Before the reply came back, the outcome followed, pointing at its intent.
    const lines = await onDisk(dir);
    expect(lines).toHaveLength(2);
    expect(lines[1]).toMatchObject({ seq: 2, intentSeq: 1, callId: 'w1', outcome: 'ok' });
    expect(result.auditSeq).toBe(2);
  });

  it('never runs the service when its intent cannot be written, and says so', async () => {
    const dir = await tempDir();
    const { io, fill } = fillableIo();
    const log = await openLog({ dir, clock: manualClock('2026-11-15T10:00:00Z'), io });
    let runs = 0;
    const { dispatcher, errors } = gateOver(log, async () => ++runs);
    fill(true);
    const refused = await dispatcher.dispatch(call('full'));
    expect(refused).toMatchObject({ ok: false, code: 'audit_unavailable' });
    expect(!refused.ok && refused.message).toMatch(/could not record.*not run/);
    expect(runs).toBe(0);
    expect(errors.join('\n')).toMatch(/no space left on device/);
    // Once the disk has room again, calls run (and are recorded) again.
    fill(false);
    expect(await dispatcher.dispatch(call('after'))).toMatchObject({ ok: true, data: 1 });
    expect((await log.query({})).records.map((r) => r.callId)).toEqual(['after']);
  });

  it('records a read service once, before its result leaves, with no intent', async () => {
    const dir = await tempDir();
    const log = await openLog({ dir, clock: manualClock('2026-11-15T10:00:00Z') });
    const { dispatcher } = gateOver(log, async () => 'now', 'read');
    expect(await dispatcher.dispatch(call('r1'))).toMatchObject({ ok: true, auditSeq: 1 });
    const lines = await onDisk(dir);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ callId: 'r1', outcome: 'ok' });
    expect(lines[0]).not.toHaveProperty('phase');
  });

  it('presents one row per call to queries, export and verify', async () => {
    const dir = await tempDir();
    const log = await openLog({ dir, clock: manualClock('2026-11-15T10:00:00Z') });
    const { dispatcher } = gateOver(log, async () => 'made');
    for (const id of ['a', 'b', 'c']) await dispatcher.dispatch(call(id));
    expect(await onDisk(dir)).toHaveLength(6);
    const page = await log.query({ order: 'asc' });
    expect(page.total).toBe(3);
    expect(page.records.map((r) => [r.callId, r.outcome, r.decision])).toEqual([
      ['a', 'ok', 'auto'],
      ['b', 'ok', 'auto'],
      ['c', 'ok', 'auto'],
    ]);
    expect(JSON.parse(await exportAudit(log, {}, 'json'))).toHaveLength(3);
    expect(await log.verify()).toMatchObject({ ok: true, records: 3 });
    expect(log.stats().records).toBe(3);
  });
});

describe('interrupted calls', () => {
  it('records an intent left without an outcome as interrupted on the next start', async () => {
    const dir = await tempDir();
    const clock = manualClock('2026-11-15T10:00:00Z');
    const first = await openLog({ dir, clock });
    const intent = await first.intent({
      ts: '2026-11-15T10:00:00.000Z',
      connection: 'home',
      connectionId: 'p1',
      dialect: 'advent',
      callId: 'cut',
      service: 'touch',
      params: { name: 'x' },
      decision: 'allowed-once',
      waitMs: 1200,
    });
    await first.close(); // as if the process died here: no outcome for 'cut'

    const again = await openLog({ dir, clock });
    expect(await again.query({})).toMatchObject({ total: 0 }); // nothing finished yet
    const recovered = await again.recoverInterrupted();
    expect(recovered).toEqual([
      expect.objectContaining({
        callId: 'cut',
        service: 'touch',
        decision: 'allowed-once',
        outcome: 'interrupted',
        intentSeq: intent.seq,
        params: { name: 'x' },
        waitMs: 1200,
      }),
    ]);
    const page = await again.query({});
    expect(page.records.map((r) => [r.callId, r.outcome])).toEqual([['cut', 'interrupted']]);
    // A third start finds nothing left to report.
    await again.close();
    const third = await openLog({ dir, clock });
    expect(await third.recoverInterrupted()).toEqual([]);
    expect(await third.verify()).toMatchObject({ ok: true, records: 1 });
  });

  it('an intent whose outcome follows is not interrupted, across a restart', async () => {
    const dir = await tempDir();
    const clock = manualClock('2026-11-15T10:00:00Z');
    const first = await openLog({ dir, clock });
    const { dispatcher } = gateOver(first, async () => 'made');
    await dispatcher.dispatch(call('done'));
    await first.close();
    const again = await openLog({ dir, clock });
    expect(await again.recoverInterrupted()).toEqual([]);
    await writeFile(join(dir, 'unrelated.txt'), 'x');
    expect((await again.query({})).records.map((r) => r.outcome)).toEqual(['ok']);
  });
});
