/**
 * Someone edits the log while the agent is not running: the newest record deleted, or replaced by
 * a junk line. `advent-agent audit --verify` (a reader that never saw the log written) catches
 * both; a line torn by a crash mid-write is reported as torn, not as tampering.
 */
import { appendFile, cp, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Agent } from '../../app/agent.js';
import { recordHash } from '../../app/audit/chain.js';
import { formatHeadSlot } from '../../app/audit/head.js';
import type { AuditRecord } from '../../app/contract/audit.js';
import { FileSecretStore } from '../../app/settings/secrets.js';
import { auditCommand } from '../../main/headless/audit.js';
import type { CliIo } from '../../main/headless/io.js';

let dir: string;
let pristine: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'advent-tail-'));
  pristine = path.join(dir, 'pristine');
  const secrets = await FileSecretStore.open(path.join(pristine, 'secrets.json'));
  const agent = await Agent.open({
    dataDir: pristine,
    defaultFilesRoot: path.join(dir, 'files'),
    secrets,
    overrides: { filesRoots: [path.join(dir, 'files')], policies: { create_file: 'allow' } },
  });
  const connection = { id: 'h', name: 'hostile' };
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
  await agent.close();
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A copy of the data folder, its newest month file edited by `edit`. */
async function tampered(name: string, edit: (lines: string[]) => string): Promise<string> {
  const copy = path.join(dir, name);
  await cp(pristine, copy, { recursive: true });
  const audit = path.join(copy, 'audit');
  const month = (await readdir(audit))
    .filter((n) => n.endsWith('.jsonl'))
    .sort()
    .pop() as string;
  const file = path.join(audit, month);
  const lines = (await readFile(file, 'utf8')).split('\n').filter(Boolean);
  await writeFile(file, edit(lines));
  return copy;
}

async function verify(dataDir: string): Promise<{ code: number; out: string }> {
  const stdout = new PassThrough();
  let out = '';
  stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
  const io = {
    stdin: new PassThrough(),
    stdout,
    stderr: new PassThrough(),
    onSignal: () => () => undefined,
    dataDir: () => dataDir,
    filesRoot: () => path.join(dir, 'files'),
    version: 'test',
  } as CliIo;
  const code = await auditCommand({ dataDir, verify: true, json: false } as never, io);
  return { code, out };
}

describe('audit --verify on a log edited while the agent was away', () => {
  it('reports the untouched log intact, keyed check done, six calls', async () => {
    const { code, out } = await verify(pristine);
    expect(code).toBe(0);
    expect(out).toMatch(/audit log intact: 6 record\(s\).*keyed chain checked/);
  });

  it('catches the newest record deleted', async () => {
    const copy = await tampered('cut', (l) => `${l.slice(0, -1).join('\n')}\n`);
    const { code, out } = await verify(copy);
    expect(code).toBe(1);
    expect(out).toMatch(/damaged at record #9 .*records missing at the end/);
  });

  it('catches the newest records replaced by a junk line', async () => {
    const copy = await tampered('junk', (l) => `${l.slice(0, -2).join('\n')}\n{"seq":8}\n`);
    const { code, out } = await verify(copy);
    expect(code).toBe(1);
    expect(out).toMatch(/records missing at the end/);
    expect(out).not.toMatch(/cut short by a crash/);
  });

  it('catches every MAC stripped and the chain rebuilt, as if the log never had a key', async () => {
    let prev = '0'.repeat(64);
    const copy = await tampered('stripped', (l) => {
      const forged = l.map((line) => {
        const { hash: _h, mac: _m, ...rest } = JSON.parse(line) as AuditRecord & { mac?: string };
        // The forger hides one file write behind a harmless call.
        const edited =
          rest.service === 'create_file' && rest.callId === 'w1'
            ? { ...rest, service: 'get_current_time', params: {} }
            : rest;
        const record = { ...edited, prevHash: prev } as AuditRecord;
        prev = recordHash(record);
        return JSON.stringify({ ...record, hash: prev });
      });
      return `${forged.join('\n')}\n`;
    });
    const last = JSON.parse(
      (
        await readFile(
          path.join(
            copy,
            'audit',
            (await readdir(path.join(copy, 'audit')))
              .filter((n) => n.endsWith('.jsonl'))
              .sort()
              .pop() as string,
          ),
          'utf8',
        )
      )
        .trim()
        .split('\n')
        .pop() as string,
    ) as AuditRecord;
    const slot = formatHeadSlot({ seq: last.seq, hash: last.hash });
    await writeFile(path.join(copy, 'audit', 'head'), slot + slot);
    const { code, out } = await verify(copy);
    expect(code).toBe(1);
    expect(out).toMatch(/damaged at record #1 .*keyed MAC missing/);
  });

  it('catches every month file and the head deleted, which alone reads as an empty log', async () => {
    const copy = await tampered('wiped', (l) => `${l.join('\n')}\n`);
    await rm(path.join(copy, 'audit'), { recursive: true });
    const { code, out } = await verify(copy);
    expect(code).toBe(1);
    expect(out).toMatch(/records missing at the end \(the log held seq 9 when the agent last/);
    // The agent starting (and closing) on the wiped folder does not wipe the evidence too.
    const agent = await Agent.open({
      dataDir: copy,
      defaultFilesRoot: path.join(dir, 'files'),
      secrets: await FileSecretStore.open(path.join(copy, 'secrets.json')),
    });
    await agent.close();
    expect((await verify(copy)).code).toBe(1);
  });

  it('reports a line torn by a crash mid-write as torn, not tampering', async () => {
    const copy = await tampered('torn', (l) => `${l.join('\n')}\n`);
    const month = (await readdir(path.join(copy, 'audit'))).filter((n) => n.endsWith('.jsonl'));
    await appendFile(path.join(copy, 'audit', month.sort().pop() as string), '{"seq":10,"ts":"20');
    const { code, out } = await verify(copy);
    expect(code).toBe(0);
    expect(out).toMatch(/intact: 6 record\(s\) in 1 file\(s\), 1 torn line\(s\) skipped/);
    expect(out).toMatch(/newest line was cut short by a crash/);
  });
});
