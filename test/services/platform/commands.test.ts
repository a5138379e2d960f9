import { describe, expect, it } from 'vitest';
import {
  batteryCommand,
  getVolumeCommands,
  openUrlCommand,
  parseBattery,
  parsePactlMute,
  parseVolume,
  readClipboardCommands,
  setVolumeCommands,
  writeClipboardCommands,
} from '../../../app/services/platform/commands.js';
import { decodePowershell } from './recorder.js';

const PS_PREFIX = [
  '-NoProfile',
  '-NonInteractive',
  '-ExecutionPolicy',
  'Bypass',
  '-EncodedCommand',
];

describe('the exact command lines per platform', () => {
  it('open a URL with the platform opener, the URL one argument, never through a shell', () => {
    const url = 'https://example.com/a?b=1&c=^2';
    expect(openUrlCommand('linux', url)).toEqual({ cmd: 'xdg-open', args: [url] });
    expect(openUrlCommand('darwin', url)).toEqual({ cmd: 'open', args: [url] });
    expect(openUrlCommand('win32', url)).toEqual({
      cmd: 'rundll32.exe',
      args: ['url.dll,FileProtocolHandler', url],
    });
  });

  it('read and write the clipboard: wl-clipboard on Wayland, xclip then xsel on X11, none without a display', () => {
    expect(readClipboardCommands('linux', { WAYLAND_DISPLAY: 'wayland-0', DISPLAY: ':0' })).toEqual(
      [
        { cmd: 'wl-paste', args: ['--no-newline', '--type', 'text'] },
        { cmd: 'xclip', args: ['-selection', 'clipboard', '-out'] },
        { cmd: 'xsel', args: ['--clipboard', '--output'] },
      ],
    );
    expect(
      writeClipboardCommands('linux', { WAYLAND_DISPLAY: 'wayland-0' }, '<!DOCTYPE html>'),
    ).toEqual([
      { cmd: 'wl-copy', args: ['--type', 'text/plain;charset=utf-8'], input: '<!DOCTYPE html>' },
    ]);
    expect(writeClipboardCommands('linux', { DISPLAY: ':0' }, 'hi')).toEqual([
      { cmd: 'xclip', args: ['-selection', 'clipboard', '-in'], input: 'hi' },
      { cmd: 'xsel', args: ['--clipboard', '--input'], input: 'hi' },
    ]);
    expect(readClipboardCommands('linux', {})).toEqual([]);
    expect(writeClipboardCommands('linux', {}, 'hi')).toEqual([]);
    expect(readClipboardCommands('darwin', {})).toEqual([{ cmd: 'pbpaste', args: [] }]);
    expect(writeClipboardCommands('darwin', {}, 'hi')).toEqual([
      { cmd: 'pbcopy', args: [], input: 'hi' },
    ]);
  });

  it('Windows clipboard: fixed PowerShell scripts, the text only on stdin (UTF-8)', () => {
    const [read] = readClipboardCommands('win32', {});
    expect(read!.cmd).toBe('powershell.exe');
    expect(read!.args.slice(0, 5)).toEqual(PS_PREFIX);
    expect(decodePowershell(read!.args)).toBe(
      '[Console]::OutputEncoding = [System.Text.Encoding]::UTF8\n' +
        '$t = Get-Clipboard -Raw\n' +
        'if ($null -ne $t) { [Console]::Out.Write($t) }',
    );
    const secret = "'; Remove-Item C:\\ -Recurse; '";
    const [write] = writeClipboardCommands('win32', {}, secret);
    expect(write!.input).toBe(secret);
    expect(decodePowershell(write!.args)).toBe(
      '[Console]::InputEncoding = [System.Text.Encoding]::UTF8\n' +
        'Set-Clipboard -Value ([Console]::In.ReadToEnd())',
    );
    expect(write!.args.join(' ')).not.toContain('Remove-Item');
  });

  it('volume: pactl then amixer on Linux, osascript on macOS, Core Audio through PowerShell on Windows', () => {
    expect(getVolumeCommands('linux')).toEqual([
      { cmd: 'pactl', args: ['get-sink-volume', '@DEFAULT_SINK@'] },
      { cmd: 'amixer', args: ['get', 'Master'] },
    ]);
    expect(setVolumeCommands('linux', { level: 40, mute: false })).toEqual([
      [
        { cmd: 'pactl', args: ['set-sink-volume', '@DEFAULT_SINK@', '40%'] },
        { cmd: 'pactl', args: ['set-sink-mute', '@DEFAULT_SINK@', '0'] },
      ],
      [
        { cmd: 'amixer', args: ['set', 'Master', '40%'] },
        { cmd: 'amixer', args: ['set', 'Master', 'unmute'] },
      ],
    ]);
    expect(getVolumeCommands('darwin')).toEqual([
      { cmd: 'osascript', args: ['-e', 'get volume settings'] },
    ]);
    expect(setVolumeCommands('darwin', { level: 25, mute: true })).toEqual([
      [
        {
          cmd: 'osascript',
          args: ['-e', 'set volume output volume 25', '-e', 'set volume output muted true'],
        },
      ],
    ]);
    const win = setVolumeCommands('win32', { level: 70, mute: false })[0]![0]!;
    const script = decodePowershell(win.args);
    expect(script).toMatch(/IAudioEndpointVolume/);
    expect(script.endsWith('[AdventAudio]::SetLevel(70)\n[AdventAudio]::SetMute($false)\n')).toBe(
      true,
    );
    expect(
      decodePowershell(getVolumeCommands('win32')[0]!.args).endsWith('[AdventAudio]::Get()'),
    ).toBe(true);
  });

  it('a volume level that is not an integer 0–100 never becomes command text', () => {
    for (const level of [101, -1, 1.5, Number.NaN])
      expect(() => setVolumeCommands('win32', { level })).toThrow(RangeError);
  });

  it('parses what each volume tool prints', () => {
    expect(
      parseVolume(
        'pactl',
        'Volume: front-left: 26214 /  40% / -23.88 dB,   front-right: 26214 /  40% / -23.88 dB',
      ),
    ).toEqual({ level: 40 });
    expect(parsePactlMute('Mute: yes\n')).toBe(true);
    expect(parseVolume('amixer', '  Front Left: Playback 26 [40%] [-23.00dB] [off]\n')).toEqual({
      level: 40,
      muted: true,
    });
    expect(
      parseVolume(
        'osascript',
        'output volume:50, input volume:75, alert volume:100, output muted:false',
      ),
    ).toEqual({ level: 50, muted: false });
    expect(parseVolume('powershell.exe', '63 muted\r\n')).toEqual({ level: 63, muted: true });
    expect(parseVolume('pactl', 'Connection failure')).toBeUndefined();
  });

  it('battery: pmset on macOS, Win32_Battery on Windows, parsed; /sys on Linux needs no command', () => {
    expect(batteryCommand('linux')).toBeUndefined();
    expect(batteryCommand('darwin')).toEqual({ cmd: 'pmset', args: ['-g', 'batt'] });
    expect(decodePowershell(batteryCommand('win32')!.args)).toMatch(/Win32_Battery/);
    expect(
      parseBattery(
        'darwin',
        "Now drawing from 'Battery Power'\n -InternalBattery-0 (id=4653155)\t85%; discharging; 4:12 remaining present: true\n",
      ),
    ).toEqual({ present: true, percent: 85, charging: false });
    expect(parseBattery('darwin', "Now drawing from 'AC Power'\n")).toEqual({ present: false });
    expect(parseBattery('win32', '{"EstimatedChargeRemaining":42,"BatteryStatus":2}')).toEqual({
      present: true,
      percent: 42,
      charging: true,
    });
    expect(parseBattery('win32', '')).toEqual({ present: false });
  });
});
