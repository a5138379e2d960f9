/**
 * The audit chain's key, where its MACs begin and how long the log was are one secret
 * (chain-secret.ts): whoever can write the data folder cannot remove them one by one, and a log
 * that has records but no key is never taken for a fresh start.
 */
import { readFile, readdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { Agent } from '../../app/agent.js';
import { AUDIT_CHAIN_SECRET } from '../../app/audit/chain-secret.js';
import {
  AUDIT_KEYED_FROM_SECRET,
  AUDIT_KEY_SECRET,
  AUDIT_KNOWN_SEQ_SECRET,
  recordHash,
} from '../../app/audit/chain.js';
import { FileSecretStore } from '../../app/settings/secrets.js';
import { useTempDirs } from './helpers.js';

const tempDir = useTempDirs();

async function start(root: string): Promise<Agent> {
  const dataDir = path.join(root, 'data');
  const files = path.join(root, 'files');
  return Agent.open({
    dataDir,
    defaultFilesRoot: files,
    secrets: await FileSecretStore.open(path.join(dataDir, 'secrets.json')),
    overrides: { filesRoots: [files], policies: { create_file: 'allow' } },
  });
}

/** Three file writes and three reads: seq 1..9 (a write is an intent and an outcome). */
async function sixCalls(agent: Agent): Promise<void> {
  const connection = { id: 'h', name: 'h' };
  for (let k = 0; k < 3; k++) {
    await agent.dispatch({
      connection,
      dialect: 'advent',
      callId: `w${k}`,
      service: 'create_file',
      params: { filename: `f${k}.txt`, content: 'x' },
    });
    await agent.dispatch({
      connection,
      dialect: 'advent',
      callId: `r${k}`,
      service: 'get_current_time',
      params: {},
    });
  }
}

/** What a forger without the key does: erase call w1, drop every MAC, re-chain, drop the head. */
async function forge(root: string, secretsToDrop: readonly string[]): Promise<void> {
  const audit = path.join(root, 'data', 'audit');
  const month = (await readdir(audit)).filter((n) => n.endsWith('.jsonl'))[0] as string;
  const lines = (await readFile(path.join(audit, month), 'utf8')).split('\n').filter(Boolean);
  let prev = '0'.repeat(64);
  let seq = 0;
  const renumbered = new Map<number, number>();
  const out: string[] = [];
  for (const line of lines) {
    const {
      hash: _h,
      mac: _m,
      ...r
    } = JSON.parse(line) as Record<string, unknown> & {
      seq: number;
      intentSeq?: number;
    };
    if (r.callId === 'w1') continue;
    renumbered.set(r.seq, ++seq);
    r.seq = seq;
    if (r.intentSeq !== undefined) r.intentSeq = renumbered.get(r.intentSeq);
    r.prevHash = prev;
    prev = recordHash(r as never);
    out.push(JSON.stringify({ ...r, hash: prev }));
  }
  await writeFile(path.join(audit, month), `${out.join('\n')}\n`);
  await rm(path.join(audit, 'head'));
  const file = path.join(root, 'data', 'secrets.json');
  const secrets = JSON.parse(await readFile(file, 'utf8')) as { secrets: Record<string, string> };
  for (const name of secretsToDrop) delete secrets.secrets[name];
  await writeFile(file, JSON.stringify(secrets));
}

describe('the audit chain secret', () => {
  it('keeps key, keyed-from and known seq in one value, and a fresh log verifies', async () => {
    const root = await tempDir();
    const agent = await start(root);
    expect(await agent.verifyAudit()).toMatchObject({ ok: true, records: 0 });
    await sixCalls(agent);
    expect(await agent.verifyAudit()).toMatchObject({ ok: true, records: 6, keyCheck: 'checked' });
    await agent.close();
    const store = await FileSecretStore.open(path.join(root, 'data', 'secrets.json'));
    const one = JSON.parse((await store.get(AUDIT_CHAIN_SECRET)) as string) as Record<
      string,
      unknown
    >;
    expect(one).toMatchObject({ v: 1, keyedFrom: 1, knownSeq: 9 });
    expect(one.key).toMatch(/^[0-9a-f]{64}$/);
  });

  it('catches a log re-chained without the key once the separate entries are removed', async () => {
    const root = await tempDir();
    let agent = await start(root);
    await sixCalls(agent);
    await agent.close();
    await forge(root, [AUDIT_KEYED_FROM_SECRET, AUDIT_KNOWN_SEQ_SECRET, AUDIT_KEY_SECRET]);

    agent = await start(root);
    const result = await agent.verifyAudit();
    expect(result).toMatchObject({ ok: false, firstBadSeq: 1, records: 5 });
    // Records the agent had written with its key (up to the known seq): stripped, said plainly.
    expect(!result.ok && result.reason).toMatch(/keyed MAC missing/);
    // Not one MAC was checked: the result does not say the keyed chain was.
    expect(result.keyCheck).not.toBe('checked');
    await agent.close();
    expect(await (await start(root)).verifyAudit()).toMatchObject({ ok: false, firstBadSeq: 1 });
  });

  it('never takes records without a key for a fresh start: says they cannot be checked', async () => {
    const root = await tempDir();
    let agent = await start(root);
    await sixCalls(agent);
    await agent.close();
    await forge(root, [
      AUDIT_CHAIN_SECRET,
      AUDIT_KEYED_FROM_SECRET,
      AUDIT_KNOWN_SEQ_SECRET,
      AUDIT_KEY_SECRET,
    ]);

    agent = await start(root);
    expect(agent.startupNotices.map((n) => n.message).join('\n')).toMatch(
      /key was missing although the log holds records: records 1–7 were written without it/,
    );
    await sixCalls(agent); // calls under the new key do not vouch for what came before it
    const result = await agent.verifyAudit();
    expect(result).toMatchObject({ ok: false, firstBadSeq: 1, keyCheck: 'checked' });
    expect(!result.ok && result.reason).toMatch(
      /^records 1–7 were written before the log had its key .*cannot be checked/,
    );
    await agent.close();
  });

  it('takes over the separate entries an older version kept, and the log still verifies', async () => {
    const root = await tempDir();
    let agent = await start(root);
    await sixCalls(agent);
    await agent.close();
    const file = path.join(root, 'data', 'secrets.json');
    const secrets = JSON.parse(await readFile(file, 'utf8')) as { secrets: Record<string, string> };
    delete secrets.secrets[AUDIT_CHAIN_SECRET]; // as an older version left it
    await writeFile(file, JSON.stringify(secrets));

    agent = await start(root);
    expect(agent.startupNotices).toEqual([]);
    expect(await agent.verifyAudit()).toMatchObject({ ok: true, records: 6, keyCheck: 'checked' });
    await agent.close();
    const store = await FileSecretStore.open(file);
    expect(JSON.parse((await store.get(AUDIT_CHAIN_SECRET)) as string)).toMatchObject({
      keyedFrom: 1,
      knownSeq: 9,
    });
  });
});
