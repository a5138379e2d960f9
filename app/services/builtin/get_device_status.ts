import type { Desktop } from '../platform/desktop.js';
import { type DeviceStatus, deviceStatus } from '../platform/device.js';
import type { Service } from '../service.js';

/**
 * How long one reading answers every call. It runs unasked (a read) and starts OS commands (on
 * Windows two PowerShells, one compiling C#): a server asking in a loop, 64 calls at a time, must
 * not start a process for each.
 */
export const DEVICE_STATUS_FRESH_MS = 2000;

export function getDeviceStatusService(desktop: Desktop): Service<Record<string, never>> {
  let shared: { at: number; reading: Promise<DeviceStatus> } | undefined;
  return {
    name: 'get_device_status',
    title: 'Device status',
    summary: 'Tells the operating system, battery, volume, network, time zone and language.',
    group: 'system',
    description:
      "Read the state of the user's computer: operating system, battery (percent, charging), " +
      'output volume (0–100, muted), whether the network is up, time zone and locale. A fact this ' +
      'computer cannot report says so.',
    parameters: { type: 'object', properties: {}, additionalProperties: false },
    risk: 'read',
    timeoutMs: 10_000,
    preview() {
      return {
        summary:
          "Read this computer's status (system, battery, volume, network, time zone, language)",
        resolvedPaths: [],
      };
    },
    run(_params, ctx) {
      const now = ctx.clock.now();
      if (!shared || now - shared.at > DEVICE_STATUS_FRESH_MS) {
        // Not this call's signal: other calls wait on the same reading (its commands have their
        // own deadlines, and the gate's timeout still ends this call).
        const reading = deviceStatus(desktop);
        shared = { at: now, reading };
        reading.catch(() => {
          if (shared?.reading === reading) shared = undefined;
        });
      }
      return shared.reading;
    },
  };
}
