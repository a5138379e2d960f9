/**
 * The servers given on the command line as profiles for this run, with their secrets kept apart.
 * Each kind's dialect completes its profile as the Connections page would; the identities it
 * generates (a XiaoZhi Device-Id / Client-Id, a robot MAC) are kept in `identity.json` in the data
 * folder, so the server sees the same device on every run.
 */
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Profile } from '../../app/contract/commands.js';
import { type IdSource, cryptoIds } from '../../app/ids.js';
import type { BaseProfile, DialectSet } from '../../app/wire/dialect.js';
import type { KindFlags } from './flag-kinds.js';

export interface FlagConnection {
  profile: Profile;
  /** The token for this run (kept in memory only). */
  secret?: string;
}

/** identity.json: per kind, the generated fields it keeps (`{"xiaozhi": {"deviceId": …}}`). */
type Identity = Record<string, Record<string, string>>;

export async function flagConnections(
  servers: readonly KindFlags[],
  dialects: DialectSet,
  dataDir: string,
  ids: IdSource = cryptoIds,
): Promise<FlagConnection[]> {
  if (servers.length === 0) return [];
  const file = path.join(dataDir, 'identity.json');
  const identity = await loadIdentity(file);
  let changed = false;
  const out: FlagConnection[] = [];
  for (const flags of servers) {
    const dialect = dialects.get(flags.kind);
    if (!dialect) throw new Error(`this agent cannot hold a '${flags.kind}' connection`);
    const spec = dialect.profile;
    const input = {
      id: `cli-${spec.kind}`,
      kind: spec.kind,
      name: displayName(spec.flags?.display ?? spec.kind, flags.fields),
      ...flags.fields,
    } as BaseProfile;
    const checked = dialects.checkInput(input);
    if (!checked.ok) throw new Error(`--${spec.flags?.name}: ${checked.message}`);
    const kept = identity[spec.kind] ?? {};
    const { profile, secret: split } = dialect.complete(
      input,
      { ...input, ...kept } as BaseProfile,
      ids,
    );
    // What the dialect generated is kept, so the next run is the same device.
    for (const f of spec.form.filter((f) => f.generated)) {
      const value = (profile as unknown as Record<string, unknown>)[f.key];
      if (typeof value === 'string' && kept[f.key] !== value && flags.fields[f.key] === undefined) {
        identity[spec.kind] = { ...identity[spec.kind], [f.key]: value };
        changed = true;
      }
    }
    out.push({ profile: profile as Profile, secret: split ?? (await secretOf(flags)) });
  }
  if (changed) await saveIdentity(file, identity);
  return out;
}

/** The secret given inline or in a file; the message names the file, never the secret. */
async function secretOf(flags: KindFlags): Promise<string | undefined> {
  if (flags.secret !== undefined) return flags.secret;
  if (flags.secretFile === undefined) return undefined;
  let text: string;
  try {
    text = (await readFile(flags.secretFile, 'utf8')).trim();
  } catch (err) {
    throw new Error(`cannot read the token from ${flags.secretFile}: ${(err as Error).message}`);
  }
  if (!text) throw new Error(`cannot read the token from ${flags.secretFile}: the file is empty`);
  return text;
}

/** `XiaoZhi {host}` → `XiaoZhi 10.0.0.2:8000`, from the flag's url or host/port. */
function displayName(template: string, fields: Record<string, unknown>): string {
  const url = typeof fields.url === 'string' ? fields.url : undefined;
  let host = typeof fields.host === 'string' ? fields.host : '';
  if (url) {
    try {
      host = new URL(url).host;
    } catch {
      host = url;
    }
  } else if (host.includes(':')) host = `[${host}]`;
  const port = fields.port === undefined ? '' : String(fields.port);
  return template.replace('{host}', host).replace('{port}', port).slice(0, 100);
}

/** `identity.json`; the layout before kinds were generic (`deviceId`, `clientId`, `robotMac`) is read too. */
async function loadIdentity(file: string): Promise<Identity> {
  let saved: Record<string, unknown> = {};
  try {
    const parsed: unknown = JSON.parse(await readFile(file, 'utf8'));
    if (parsed && typeof parsed === 'object') saved = parsed as Record<string, unknown>;
  } catch {
    // Missing or unreadable: a new identity is made (the old one cannot be recovered).
  }
  const out: Identity = {};
  for (const [kind, fields] of Object.entries(saved)) {
    if (!fields || typeof fields !== 'object') continue;
    const strings = Object.entries(fields).filter(([, v]) => typeof v === 'string');
    if (strings.length) out[kind] = Object.fromEntries(strings) as Record<string, string>;
  }
  const legacy = (key: string) =>
    typeof saved[key] === 'string' ? (saved[key] as string) : undefined;
  const deviceId = legacy('deviceId');
  const clientId = legacy('clientId');
  const robotMac = legacy('robotMac');
  if (deviceId || clientId)
    out.xiaozhi = {
      ...(deviceId && { deviceId }),
      ...(clientId && { clientId }),
      ...out.xiaozhi,
    };
  if (robotMac) out.robot = { macAddr: robotMac, ...out.robot };
  return out;
}

async function saveIdentity(file: string, identity: Identity): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  await writeFile(tmp, `${JSON.stringify(identity, null, 2)}\n`, { mode: 0o600 });
  await rename(tmp, file);
}
