import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { getDeviceStatusService } from '../../../app/services/builtin/get_device_status.js';
import { setVolumeService } from '../../../app/services/builtin/set_volume.js';
import { createFilesSandbox } from '../../../app/services/files/sandbox.js';
import { systemDesktop } from '../../../app/services/platform/desktop.js';
import type { DeviceStatus } from '../../../app/services/platform/device.js';
import { RunError } from '../../../app/services/platform/runner.js';
import { ServiceFailure } from '../../../app/services/service.js';
import { context, tempDirs } from '../helpers.js';
import {
  RecordingRunner,
  decodePowershell,
  notInstalled,
  recordedDesktop,
} from '../platform/recorder.js';

const dirs = tempDirs();
afterEach(() => dirs.cleanup());
const ctx = context(createFilesSandbox({ roots: () => [], maxFileBytes: () => 1 }));

async function failure(fn: () => unknown): Promise<ServiceFailure> {
  const err = await Promise.resolve()
    .then(fn)
    .then(
      () => new Error('expected a refusal'),
      (e: unknown) => e,
    );
  if (err instanceof ServiceFailure) return err;
  throw err;
}

async function sysWithBattery(files: Record<string, string>): Promise<string> {
  const root = await dirs.make();
  for (const [name, content] of Object.entries(files)) {
    const file = path.join(root, 'class', 'power_supply', name);
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, content);
  }
  return root;
}

const iface = (internal: boolean) => ({
  address: internal ? '127.0.0.1' : '192.168.1.20',
  netmask: '255.255.255.0',
  family: 'IPv4' as const,
  mac: '00:00:00:00:00:00',
  internal,
  cidr: null,
});

describe('get_device_status', () => {
  it('is a harmless read, described for the prompt', () => {
    const service = getDeviceStatusService(systemDesktop());
    expect(service).toMatchObject({ name: 'get_device_status', risk: 'read', group: 'system' });
    expect(service.preview!({}, ctx)).toEqual({
      summary:
        "Read this computer's status (system, battery, volume, network, time zone, language)",
      resolvedPaths: [],
    });
  });

  it('on Linux reads the battery from /sys and the volume from pactl', async () => {
    const sysRoot = await sysWithBattery({
      'AC/type': 'Mains\n',
      'BAT0/type': 'Battery\n',
      'BAT0/capacity': '73\n',
      'BAT0/status': 'Discharging\n',
    });
    const runner = new RecordingRunner((c) =>
      c.args[0] === 'get-sink-volume'
        ? { stdout: 'Volume: front-left: 26214 /  40% / -23.88 dB' }
        : { stdout: 'Mute: no' },
    );
    const desktop = recordedDesktop(runner, {
      platform: 'linux',
      sysRoot,
      env: { LANG: 'zh_CN.UTF-8' },
      osFacts: () => ({ name: 'Linux', release: '6.1.0', arch: 'x64' }),
      networkInterfaces: () => ({ lo: [iface(true)], eth0: [iface(false)] }),
    });
    const status = (await getDeviceStatusService(desktop).run({}, ctx)) as DeviceStatus;
    expect(status).toMatchObject({
      os: { platform: 'linux', name: 'Linux', release: '6.1.0', arch: 'x64' },
      battery: { present: true, percent: 73, charging: false },
      volume: { level: 40, muted: false },
      network: { up: true, interfaces: 1 },
      locale: 'zh-CN',
    });
    expect(typeof status.timeZone).toBe('string');
  });

  it('answers a flood of calls with one reading: no OS command per call', async () => {
    const runner = new RecordingRunner(() => ({
      stdout: 'Volume: front-left: 26214 /  40% / -23.88 dB',
    }));
    const desktop = recordedDesktop(runner, {
      platform: 'linux',
      sysRoot: await dirs.make(),
      networkInterfaces: () => ({}),
    });
    const service = getDeviceStatusService(desktop);
    const answers = await Promise.all(Array.from({ length: 64 }, () => service.run({}, ctx)));
    expect(new Set(answers).size).toBe(1);
    const once = runner.calls.length;
    expect(once).toBeGreaterThan(0);
    expect(once).toBeLessThanOrEqual(2);
  });

  it('reports each fact it cannot read as unavailable, never failing the others', async () => {
    const desktop = recordedDesktop(new RecordingRunner((c) => notInstalled(c.cmd)), {
      platform: 'linux',
      sysRoot: await dirs.make(),
      networkInterfaces: () => ({ lo: [iface(true)] }),
    });
    const status = (await getDeviceStatusService(desktop).run({}, ctx)) as DeviceStatus;
    expect(status.battery).toEqual({ present: false });
    expect(status.volume).toEqual({
      unavailable:
        'reading the volume is not possible on this computer: none of pactl, amixer is installed',
    });
    expect(status.network).toEqual({ up: false, interfaces: 0 });
  });

  it('on this machine, for real: answers every field', async () => {
    const status = (await getDeviceStatusService(systemDesktop()).run({}, ctx)) as DeviceStatus;
    expect(Object.keys(status).sort()).toEqual([
      'battery',
      'locale',
      'network',
      'os',
      'timeZone',
      'volume',
    ]);
    expect(status.os.platform).toBe(
      process.platform === 'win32' || process.platform === 'darwin' ? process.platform : 'linux',
    );
  });

  it('on macOS asks pmset and osascript; on Windows PowerShell', async () => {
    const mac = new RecordingRunner((c) =>
      c.cmd === 'pmset'
        ? { stdout: ' -InternalBattery-0 (id=1)\t55%; charging; 1:00 remaining present: true' }
        : { stdout: 'output volume:30, input volume:50, alert volume:100, output muted:true' },
    );
    const status = (await getDeviceStatusService(recordedDesktop(mac, { platform: 'darwin' })).run(
      {},
      ctx,
    )) as DeviceStatus;
    expect(status.battery).toEqual({ present: true, percent: 55, charging: true });
    expect(status.volume).toEqual({ level: 30, muted: true });
    expect(mac.calls.map((c) => [c.cmd, ...c.args])).toEqual([
      ['pmset', '-g', 'batt'],
      ['osascript', '-e', 'get volume settings'],
    ]);
    const win = new RecordingRunner((c) =>
      decodePowershell(c.args).includes('Win32_Battery') ? { stdout: '' } : { stdout: '80 on\r\n' },
    );
    const w = (await getDeviceStatusService(recordedDesktop(win, { platform: 'win32' })).run(
      {},
      ctx,
    )) as DeviceStatus;
    expect(w.battery).toEqual({ present: false });
    expect(w.volume).toEqual({ level: 80, muted: false });
  });
});

