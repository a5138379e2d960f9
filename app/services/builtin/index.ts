import type { Service } from '../service.js';
import { createFileService } from './create_file.js';
import { getCurrentTimeService } from './get_current_time.js';

/** The services every install has, in the order the UI lists them. */
export function builtinServices(): Service[] {
  return [getCurrentTimeService, createFileService];
}
