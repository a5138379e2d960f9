import { LOCAL_CONNECTION } from '../app/contract/connection.js';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AuditLog } from '../app/audit/log.js';
import { systemClock } from '../app/clock.js';
import type { AuditEntry, AuditRecord } from '../app/contract/audit.js';
import type { Policy } from '../app/contract/policy.js';
import { type CallRequest, Dispatcher, type GateAudit } from '../app/dispatch.js';
import { seededIds } from '../app/ids.js';
import { Broker } from '../app/permissions/broker.js';
import { PolicyStore } from '../app/permissions/policy.js';
import { builtinServices } from '../app/services/builtin/index.js';
import { createFilesSandbox } from '../app/services/files/sandbox.js';
import { Registry } from '../app/services/registry.js';
import { type Service, ServiceFailure } from '../app/services/service.js';

let dir: string;
let audit: AuditLog;

beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'advent-gate-'));
  audit = await AuditLog.open({ dir: path.join(dir, 'audit') });
});
afterEach(async () => {
  await audit.close();
  await rm(dir, { recursive: true, force: true });
});

const service = (over: Partial<Service> & Pick<Service, 'name' | 'run'>): Service => ({
  title: over.name,
  description: `test service ${over.name}`,
  parameters: { type: 'object', properties: {} },
  risk: 'read',
  timeoutMs: 1000,
  ...over,
});

function gate(
  opts: {
    services?: Service[];
    policies?: Record<string, Policy>;
    always?: string[];
    auditLog?: GateAudit;
    offered?: (connectionId: string, service: string) => boolean;
  } = {},
) {
  const registry = new Registry();
  for (const s of [...builtinServices(), ...(opts.services ?? [])]) registry.add(s);
  let always = [...(opts.always ?? [])];
  const policy = new PolicyStore({
    getPolicies: () => opts.policies ?? {},
    alwaysGrants: () => always,
    persistAlways: async (keys) => {
      always = keys;
    },
  });
  const broker = new Broker({ clock: systemClock, ids: seededIds(7), timeoutMs: () => 200 });
  const dispatcher = new Dispatcher({
    registry,
    offered: opts.offered,
    policy: { decide: (q) => policy.decide(q), remember: (k, s) => policy.remember(k, s) },
    broker,
    audit: opts.auditLog ?? audit,
    files: createFilesSandbox({ roots: () => [path.join(dir, 'files')], maxFileBytes: () => 1024 }),
    clock: systemClock,
  });
  return { registry, policy, broker, dispatcher };
}

const call = (
  serviceName: string,
  params: unknown = {},
  over: Partial<CallRequest> = {},
): CallRequest => ({
  connection: { id: 'p-srv', name: 'srv' },
  dialect: 'advent',
  callId: `c-${Math.random().toString(16).slice(2, 8)}`,
  service: serviceName,
  params,
  ...over,
});