describe('set_volume', () => {
  it('asks first (system), says what it will do, and refuses a call that changes nothing', async () => {
    const service = setVolumeService(recordedDesktop(new RecordingRunner()));
    expect(service).toMatchObject({ risk: 'system', group: 'system' });
    expect((await service.preview!({ level: 40 }, ctx)).summary).toBe('Set the volume to 40%');
    expect((await service.preview!({ mute: true }, ctx)).summary).toBe('Mute the sound');
    expect((await service.preview!({ mute: false, level: 10 }, ctx)).summary).toBe(
      'Unmute the sound and set the volume to 10%',
    );
    const refusal = await failure(() => service.preview!({}, ctx));
    expect(refusal).toMatchObject({
      code: 'invalid_params',
      message: 'give level (0–100), mute (true or false), or both',
    });
  });

  it('on Linux uses pactl, or amixer where pactl is missing', async () => {
    const pactl = new RecordingRunner();
    await setVolumeService(recordedDesktop(pactl, { platform: 'linux' })).run({ level: 35 }, ctx);
    expect(pactl.calls.map((c) => [c.cmd, ...c.args])).toEqual([
      ['pactl', 'set-sink-volume', '@DEFAULT_SINK@', '35%'],
    ]);
    const alsa = new RecordingRunner((c) =>
      c.cmd === 'pactl' ? notInstalled('pactl') : undefined,
    );
    expect(
      await setVolumeService(recordedDesktop(alsa, { platform: 'linux' })).run({ mute: true }, ctx),
    ).toEqual({
      message: 'Done: mute the sound',
    });
    expect(alsa.calls.map((c) => [c.cmd, ...c.args])).toEqual([
      ['pactl', 'set-sink-mute', '@DEFAULT_SINK@', '1'],
      ['amixer', 'set', 'Master', 'mute'],
    ]);
  });

  it('without any volume tool: "not supported here"; a failing tool: its reason', async () => {
    const none = recordedDesktop(new RecordingRunner((c) => notInstalled(c.cmd)), {
      platform: 'linux',
    });
    expect(await failure(() => setVolumeService(none).run({ level: 5 }, ctx))).toMatchObject({
      code: 'unsupported',
      message:
        'changing the volume is not possible on this computer: none of pactl, amixer is installed',
    });
    const broken = recordedDesktop(
      new RecordingRunner(
        () => new RunError('failed', 'pactl failed: Connection failure: Connection refused'),
      ),
      { platform: 'linux' },
    );
    expect(await failure(() => setVolumeService(broken).run({ level: 5 }, ctx))).toMatchObject({
      code: 'service_error',
      message: 'changing the volume failed: pactl failed: Connection failure: Connection refused',
    });
  });

  it('on macOS and Windows runs the exact commands', async () => {
    const mac = new RecordingRunner();
    await setVolumeService(recordedDesktop(mac, { platform: 'darwin' })).run(
      { level: 60, mute: false },
      ctx,
    );
    expect(mac.calls).toEqual([
      {
        kind: 'run',
        cmd: 'osascript',
        args: ['-e', 'set volume output volume 60', '-e', 'set volume output muted false'],
      },
    ]);
    const win = new RecordingRunner();
    await setVolumeService(recordedDesktop(win, { platform: 'win32' })).run({ mute: true }, ctx);
    expect(win.calls).toHaveLength(1);
    expect(win.calls[0]!.cmd).toBe('powershell.exe');
    expect(decodePowershell(win.calls[0]!.args).endsWith('[AdventAudio]::SetMute($true)\n')).toBe(
      true,
    );
  });
});
