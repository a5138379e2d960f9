import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PROFILE_KIND_SPECS } from '../../../app/contract/profiles/index.js';
import { DialectSet } from '../../../app/wire/dialect.js';
import { DIALECTS } from '../../../app/wire/dialects.js';
import { parseCliArgs, usage } from '../../../main/headless/args.js';
import { flagConnections } from '../../../main/headless/flag-profiles.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'advent-flags-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

function servers(...argv: string[]) {
  const parsed = parseCliArgs(['run', ...argv]);
  if (!parsed.ok || parsed.args.command !== 'run')
    throw new Error(parsed.ok ? 'not run' : parsed.message);
  return parsed.args.servers;
}

const dialects = new DialectSet(DIALECTS);

describe('servers given by flags', () => {
  it('the same device on every run: generated identities are kept per kind in identity.json', async () => {
    const argv = ['--xiaozhi', 'ws://h:8000/xiaozhi/v1/', '--robot', 'ws://h:8888/ws'];
    const first = await flagConnections(servers(...argv), dialects, dir);
    const second = await flagConnections(servers(...argv), dialects, dir);
    expect(second.map((c) => c.profile)).toEqual(first.map((c) => c.profile));
    const [xz, robot] = first.map((c) => c.profile as Record<string, unknown>);
    expect(xz).toMatchObject({ id: 'cli-xiaozhi', kind: 'xiaozhi', name: 'XiaoZhi h:8000' });
    expect(xz!.deviceId).toMatch(/^([0-9a-f]{2}:){5}[0-9a-f]{2}$/);
    expect(robot!.macAddr).toMatch(/^([0-9A-F]{2}-){5}[0-9A-F]{2}$/);
    const saved = JSON.parse(await readFile(path.join(dir, 'identity.json'), 'utf8'));
    expect(saved).toEqual({
      xiaozhi: { deviceId: xz!.deviceId, clientId: xz!.clientId },
      robot: { macAddr: robot!.macAddr },
    });
    // A flag wins for this run and is not written over the kept identity.
    const given = await flagConnections(
      servers(...argv, '--device-id', '02:00:00:00:00:09'),
      dialects,
      dir,
    );
    expect(given[0]!.profile).toMatchObject({ deviceId: '02:00:00:00:00:09' });
    expect(JSON.parse(await readFile(path.join(dir, 'identity.json'), 'utf8'))).toEqual(saved);
  });

  it('reads an identity.json written before kinds were generic', async () => {
    await writeFile(
      path.join(dir, 'identity.json'),
      JSON.stringify({
        deviceId: 'aa:bb:cc:dd:ee:01',
        clientId: '123e4567-e89b-42d3-a456-426614174000',
        robotMac: 'AA-BB-CC-DD-EE-02',
      }),
    );
    const [xz, robot] = await flagConnections(
      servers('--xiaozhi', 'ws://h/x', '--robot', 'ws://h/ws'),
      dialects,
      dir,
    );
    expect(xz!.profile).toMatchObject({
      deviceId: 'aa:bb:cc:dd:ee:01',
      clientId: '123e4567-e89b-42d3-a456-426614174000',
    });
    expect(robot!.profile).toMatchObject({ macAddr: 'AA-BB-CC-DD-EE-02' });
  });

  it("an endpoint's token leaves the address for the secret; a token file is read, never echoed", async () => {
    const file = path.join(dir, 'token');
    await writeFile(file, ' file-token \n');
    const [advent, endpoint] = await flagConnections(
      servers(
        '--server',
        '[::1]:8009',
        '--token-file',
        file,
        '--lang',
        'en',
        '--endpoint',
        'wss://api.example/mcp/?token=ep-tok',
      ),
      dialects,
      dir,
    );
    expect(advent).toEqual({
      profile: {
        id: 'cli-advent',
        kind: 'advent',
        name: '[::1]:8009',
        host: '::1',
        port: 8009,
        lang: 'en',
      },
      secret: 'file-token',
    });
    expect(endpoint!.profile).toMatchObject({ kind: 'endpoint', url: 'wss://api.example/mcp/' });
    expect(endpoint!.secret).toBe('ep-tok');
    await expect(
      flagConnections(
        servers('--server', 'h:1', '--token-file', path.join(dir, 'nope')),
        dialects,
        dir,
      ),
    ).rejects.toThrow(/cannot read the token from .*nope/);
  });

  it('the usage text lists every kind that has flags, with its own fields', () => {
    const text = usage(PROFILE_KIND_SPECS);
    for (const flag of [
      '--server HOST:PORT (--token TOKEN | --token-file FILE)',
      '[--xiaozhi-token TOKEN | --xiaozhi-token-file FILE]',
      '[--device-id MAC]',
      '[--client-id UUID]',
      '[--protocol-version 1|2|3]',
      '[--format pcm|opus]',
      '--endpoint WS_URL',
      '--robot WS_URL [--mac MAC]',
    ])
      expect(text).toContain(flag);
  });
});
