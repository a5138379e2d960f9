/**
 * The servers given on the command line (`--server`, `--xiaozhi`, `--endpoint`, `--robot`) as
 * profiles for this run, with their secrets kept apart. A XiaoZhi Device-Id / Client-Id and a
 * robot MAC not given by flags are generated once and kept in `identity.json` in the data folder,
 * so the server sees the same device on every run.
 */
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Profile } from '../../app/contract/commands.js';
import { type IdSource, cryptoIds } from '../../app/ids.js';
import {
  generateClientId,
  generateDeviceId,
  normaliseDeviceId,
  normaliseRobotMac,
  orThrow,
} from '../../app/wire/kit/identity.js';
import { splitUrlToken } from '../../app/wire/kit/url.js';
import type { SessionFlags } from './args.js';

export interface FlagConnection {
  profile: Profile;
  /** The token for this run (kept in memory only). */
  secret?: string;
}

interface Identity {
  deviceId?: string;
  clientId?: string;
  robotMac?: string;
}

export async function flagConnections(
  args: SessionFlags & { server?: { host: string; port: number } },
  adventToken: string | undefined,
  dataDir: string,
  ids: IdSource = cryptoIds,
): Promise<FlagConnection[]> {
  const out: FlagConnection[] = [];
  if (args.server) {
    const { host, port } = args.server;
    out.push({
      profile: stripUndefined({
        id: `cli-${host.replace(/[^A-Za-z0-9_.-]/g, '_')}-${port}`.slice(0, 64),
        kind: 'advent',
        name: host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`,
        host,
        port,
        voiceId: args.voiceId,
        lang: args.lang,
        format: args.format,
        inputAudioFormat: args.inputAudioFormat,
        mode: args.mode,
        emojiMode: args.emojiMode,
      }),
      secret: adventToken,
    });
  }
  if (!args.xiaozhi && !args.endpoint && !args.robot) return out;

  const identity = await loadIdentity(dataDir, {
    deviceId: args.xiaozhi && !args.xiaozhi.deviceId,
    robotMac: args.robot && !args.robot.mac,
    ids,
  });
  if (args.xiaozhi) {
    const x = args.xiaozhi;
    out.push({
      profile: stripUndefined({
        id: 'cli-xiaozhi',
        kind: 'xiaozhi',
        name: `XiaoZhi ${hostOf(x.url)}`,
        url: x.url,
        deviceId: orThrow(normaliseDeviceId(x.deviceId ?? identity.deviceId!)),
        clientId: (x.clientId ?? identity.clientId!).toLowerCase(),
        protocolVersion: x.protocolVersion,
      }),
      secret: x.token,
    });
  }
  if (args.endpoint) {
    const { url, token } = splitUrlToken(args.endpoint.url);
    out.push({
      profile: { id: 'cli-endpoint', kind: 'endpoint', name: `MCP endpoint ${hostOf(url)}`, url },
      secret: token,
    });
  }
  if (args.robot) {
    out.push({
      profile: {
        id: 'cli-robot',
        kind: 'robot',
        name: `Robot ${hostOf(args.robot.url)}`,
        url: args.robot.url,
        macAddr: orThrow(normaliseRobotMac(args.robot.mac ?? identity.robotMac!)),
      },
    });
  }
  return out;
}

/** `identity.json`, with what is missing generated and saved (atomically) before it is used. */
async function loadIdentity(
  dataDir: string,
  need: { deviceId?: boolean; robotMac?: boolean; ids: IdSource },
): Promise<Identity> {
  const file = path.join(dataDir, 'identity.json');
  let saved: Identity = {};
  try {
    const parsed: unknown = JSON.parse(await readFile(file, 'utf8'));
    if (parsed && typeof parsed === 'object') saved = parsed as Identity;
  } catch {
    // Missing or unreadable: a new identity is made below (the old one cannot be recovered).
  }
  const next: Identity = {
    deviceId: typeof saved.deviceId === 'string' ? saved.deviceId : undefined,
    clientId: typeof saved.clientId === 'string' ? saved.clientId : undefined,
    robotMac: typeof saved.robotMac === 'string' ? saved.robotMac : undefined,
  };
  let changed = false;
  if (need.deviceId && !next.deviceId) {
    next.deviceId = generateDeviceId(need.ids);
    changed = true;
  }
  if (need.deviceId && !next.clientId) {
    next.clientId = generateClientId(need.ids);
    changed = true;
  }
  if (need.robotMac && !next.robotMac) {
    next.robotMac = generateDeviceId(need.ids);
    changed = true;
  }
  if (changed) {
    await mkdir(dataDir, { recursive: true });
    const tmp = `${file}.${process.pid}.tmp`;
    await writeFile(tmp, `${JSON.stringify(next, null, 2)}\n`, { mode: 0o600 });
    await rename(tmp, file);
  }
  return next;
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}

function stripUndefined<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}
