import type { Desktop } from '../platform/desktop.js';
import { deviceStatus } from '../platform/device.js';
import type { Service } from '../service.js';

export function getDeviceStatusService(desktop: Desktop): Service<Record<string, never>> {
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
      return deviceStatus(desktop, ctx.signal);
    },
  };
}
