import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Policy, Risk } from '../../app/contract/policy.js';
import {
  PolicyStore,
  defaultPolicy,
  settingsPolicyPersistence,
  type Decision,
  type PolicyPersistence,
} from '../../app/permissions/policy.js';
import { defaultSettings } from '../../app/settings/schema.js';
import { SettingsStore } from '../../app/settings/store.js';

/** In-memory persistence with the same contract as the settings-backed one. */
function memoryPersistence(
  policies: Record<string, Policy | undefined> = {},
  always: string[] = [],
) {
  const state = { policies, always: [...always], writes: 0 };
  const persistence: PolicyPersistence = {
    getPolicies: () => state.policies,
    alwaysGrants: () => state.always,
    persistAlways: async (keys) => {
      // A real write takes a while: long enough for unserialized callers to race.
      await new Promise((r) => setTimeout(r, 5));
      state.always = [...keys];
      state.writes++;
    },
  };
  return { state, persistence };
}

describe('default policy by risk', () => {
  it.each<[Risk, Policy, Decision]>([
    ['read', 'allow', { kind: 'auto' }],
    ['write', 'ask', { kind: 'ask' }],
    ['system', 'ask', { kind: 'ask' }],
  ])('%s services default to %s', (risk, policy, decision) => {
    const store = new PolicyStore(memoryPersistence().persistence);
    expect(defaultPolicy(risk)).toBe(policy);
    expect(store.effectivePolicy('svc', risk)).toBe(policy);
    expect(store.decide({ service: 'svc', risk })).toEqual(decision);
  });

  it('reads only own policy entries, so a service named "constructor" still gets its default', () => {
    const store = new PolicyStore(memoryPersistence({}).persistence);
    expect(store.effectivePolicy('constructor', 'read')).toBe('allow');
    expect(store.effectivePolicy('toString', 'write')).toBe('ask');
  });

  it('reads an unrecognised stored policy as ask, never as allow', () => {
    const store = new PolicyStore(memoryPersistence({ svc: 'yes' as Policy }).persistence);
    expect(store.effectivePolicy('svc', 'read')).toBe('ask');
  });
});

