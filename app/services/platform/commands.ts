/**
 * The exact command lines per platform, as pure functions so each platform's are tested on any
 * machine. Nothing a server sends reaches them except a URL already validated (open_url) and a
 * volume already checked to be an integer 0–100; PowerShell scripts are fixed text passed as
 * -EncodedCommand, so no quoting rule of cmd.exe or PowerShell can be abused.
 */
import type { Platform } from './desktop.js';

export interface Command {
  cmd: string;
  args: string[];
  /** Written to stdin (clipboard text). */
  input?: string;
}

/** `powershell -EncodedCommand` takes the script as base64 of its UTF-16LE bytes. */
export function powershell(script: string): Command {
  return {
    cmd: 'powershell.exe',
    args: [
      '-NoProfile',
      '-NonInteractive',
      '-ExecutionPolicy',
      'Bypass',
      '-EncodedCommand',
      Buffer.from(script, 'utf16le').toString('base64'),
    ],
  };
}

/** Opens an http(s) URL in the default browser. `url` is already validated and normalised. */
export function openUrlCommand(platform: Platform, url: string): Command {
  switch (platform) {
    case 'linux':
      return { cmd: 'xdg-open', args: [url] };
    case 'darwin':
      return { cmd: 'open', args: [url] };
    case 'win32':
      // The shell's URL handler, without cmd.exe (whose `start` would parse & and ^ in the URL).
      return { cmd: 'rundll32.exe', args: ['url.dll,FileProtocolHandler', url] };
  }
}

// --- clipboard ---------------------------------------------------------------------------------

/**
 * Linux has no clipboard without a display server: Wayland's wl-clipboard, else X11's xclip or
 * xsel (tried in this order when one is not installed). Empty when there is no display at all.
 */
export function readClipboardCommands(
  platform: Platform,
  env: Readonly<Record<string, string | undefined>>,
): Command[] {
  switch (platform) {
    case 'darwin':
      return [{ cmd: 'pbpaste', args: [] }];
    case 'win32':
      return [
        powershell(
          '[Console]::OutputEncoding = [System.Text.Encoding]::UTF8\n' +
            '$t = Get-Clipboard -Raw\n' +
            'if ($null -ne $t) { [Console]::Out.Write($t) }',
        ),
      ];
    case 'linux': {
      const out: Command[] = [];
      // Text only: with an image copied, wl-paste would hand over its bytes as the "text".
      if (env.WAYLAND_DISPLAY)
        out.push({ cmd: 'wl-paste', args: ['--no-newline', '--type', 'text'] });
      if (env.DISPLAY)
        out.push(
          { cmd: 'xclip', args: ['-selection', 'clipboard', '-out'] },
          { cmd: 'xsel', args: ['--clipboard', '--output'] },
        );
      return out;
    }
  }
}

export function writeClipboardCommands(
  platform: Platform,
  env: Readonly<Record<string, string | undefined>>,
  text: string,
): Command[] {
  switch (platform) {
    case 'darwin':
      return [{ cmd: 'pbcopy', args: [], input: text }];
    case 'win32':
      return [
        {
          ...powershell(
            '[Console]::InputEncoding = [System.Text.Encoding]::UTF8\n' +
              'Set-Clipboard -Value ([Console]::In.ReadToEnd())',
          ),
          input: text,
        },
      ];
    case 'linux': {
      const out: Command[] = [];
      // Plain text, always: left to guess, wl-copy offers text starting `<!DOCTYPE html` as HTML.
      if (env.WAYLAND_DISPLAY)
        out.push({ cmd: 'wl-copy', args: ['--type', 'text/plain;charset=utf-8'], input: text });
      if (env.DISPLAY)
        out.push(
          { cmd: 'xclip', args: ['-selection', 'clipboard', '-in'], input: text },
          { cmd: 'xsel', args: ['--clipboard', '--input'], input: text },
        );
      return out;
    }
  }
}

// --- volume ------------------------------------------------------------------------------------

/**
 * Windows has no volume command: the Core Audio endpoint through a small C# type compiled by
 * PowerShell (IAudioEndpointVolume on the default render device).
 */