describe('the gate', () => {
  it('records a repeat a dialect recognised as duplicate and never runs it', async () => {
    let runs = 0;
    const { dispatcher } = gate({
      services: [service({ name: 'count', run: async () => ++runs })],
    });
    expect(await dispatcher.dispatch(call('count', {}, { callId: 'x1' }))).toMatchObject({
      ok: true,
    });
    const repeat = await dispatcher.dispatch(
      call('count', {}, { callId: 'x2', duplicateOf: 'x1' }),
    );
    expect(repeat).toMatchObject({ ok: false, code: 'duplicate' });
    expect(!repeat.ok && repeat.message).toMatch(/repeats call 'x1'.*not run twice/);
    expect(runs).toBe(1);
    expect(audit.select({ order: 'asc' }).map((r) => [r.callId, r.decision, r.outcome])).toEqual([
      ['x1', 'auto', 'ok'],
      ['x2', 'duplicate', 'refused'],
    ]);
  });

  it('lets a server that lists user tools call one, still through the permission step', async () => {
    const { dispatcher, broker } = gate({
      services: [service({ name: 'mine', userOnly: true, risk: 'write', run: async () => 'done' })],
    });
    // Hidden from ordinary server calls: it does not exist for them.
    expect(await dispatcher.dispatch(call('mine'))).toMatchObject({
      ok: false,
      code: 'unknown_service',
    });
    // Visible to a server that asked for user tools, but a write still needs a yes.
    const detach = broker.attach({ name: 'test' });
    const asked = new Promise<string>((resolve) => broker.on('prompt', (p) => resolve(p.id)));
    const running = dispatcher.dispatch(call('mine', {}, { userTools: true }));
    broker.answer(await asked, 'deny');
    expect(await running).toMatchObject({ ok: false, code: 'denied' });
    detach();
  });

  it('refuses a call to a service not offered to that connection as unknown: nothing run, nobody asked, audited, its name not told', async () => {
    let runs = 0;
    const { dispatcher, broker } = gate({
      services: [
        service({ name: 'secret_tool', risk: 'write', run: async () => ++runs }),
        service({ name: 'given_tool', run: async () => 'fine' }),
      ],
      // The XiaoZhi connection was given only given_tool; others everything.
      offered: (connection, name) => connection !== 'p-xz' || name === 'given_tool',
    });
    broker.attach({ name: 'test' });
    let asked = 0;
    broker.on('prompt', () => (asked += 1));
    const xz = { connection: { id: 'p-xz', name: 'XiaoZhi' }, callId: 'c-x' };
    const refused = await dispatcher.dispatch(call('secret_tool', {}, xz));
    expect(refused).toMatchObject({ ok: false, code: 'unknown_service' });
    const message = refused.ok ? '' : refused.message;
    expect(message).toBe("there is no service named 'secret_tool'; available services: given_tool");
    expect(await dispatcher.dispatch(call('given_tool', {}, xz))).toMatchObject({ ok: true });
    // The same service for a connection it is offered to, and for the user's own run.
    broker.on('prompt', (p) => broker.answer(p.id, 'once'));
    expect(await dispatcher.dispatch(call('secret_tool', {}, { callId: 'c-o' }))).toMatchObject({
      ok: true,
    });
    expect(
      await dispatcher.dispatch(
        call('secret_tool', {}, { connection: LOCAL_CONNECTION, userRun: true, callId: 'c-u' }),
      ),
    ).toMatchObject({ ok: true });
    expect(runs).toBe(2);
    expect(asked).toBe(1);
    expect(
      audit.select({ order: 'asc' }).map((r) => [r.connectionId, r.service, r.decision, r.error]),
    ).toEqual([
      ['p-xz', 'secret_tool', 'invalid', 'unknown_service'],
      ['p-xz', 'given_tool', 'auto', undefined],
      ['p-srv', 'secret_tool', 'allowed-once', undefined],
      ['local', 'secret_tool', 'user-run', undefined],
    ]);
  });

  it('turns an exception inside a service into service_error with its message, outcome error', async () => {
    const { dispatcher } = gate({
      services: [
        service({ name: 'boom', run: async () => Promise.reject(new Error('disk on fire')) }),
      ],
    });
    const result = await dispatcher.dispatch(call('boom'));
    expect(result).toMatchObject({
      ok: false,
      code: 'service_error',
      message: "'boom' failed: disk on fire",
    });
    expect(audit.select({})[0]).toMatchObject({
      decision: 'auto',
      outcome: 'error',
      error: 'service_error',
    });
  });

  it('keeps the code of a deliberate ServiceFailure', async () => {
    const { dispatcher } = gate({
      services: [
        service({
          name: 'picky',
          run: async () => Promise.reject(new ServiceFailure('invalid_params', 'no Mondays')),
        }),
      ],
    });
    expect(await dispatcher.dispatch(call('picky'))).toMatchObject({
      ok: false,
      code: 'invalid_params',
      message: 'no Mondays',
    });
  });

  it('stops a service that runs past its time, aborting its signal', async () => {
    let aborted = false;
    const { dispatcher } = gate({
      services: [
        service({
          name: 'slow',
          timeoutMs: 50,
          run: (_p, ctx) =>
            new Promise((resolve) => {
              ctx.signal.addEventListener('abort', () => {
                aborted = true;
                resolve('too late');
              });
            }),
        }),
      ],
    });
    const result = await dispatcher.dispatch(call('slow'));
    expect(result).toMatchObject({ ok: false, code: 'service_timeout' });
    expect(!result.ok && result.message).toMatch(
      /did not finish within 0\.1 s|did not finish within 0\.05 s/,
    );
    // The record does not claim the work was undone: a server may finish it anyway.
    expect(!result.ok && result.message).toMatch(/asked to stop, but .* may still complete/);
    expect(aborted).toBe(true);
    expect(audit.select({})[0]).toMatchObject({ outcome: 'error', error: 'service_timeout' });
  });

  it('never runs a read unrecorded: after the audit log fails, reads are refused until it works again', async () => {
    let failing = true;
    let runs = 0;
    const flaky: GateAudit = {
      append: (entry: AuditEntry): Promise<AuditRecord> =>
        failing ? Promise.reject(new Error('no space left on device')) : audit.append(entry),
      intent: (entry) => audit.intent(entry),
    };
    const { dispatcher } = gate({
      services: [service({ name: 'count', run: async () => ++runs })],
      auditLog: flaky,
    });
    const errors: string[] = [];
    dispatcher.events.on('auditError', (e) => errors.push(e.message));
    // The read ran, but its record failed: its result does not leave unrecorded.
    const unrecorded = await dispatcher.dispatch(call('count'));
    expect(unrecorded).toMatchObject({ ok: false, code: 'audit_unavailable' });
    expect(!unrecorded.ok && unrecorded.message).toMatch(
      /could not record this call \(no space left on device\), so its result of 'count' is withheld/,
    );
    expect(errors).toEqual(['no space left on device']);
    const refused = await dispatcher.dispatch(call('count'));
    expect(refused).toMatchObject({ ok: false, code: 'audit_unavailable' });
    expect(!refused.ok && refused.message).toMatch(
      /cannot record calls right now \(no space left on device\)/,
    );
    expect(runs).toBe(1);
    failing = false;
    // The first call after recovery is still refused, but its refusal is recorded: that proves
    // the log works again, so the next call runs.
    expect(await dispatcher.dispatch(call('count'))).toMatchObject({
      ok: false,
      code: 'audit_unavailable',
    });
    expect(await dispatcher.dispatch(call('count'))).toMatchObject({ ok: true });
    expect(runs).toBe(2);
    expect(audit.select({ order: 'asc' }).map((r) => r.outcome)).toEqual(['refused', 'ok']);
  });

  it('a user-run needs no prompt, works on a switched-off service and is audited as user-run', async () => {
    const { dispatcher, registry } = gate({
      services: [service({ name: 'note', risk: 'write', run: async () => 'done' })],
    });
    registry.setEnabled('note', false);
    expect(await dispatcher.dispatch(call('note'))).toMatchObject({ ok: false, code: 'disabled' });
    expect(
      await dispatcher.dispatch(
        call('note', {}, { userRun: true, connection: LOCAL_CONNECTION, dialect: 'local' }),
      ),
    ).toMatchObject({
      ok: true,
      data: 'done',
    });
    expect(audit.select({ order: 'asc' }).map((r) => r.decision)).toEqual(['disabled', 'user-run']);
  });

  it('hides user-only services from servers but lets the user run them', async () => {
    const { dispatcher } = gate({
      services: [service({ name: 'secret_tool', userOnly: true, run: async () => 42 })],
    });
    const fromServer = await dispatcher.dispatch(call('secret_tool'));
    expect(fromServer).toMatchObject({ ok: false, code: 'unknown_service' });
    expect(!fromServer.ok && fromServer.message).not.toContain('secret_tool;');
    expect(await dispatcher.dispatch(call('secret_tool', {}, { userRun: true }))).toMatchObject({
      ok: true,
      data: 42,
    });
  });

  it('a deny policy wins over a remembered "always" grant', async () => {
    const { dispatcher } = gate({ policies: { create_file: 'deny' }, always: ['create_file'] });
    const result = await dispatcher.dispatch(
      call('create_file', { filename: 'a.txt', content: 'x' }),
    );
    expect(result).toMatchObject({ ok: false, code: 'denied' });
    expect(!result.ok && result.message).toMatch(/blocked the service 'create_file'/);
  });

  it('asks before telling why a write failed once its preview looked at the files', async () => {
    // The failure would tell the server what is on the disk (here: nothing, the path is outside;
    // elsewhere: that a file exists), so it is told only after the user's yes.
    const { dispatcher, broker } = gate();
    broker.attach({ name: 'ui' });
    const prompts: string[] = [];
    broker.on('prompt', (p) => {
      prompts.push(p.summary);
      broker.answer(p.id, 'once');
    });
    const result = await dispatcher.dispatch(
      call('create_file', { filename: '/etc/passwd', content: 'x' }),
    );
    expect(result).toMatchObject({ ok: false, code: 'path_outside_roots' });
    expect(prompts).toHaveLength(1);
    expect(audit.select({})[0]).toMatchObject({ decision: 'allowed-once', outcome: 'refused' });
  });

  it('records every call exactly once, whatever happened, with the seq returned to the caller', async () => {
    const { dispatcher } = gate();
    const results = await Promise.all([
      dispatcher.dispatch(call('get_current_time')),
      dispatcher.dispatch(call('nope')),
      dispatcher.dispatch(call('get_current_time', { format: 'bogus' })),
      dispatcher.dispatch(call('create_file', { filename: 'x', content: 'y' })),
    ]);
    const seqs = results.map((r) => r.auditSeq);
    expect(new Set(seqs).size).toBe(4);
    expect(
      audit
        .select({})
        .map((r) => r.seq)
        .sort(),
    ).toEqual([...seqs].sort());
  });

  it('records the connection by id and name, and prompts carry both (names need not be unique)', async () => {
    const { dispatcher, broker } = gate();
    broker.attach();
    const asked: unknown[] = [];
    broker.on('prompt', (p) => {
      asked.push(p.connection);
      broker.answer(p.id, 'deny');
    });
    const twin = { id: 'p-2', name: 'srv' };
    await dispatcher.dispatch(
      call('create_file', { filename: 'a', content: 'b' }, { connection: twin }),
    );
    await dispatcher.dispatch(call('get_current_time'));
    expect(asked).toEqual([twin]);
    expect(audit.select({ order: 'asc' }).map((r) => [r.connectionId, r.connection])).toEqual([
      ['p-2', 'srv'],
      ['p-srv', 'srv'],
    ]);
  });

  it('drain() waits until calls in progress have finished and been recorded', async () => {
    let release!: () => void;
    const { dispatcher } = gate({
      services: [
        service({ name: 'slow', run: () => new Promise((r) => (release = () => r('done'))) }),
      ],
    });
    const pending = dispatcher.dispatch(call('slow'));
    let drained = false;
    const draining = dispatcher.drain().then(() => (drained = true));
    await new Promise((r) => setTimeout(r, 20));
    expect(drained).toBe(false);
    release();
    await draining;
    expect(await pending).toMatchObject({ ok: true });
    expect(audit.select({}).map((r) => r.service)).toEqual(['slow']);
  });

  it('emits callStarted and callFinished for the timeline, with the prompt summary', async () => {
    const { dispatcher, broker } = gate();
    broker.attach({ name: 'ui' });
    broker.on('prompt', (p) => broker.answer(p.id, 'once'));
    const started: string[] = [];
    dispatcher.events.on('callStarted', (e) => started.push(e.service));
    const finished = new Promise((resolve) => dispatcher.events.on('callFinished', resolve));
    await dispatcher.dispatch(call('create_file', { filename: 'hello.txt', content: 'hi' }));
    expect(started).toEqual(['create_file']);
    expect(await finished).toMatchObject({
      decision: 'allowed-once',
      outcome: 'ok',
      summary: expect.stringMatching(/^Create file hello\.txt \(2 B\)/),
    });
  });

  it.each([5_000, 100_000])(
    'refuses params nested %i levels deep as invalid, records it, and keeps working',
    async (depth) => {
      let runs = 0;
      const { dispatcher } = gate({
        services: [
          service({
            name: 'deep',
            parameters: { type: 'object', properties: { a: { $ref: '#' } } },
            run: async () => ++runs,
          }),
        ],
      });
      let deep: unknown = {};
      for (let i = 0; i < depth; i++) deep = { a: deep };
      const refused = await dispatcher.dispatch(call('deep', deep));
      expect(refused).toMatchObject({ ok: false, code: 'invalid_params' });
      expect(!refused.ok && refused.message).toMatch(/nested more than 64 levels deep/);
      expect(refused.auditSeq).toBe(1);
      expect(await dispatcher.dispatch(call('deep', { a: { a: {} } }))).toMatchObject({ ok: true });
      expect(runs).toBe(1);
      expect(audit.select({ order: 'asc' }).map((r) => [r.decision, r.outcome])).toEqual([
        ['invalid', 'refused'],
        ['auto', 'ok'],
      ]);
    },
  );

  it('cuts a 3 MB service name in the record and in the sentence to the server', async () => {
    const { dispatcher } = gate();
    const name = 'x'.repeat(3 << 20);
    const refused = await dispatcher.dispatch(call(name));
    expect(refused).toMatchObject({ ok: false, code: 'unknown_service' });
    expect(!refused.ok && refused.message.length).toBeLessThan(500);
    const [record] = audit.select({});
    expect(JSON.stringify(record).length).toBeLessThan(2000);
  });

  it('records the time waiting for the user apart from the time the service ran', async () => {
    const { dispatcher, broker } = gate({
      services: [
        service({
          name: 'slowwrite',
          risk: 'write',
          run: () => new Promise((resolve) => setTimeout(() => resolve('ok'), 60)),
        }),
      ],
    });
    const detach = broker.attach({ name: 'test' });
    const asked = new Promise<string>((resolve) => broker.on('prompt', (p) => resolve(p.id)));
    const finished: { waitMs?: number; runMs?: number; durationMs: number }[] = [];
    dispatcher.events.on('callFinished', (e) => finished.push(e));
    const running = dispatcher.dispatch(call('slowwrite'));
    const id = await asked;
    await new Promise((resolve) => setTimeout(resolve, 120));
    broker.answer(id, 'once');
    expect(await running).toMatchObject({ ok: true });
    detach();
    const [record] = audit.select({});
    expect(record?.waitMs).toBeGreaterThanOrEqual(100);
    expect(record?.runMs).toBeGreaterThanOrEqual(50);
    expect(record?.runMs).toBeLessThan(record?.waitMs as number);
    expect(record?.durationMs).toBeGreaterThanOrEqual(
      (record?.waitMs as number) + (record?.runMs as number),
    );
    expect(finished[0]).toMatchObject({ waitMs: record?.waitMs, runMs: record?.runMs });
    // A call nobody was asked about waited for no one.
    await dispatcher.dispatch(call('get_current_time'));
    expect(audit.select({})[0]).not.toHaveProperty('waitMs');
  });
});