describe('decide: the policy table', () => {
  type Row = {
    policy: Policy;
    grant: 'none' | 'session' | 'always';
    escalation: boolean;
    expected: Decision;
  };
  const rows: Row[] = [
    { policy: 'deny', grant: 'none', escalation: false, expected: { kind: 'deny' } },
    { policy: 'deny', grant: 'session', escalation: false, expected: { kind: 'deny' } },
    { policy: 'deny', grant: 'always', escalation: false, expected: { kind: 'deny' } },
    { policy: 'deny', grant: 'always', escalation: true, expected: { kind: 'deny' } },
    { policy: 'allow', grant: 'none', escalation: false, expected: { kind: 'auto' } },
    { policy: 'allow', grant: 'none', escalation: true, expected: { kind: 'ask' } },
    {
      policy: 'allow',
      grant: 'session',
      escalation: true,
      expected: { kind: 'granted', scope: 'session' },
    },
    {
      policy: 'allow',
      grant: 'always',
      escalation: true,
      expected: { kind: 'granted', scope: 'always' },
    },
    { policy: 'ask', grant: 'none', escalation: false, expected: { kind: 'ask' } },
    {
      policy: 'ask',
      grant: 'session',
      escalation: false,
      expected: { kind: 'granted', scope: 'session' },
    },
    {
      policy: 'ask',
      grant: 'always',
      escalation: false,
      expected: { kind: 'granted', scope: 'always' },
    },
    { policy: 'ask', grant: 'none', escalation: true, expected: { kind: 'ask' } },
    {
      policy: 'ask',
      grant: 'session',
      escalation: true,
      expected: { kind: 'granted', scope: 'session' },
    },
  ];

  it.each(rows)(
    'policy $policy, $grant grant, escalation $escalation → $expected.kind',
    async ({ policy, grant, escalation, expected }) => {
      const grantKey = escalation ? 'create_file:overwrite' : 'create_file';
      const store = new PolicyStore(memoryPersistence({ create_file: policy }).persistence);
      if (grant !== 'none') await store.remember(grantKey, grant);
      expect(store.decide({ service: 'create_file', risk: 'write', grantKey, escalation })).toEqual(
        expected,
      );
    },
  );

  it('deny beats every remembered grant, and lifting deny brings the grant back', async () => {
    const { state, persistence } = memoryPersistence({ create_file: 'ask' });
    const store = new PolicyStore(persistence);
    await store.remember('create_file', 'always');
    state.policies = { create_file: 'deny' };
    expect(store.decide({ service: 'create_file', risk: 'write' })).toEqual({ kind: 'deny' });
    state.policies = { create_file: 'ask' };
    expect(store.decide({ service: 'create_file', risk: 'write' })).toEqual({
      kind: 'granted',
      scope: 'always',
    });
  });

  it('an escalation is never auto-allowed, even under allow and with a grant for the plain service', async () => {
    const store = new PolicyStore(memoryPersistence({ create_file: 'allow' }).persistence);
    await store.remember('create_file', 'always');
    const overwrite = {
      service: 'create_file',
      risk: 'write' as const,
      grantKey: 'create_file:overwrite',
    };
    expect(store.decide(overwrite)).toEqual({ kind: 'ask' });
    // The name:action form is an escalation even when the caller forgets to say so.
    expect(store.decide({ ...overwrite, escalation: false })).toEqual({ kind: 'ask' });
  });

  it('an explicit escalation on the plain key needs a grant under allow', async () => {
    const store = new PolicyStore(memoryPersistence({ svc: 'allow' }).persistence);
    expect(store.decide({ service: 'svc', risk: 'read', escalation: true })).toEqual({
      kind: 'ask',
    });
  });

  it('refuses a grant key that belongs to another service', () => {
    const store = new PolicyStore(memoryPersistence().persistence);
    expect(() =>
      store.decide({ service: 'read_file', risk: 'read', grantKey: 'create_file:overwrite' }),
    ).toThrow(/does not belong/);
  });
});

describe('remember and revoke', () => {
  it('session grants last for this run only; always grants are persisted and survive a restart', async () => {
    const { state, persistence } = memoryPersistence();
    const run1 = new PolicyStore(persistence);
    await run1.remember('send_mail', 'session');
    await run1.remember('create_file', 'always');
    expect(state.always).toEqual(['create_file']);
    expect(run1.decide({ service: 'send_mail', risk: 'write' })).toEqual({
      kind: 'granted',
      scope: 'session',
    });

    const run2 = new PolicyStore(persistence);
    expect(run2.decide({ service: 'send_mail', risk: 'write' })).toEqual({ kind: 'ask' });
    expect(run2.decide({ service: 'create_file', risk: 'write' })).toEqual({
      kind: 'granted',
      scope: 'always',
    });
  });

  it("'once' and 'deny' answers remember nothing", async () => {
    const { state, persistence } = memoryPersistence();
    const store = new PolicyStore(persistence);
    await store.remember('svc', 'once');
    await store.remember('svc', 'deny');
    expect(store.decide({ service: 'svc', risk: 'write' })).toEqual({ kind: 'ask' });
    expect(state.writes).toBe(0);
  });

  it('remembering an existing always grant writes nothing', async () => {
    const { state, persistence } = memoryPersistence({}, ['svc']);
    await new PolicyStore(persistence).remember('svc', 'always');
    expect(state.writes).toBe(0);
  });

  it('concurrent always grants are both persisted', async () => {
    const { state, persistence } = memoryPersistence();
    const store = new PolicyStore(persistence);
    await Promise.all([
      store.remember('a', 'always'),
      store.remember('b', 'always'),
      store.remember('c:x', 'always'),
    ]);
    expect(state.always).toEqual(['a', 'b', 'c:x']);
  });

  it('revoke removes session and always grants of the service and its escalations, and nothing else', async () => {
    const { state, persistence } = memoryPersistence({}, [
      'create_file',
      'create_file:overwrite',
      'create_file_v2',
      'read_file',
    ]);
    const store = new PolicyStore(persistence);
    await store.remember('create_file:overwrite', 'session');
    await store.remember('create_file_v2:overwrite', 'session');

    await store.revoke('create_file');

    expect(state.always).toEqual(['create_file_v2', 'read_file']);
    expect(store.alwaysGrantsOf('create_file')).toEqual([]);
    expect(store.sessionGrantsOf('create_file')).toEqual([]);
    expect(store.sessionGrantsOf('create_file_v2')).toEqual(['create_file_v2:overwrite']);
    expect(
      store.decide({ service: 'create_file', risk: 'write', grantKey: 'create_file:overwrite' }),
    ).toEqual({ kind: 'ask' });
  });

  it('alwaysGrantsOf lists the service key and its escalations only', () => {
    const store = new PolicyStore(
      memoryPersistence({}, ['create_file', 'create_file:overwrite', 'create_files']).persistence,
    );
    expect(store.alwaysGrantsOf('create_file')).toEqual(['create_file', 'create_file:overwrite']);
  });

  it('an always answer still holds for this session when persisting it fails', async () => {
    const store = new PolicyStore({
      getPolicies: () => ({}),
      alwaysGrants: () => [],
      persistAlways: () => Promise.reject(new Error('disk full')),
    });
    await expect(store.remember('svc', 'always')).rejects.toThrow('disk full');
    expect(store.decide({ service: 'svc', risk: 'write' })).toEqual({
      kind: 'granted',
      scope: 'session',
    });
  });
});

