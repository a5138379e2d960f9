/**
 * Facts about this computer for get_device_status, and the volume for set_volume. Each fact is
 * read on its own: one that cannot be read here is reported as such, never fails the others.
 */
import { readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import {
  type BatteryState,
  type VolumeChange,
  type VolumeState,
  PACTL_GET_MUTE,
  batteryCommand,
  getVolumeCommands,
  parseBattery,
  parsePactlMute,
  parseVolume,
  setVolumeCommands,
} from './commands.js';
import type { Desktop } from './desktop.js';
import { runFirst } from './fallback.js';
import { RunError } from './runner.js';
import { ServiceFailure } from '../service.js';

export type Fact<T> = T | { unavailable: string };

export interface DeviceStatus {
  os: { platform: string; name: string; release: string; arch: string };
  battery: Fact<BatteryState>;
  volume: Fact<Partial<VolumeState>>;
  network: { up: boolean; interfaces: number };
  timeZone: string;
  locale: string;
}

const FACT_TIMEOUT_MS = 4000;

export async function deviceStatus(desktop: Desktop, signal?: AbortSignal): Promise<DeviceStatus> {
  const [battery, volume] = await Promise.all([
    fact(() => readBattery(desktop, signal)),
    fact(() => readVolume(desktop, signal)),
  ]);
  const resolved = Intl.DateTimeFormat().resolvedOptions();
  const os = desktop.osFacts();
  return {
    os: { platform: desktop.platform, ...os },
    battery,
    volume,
    network: networkState(desktop),
    timeZone: resolved.timeZone || 'UTC',
    locale: localeOf(desktop.env) ?? resolved.locale,
  };
}

async function fact<T>(read: () => Promise<T>): Promise<Fact<T>> {
  try {
    return await read();
  } catch (err) {
    return { unavailable: err instanceof Error ? err.message : String(err) };
  }
}

/** The user's language setting where the environment names one (LANG=zh_CN.UTF-8 → zh-CN). */
function localeOf(env: Desktop['env']): string | undefined {
  const raw = env.LC_ALL || env.LC_MESSAGES || env.LANG;
  const m = raw ? /^([a-z]{2,3})(?:[_-]([A-Z]{2}))?/.exec(raw) : null;
  if (!m || raw === 'C' || raw?.startsWith('C.') || raw === 'POSIX') return undefined;
  return m[2] ? `${m[1]}-${m[2]}` : m[1];
}

/** Up when any interface other than loopback has an address. */
function networkState(desktop: Desktop): DeviceStatus['network'] {
  let interfaces = 0;
  for (const addrs of Object.values(desktop.networkInterfaces())) {
    if (addrs?.some((a) => !a.internal)) interfaces += 1;
  }
  return { up: interfaces > 0, interfaces };
}

// --- battery -----------------------------------------------------------------------------------

export async function readBattery(desktop: Desktop, signal?: AbortSignal): Promise<BatteryState> {
  if (desktop.platform === 'linux') return linuxBattery(desktop.sysRoot);
  const command = batteryCommand(desktop.platform)!;
  const { output } = await runFirst(desktop.runner, [command], 'reading the battery', {
    timeoutMs: FACT_TIMEOUT_MS,
    signal,
  });
  return parseBattery(desktop.platform, output.stdout);
}

/** `/sys/class/power_supply/<name>/{type,capacity,status}`: the first battery found. */
async function linuxBattery(sysRoot: string): Promise<BatteryState> {
  const dir = path.join(sysRoot, 'class', 'power_supply');
  let names: string[];
  try {
    names = (await readdir(dir)).sort().slice(0, 32);
  } catch {
    return { present: false };
  }
  for (const name of names) {
    const read = (file: string) =>
      readFile(path.join(dir, name, file), 'utf8').then(
        (t) => t.trim(),
        () => undefined,
      );
    if ((await read('type')) !== 'Battery') continue;
    if ((await read('present')) === '0') continue;
    const capacity = Number(await read('capacity'));
    const status = await read('status');
    return {
      present: true,
      ...(Number.isInteger(capacity) && capacity >= 0 && capacity <= 100
        ? { percent: capacity }
        : {}),
      ...(status ? { charging: status === 'Charging' || status === 'Full' } : {}),
    };
  }
  return { present: false };
}

// --- volume ------------------------------------------------------------------------------------

export async function readVolume(
  desktop: Desktop,
  signal?: AbortSignal,
): Promise<Partial<VolumeState>> {
  const { command, output } = await runFirst(
    desktop.runner,
    getVolumeCommands(desktop.platform),
    'reading the volume',
    { timeoutMs: FACT_TIMEOUT_MS, signal },
  );
  const state = parseVolume(command.cmd, output.stdout);
  if (!state) throw new Error(`${command.cmd} printed no volume this agent understands`);
  if (command.cmd === 'pactl' && state.muted === undefined) {
    const mute = await desktop.runner
      .run(PACTL_GET_MUTE.cmd, PACTL_GET_MUTE.args, { timeoutMs: FACT_TIMEOUT_MS, signal })
      .then((o) => parsePactlMute(o.stdout))
      .catch(() => undefined);
    if (mute !== undefined) state.muted = mute;
  }
  return state;
}

/** Set level and/or mute with the first tool installed (pactl, then amixer on Linux). */
export async function changeVolume(
  desktop: Desktop,
  change: VolumeChange,
  signal?: AbortSignal,
): Promise<void> {
  const tools = setVolumeCommands(desktop.platform, change);
  for (const steps of tools) {
    try {
      for (const step of steps)
        await desktop.runner.run(step.cmd, step.args, { timeoutMs: 8000, signal });
      return;
    } catch (err) {
      if (err instanceof RunError && err.reason === 'not_found') continue;
      if (err instanceof RunError)
        throw new ServiceFailure('service_error', `changing the volume failed: ${err.message}`);
      throw err;
    }
  }
  const names = [...new Set(tools.flat().map((c) => c.cmd))].join(', ');
  throw new ServiceFailure(
    'unsupported',
    `changing the volume is not possible on this computer: none of ${names} is installed`,
  );
}