describe('a call the server stops waiting for (CallRequest.signal)', () => {
  it('withdraws its prompt: a later allow does nothing, it never runs, recorded as withdrawn/cancelled', async () => {
    let runs = 0;
    const { dispatcher, broker } = gate({
      services: [service({ name: 'write_it', risk: 'write', run: async () => ++runs })],
    });
    const detach = broker.attach({ name: 'test' });
    const asked = new Promise<string>((resolve) => broker.on('prompt', (p) => resolve(p.id)));
    const resolutions: string[] = [];
    broker.on('promptResolved', (r) => resolutions.push(r.resolution));
    const server = new AbortController();
    const running = dispatcher.dispatch(call('write_it', {}, { signal: server.signal }));
    const id = await asked;
    server.abort(new Error('the server cancelled it'));
    const result = await running;
    expect(result).toMatchObject({ ok: false, code: 'cancelled' });
    expect(!result.ok && result.message).toMatch(/stopped waiting.*the server cancelled it/);
    expect(resolutions).toEqual(['withdrawn']);
    expect(broker.pending()).toEqual([]);
    expect(broker.answer(id, 'once')).toBe(false);
    expect(runs).toBe(0);
    expect(audit.select({}).map((r) => [r.decision, r.outcome, r.error])).toEqual([
      ['withdrawn', 'cancelled', 'cancelled'],
    ]);
    detach();
  });

  it('asks nothing when the server stopped waiting before the prompt', async () => {
    const { dispatcher, broker } = gate({
      services: [service({ name: 'write_it', risk: 'write', run: async () => 'ran' })],
    });
    const detach = broker.attach({ name: 'test' });
    let prompts = 0;
    broker.on('prompt', () => prompts++);
    const result = await dispatcher.dispatch(
      call('write_it', {}, { signal: AbortSignal.abort('the connection it came on ended') }),
    );
    expect(result).toMatchObject({ ok: false, code: 'cancelled' });
    expect(prompts).toBe(0);
    expect(audit.select({})[0]).toMatchObject({ decision: 'withdrawn', outcome: 'cancelled' });
    detach();
  });

  it('asks a running service to stop; stopped, it is recorded as cancelled under the decision made', async () => {
    const server = new AbortController();
    let sawAbort = false;
    const { dispatcher } = gate({
      services: [
        service({
          name: 'slow',
          run: (_p, ctx) =>
            new Promise((_resolve, reject) => {
              ctx.signal.addEventListener('abort', () => {
                sawAbort = true;
                reject(new ServiceFailure('cancelled', 'stopped before it finished'));
              });
              // Started: the server gives up now.
              server.abort(new Error('the server cancelled it'));
            }),
        }),
      ],
    });
    const result = await dispatcher.dispatch(call('slow', {}, { signal: server.signal }));
    expect(sawAbort).toBe(true);
    expect(result).toMatchObject({ ok: false, code: 'cancelled' });
    expect(audit.select({})[0]).toMatchObject({ decision: 'auto', outcome: 'cancelled' });
  });
});
