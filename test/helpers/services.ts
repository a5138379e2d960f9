/** Service fixtures more than one test file needs. */
import type { Service } from '../../app/services/service.js';

/**
 * A user-only system service: listed only to servers that ask for user tools (XiaoZhi
 * `withUserTools`), and asked about on every call.
 */
export const rebootService: Service = {
  name: 'reboot_device',
  title: 'Reboot',
  description: 'Restart the device (the user starts it).',
  parameters: { type: 'object', properties: {} },
  risk: 'system',
  userOnly: true,
  timeoutMs: 1000,
  run: async () => 'rebooting',
};