const WINDOWS_AUDIO = `Add-Type -Language CSharp -TypeDefinition @'
using System;
using System.Runtime.InteropServices;
[Guid("5CDF2C82-841E-4546-9722-0CF74078229A"), InterfaceType(ComInterfaceType.InterfaceIsIUnknown)]
interface IAudioEndpointVolume {
  int f(); int g(); int h(); int i();
  int SetMasterVolumeLevelScalar(float level, Guid context);
  int j();
  int GetMasterVolumeLevelScalar(out float level);
  int k(); int l(); int m(); int n();
  int SetMute([MarshalAs(UnmanagedType.Bool)] bool mute, Guid context);
  int GetMute(out bool mute);
}
[Guid("D666063F-1587-4E43-81F1-B948E807363F"), InterfaceType(ComInterfaceType.InterfaceIsIUnknown)]
interface IMMDevice {
  int Activate(ref Guid id, int context, IntPtr parameters, [MarshalAs(UnmanagedType.IUnknown)] out object endpoint);
}
[Guid("A95664D2-9614-4F35-A746-DE8DB63617E6"), InterfaceType(ComInterfaceType.InterfaceIsIUnknown)]
interface IMMDeviceEnumerator {
  int f();
  int GetDefaultAudioEndpoint(int flow, int role, out IMMDevice device);
}
[ComImport, Guid("BCDE0395-E52F-467C-8E3D-C4579291692E")] class MMDeviceEnumerator { }
public static class AdventAudio {
  static IAudioEndpointVolume Endpoint() {
    var devices = (IMMDeviceEnumerator)(new MMDeviceEnumerator());
    IMMDevice device;
    Marshal.ThrowExceptionForHR(devices.GetDefaultAudioEndpoint(0, 1, out device));
    Guid iid = typeof(IAudioEndpointVolume).GUID;
    object endpoint;
    Marshal.ThrowExceptionForHR(device.Activate(ref iid, 23, IntPtr.Zero, out endpoint));
    return (IAudioEndpointVolume)endpoint;
  }
  public static string Get() {
    var e = Endpoint(); float level; bool mute;
    Marshal.ThrowExceptionForHR(e.GetMasterVolumeLevelScalar(out level));
    Marshal.ThrowExceptionForHR(e.GetMute(out mute));
    return ((int)Math.Round(level * 100)).ToString() + " " + (mute ? "muted" : "on");
  }
  public static void SetLevel(int percent) {
    Marshal.ThrowExceptionForHR(Endpoint().SetMasterVolumeLevelScalar(percent / 100f, Guid.Empty));
  }
  public static void SetMute(bool mute) {
    Marshal.ThrowExceptionForHR(Endpoint().SetMute(mute, Guid.Empty));
  }
}
'@
`;

/** Reads the output volume; the output is parsed by parseVolume(platform, …). */
export function getVolumeCommands(platform: Platform): Command[] {
  switch (platform) {
    case 'linux':
      // PulseAudio and PipeWire (pipewire-pulse) both answer pactl; ALSA's amixer otherwise.
      return [
        { cmd: 'pactl', args: ['get-sink-volume', '@DEFAULT_SINK@'] },
        { cmd: 'amixer', args: ['get', 'Master'] },
      ];
    case 'darwin':
      return [{ cmd: 'osascript', args: ['-e', 'get volume settings'] }];
    case 'win32':
      return [powershell(`${WINDOWS_AUDIO}[AdventAudio]::Get()`)];
  }
}

/** pactl reports mute separately. */
export const PACTL_GET_MUTE: Command = {
  cmd: 'pactl',
  args: ['get-sink-mute', '@DEFAULT_SINK@'],
};

export interface VolumeChange {
  /** 0–100, an integer already checked. */
  level?: number;
  mute?: boolean;
}

/** One sequence of commands per tool, alternatives in order (pactl, then amixer). */
export function setVolumeCommands(platform: Platform, change: VolumeChange): Command[][] {
  const level = change.level === undefined ? undefined : checkedLevel(change.level);
  switch (platform) {
    case 'linux': {
      const pactl: Command[] = [];
      const amixer: Command[] = [];
      if (level !== undefined) {
        pactl.push({ cmd: 'pactl', args: ['set-sink-volume', '@DEFAULT_SINK@', `${level}%`] });
        amixer.push({ cmd: 'amixer', args: ['set', 'Master', `${level}%`] });
      }
      if (change.mute !== undefined) {
        pactl.push({
          cmd: 'pactl',
          args: ['set-sink-mute', '@DEFAULT_SINK@', change.mute ? '1' : '0'],
        });
        amixer.push({ cmd: 'amixer', args: ['set', 'Master', change.mute ? 'mute' : 'unmute'] });
      }
      return [pactl, amixer];
    }
    case 'darwin': {
      const lines: string[] = [];
      if (level !== undefined) lines.push(`set volume output volume ${level}`);
      if (change.mute !== undefined)
        lines.push(`set volume output muted ${change.mute ? 'true' : 'false'}`);
      return [[{ cmd: 'osascript', args: lines.flatMap((l) => ['-e', l]) }]];
    }
    case 'win32': {
      let script = WINDOWS_AUDIO;
      if (level !== undefined) script += `[AdventAudio]::SetLevel(${level})\n`;
      if (change.mute !== undefined)
        script += `[AdventAudio]::SetMute($${change.mute ? 'true' : 'false'})\n`;
      return [[powershell(script)]];
    }
  }
}