describe('settingsPolicyPersistence', () => {
  let dir: string | undefined;
  afterEach(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('reads policies from settings and saves always grants into settings.json', async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'advent-policy-'));
    const file = path.join(dir, 'settings.json');
    const settings = await SettingsStore.open(file, defaultSettings('/docs'));
    await settings.update((s) => {
      s.services.get_current_time = { policy: 'deny' };
    });
    const store = new PolicyStore(settingsPolicyPersistence(settings));

    expect(store.decide({ service: 'get_current_time', risk: 'read' })).toEqual({ kind: 'deny' });
    await store.remember('create_file', 'always');
    await store.remember('create_file:overwrite', 'always');
    expect(JSON.parse(await readFile(file, 'utf8')).alwaysGrants).toEqual([
      'create_file',
      'create_file:overwrite',
    ]);

    await store.revoke('create_file');
    expect(settings.get().alwaysGrants).toEqual([]);
  });
});

describe('grants tied to who stands behind a service (imported MCP servers)', () => {
  it('stores grants under the identity and honours them only while it is the same', async () => {
    const { state, persistence } = memoryPersistence();
    let identity: string | undefined = 'aaaa';
    const store = new PolicyStore(persistence, {
      identity: (s) => (s === 'files_read' ? identity : undefined),
    });
    await store.remember('files_read', 'always');
    await store.remember('create_file', 'always');
    expect(state.always).toEqual(['files_read@aaaa', 'create_file']);
    expect(store.decide({ service: 'files_read', risk: 'write' })).toEqual({
      kind: 'granted',
      scope: 'always',
    });
    expect(store.alwaysGrantsOf('files_read')).toEqual(['files_read']);

    // The server changed (another command, another address): its old grants do not hold.
    identity = 'bbbb';
    expect(store.decide({ service: 'files_read', risk: 'write' })).toEqual({ kind: 'ask' });
    expect(store.alwaysGrantsOf('files_read')).toEqual([]);
    expect(store.sessionGrantsOf('files_read')).toEqual([]);
    // A built-in is untouched.
    expect(store.decide({ service: 'create_file', risk: 'write' })).toEqual({
      kind: 'granted',
      scope: 'always',
    });
    // Revoking forgets grants of every identity.
    await store.revoke('files_read');
    expect(state.always).toEqual(['create_file']);
  });
});
