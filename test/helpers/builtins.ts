/**
 * The built-in services every agent offers servers, in registry order, so the wire and host tests
 * say "every built-in" instead of spelling out a list that grows with each new service.
 */
import { builtinServices } from '../../app/services/builtin/index.js';
import type { Desktop } from '../../app/services/platform/desktop.js';
import type { Reminders } from '../../app/services/reminders/reminders.js';

// Only the names are read: the factories keep their dependencies for later calls.
const services = builtinServices({ reminders: {} as Reminders, desktop: {} as Desktop });

/** Every built-in in registry order, user-only ones included (what the registry holds at start). */
export const ALL_BUILTIN_NAMES: readonly string[] = services.map((s) => s.name);

/** The built-ins a server may see, in registry order. */
export const BUILTIN_NAMES: readonly string[] = services
  .filter((s) => s.userOnly !== true)
  .map((s) => s.name);

/** The built-ins without the ones a test switched off, in registry order. */
export function builtinsWithout(...off: string[]): string[] {
  return BUILTIN_NAMES.filter((n) => !off.includes(n));
}