function checkedLevel(level: number): number {
  // The schema has already said so; this keeps a number from ever becoming script text otherwise.
  if (!Number.isInteger(level) || level < 0 || level > 100)
    throw new RangeError(`volume level ${level} is not an integer from 0 to 100`);
  return level;
}

export interface VolumeState {
  level: number;
  muted: boolean;
}

/** Parse what getVolumeCommands printed; undefined when it cannot be read. */
export function parseVolume(cmd: string, stdout: string): Partial<VolumeState> | undefined {
  switch (cmd) {
    case 'pactl': {
      // "Volume: front-left: 26214 /  40% / -23.88 dB,   front-right: …"
      const m = /(\d{1,3})%/.exec(stdout);
      return m ? { level: Number(m[1]) } : undefined;
    }
    case 'amixer': {
      // "  Front Left: Playback 26 [40%] [-23.00dB] [on]"
      const m = /\[(\d{1,3})%\](?:.*?\[(on|off)\])?/.exec(stdout);
      return m ? { level: Number(m[1]), ...(m[2] ? { muted: m[2] === 'off' } : {}) } : undefined;
    }
    case 'osascript': {
      // "output volume:50, input volume:75, alert volume:100, output muted:false"
      const level = /output volume:(\d{1,3})/.exec(stdout);
      const muted = /output muted:(true|false)/.exec(stdout);
      if (!level) return undefined;
      return { level: Number(level[1]), ...(muted ? { muted: muted[1] === 'true' } : {}) };
    }
    case 'powershell.exe': {
      const m = /^(\d{1,3}) (muted|on)\s*$/m.exec(stdout);
      return m ? { level: Number(m[1]), muted: m[2] === 'muted' } : undefined;
    }
    default:
      return undefined;
  }
}

/** "Mute: yes" from pactl get-sink-mute. */
export function parsePactlMute(stdout: string): boolean | undefined {
  const m = /Mute:\s*(yes|no)/i.exec(stdout);
  return m ? m[1]!.toLowerCase() === 'yes' : undefined;
}

// --- battery -----------------------------------------------------------------------------------

/** Linux reads /sys directly; these are the other two. */
export function batteryCommand(platform: Platform): Command | undefined {
  switch (platform) {
    case 'linux':
      return undefined;
    case 'darwin':
      return { cmd: 'pmset', args: ['-g', 'batt'] };
    case 'win32':
      return powershell(
        'Get-CimInstance -ClassName Win32_Battery | Select-Object -First 1 ' +
          'EstimatedChargeRemaining,BatteryStatus | ConvertTo-Json -Compress',
      );
  }
}

export interface BatteryState {
  present: boolean;
  percent?: number;
  charging?: boolean;
}

export function parseBattery(platform: Platform, stdout: string): BatteryState {
  if (platform === 'darwin') {
    // " -InternalBattery-0 (id=4653155)\t85%; discharging; 4:12 remaining present: true"
    const m = /InternalBattery[^\t]*\t\s*(\d{1,3})%;\s*([a-zA-Z ]+);/.exec(stdout);
    if (!m) return { present: false };
    const state = m[2]!.trim().toLowerCase();
    return {
      present: true,
      percent: Number(m[1]),
      charging: state === 'charging' || state === 'charged' || state === 'finishing charge',
    };
  }
  if (platform === 'win32') {
    const text = stdout.trim();
    if (!text) return { present: false };
    try {
      const json = JSON.parse(text) as {
        EstimatedChargeRemaining?: unknown;
        BatteryStatus?: unknown;
      };
      const percent = json.EstimatedChargeRemaining;
      const status = json.BatteryStatus;
      // Win32_Battery.BatteryStatus: 1 discharging; 2 on AC; 3 full; 6–9 charging.
      return {
        present: true,
        ...(typeof percent === 'number' ? { percent } : {}),
        ...(typeof status === 'number'
          ? { charging: status !== 1 && status !== 4 && status !== 5 }
          : {}),
      };
    } catch {
      return { present: false };
    }
  }
  return { present: false };
}
