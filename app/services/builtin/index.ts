import type { Desktop } from '../platform/desktop.js';
import type { Reminders } from '../reminders/reminders.js';
import type { Service } from '../service.js';
import { cancelReminderService } from './cancel_reminder.js';
import { createFileService } from './create_file.js';
import { getCurrentTimeService } from './get_current_time.js';
import { getFileInfoService } from './get_file_info.js';
import { listDirectoryService } from './list_directory.js';
import { readFileService } from './read_file.js';
import { searchFilesService } from './search_files.js';

import { getDeviceStatusService } from './get_device_status.js';
import { listAppsService } from './list_apps.js';
import { listRemindersService } from './list_reminders.js';
import { openAppService } from './open_app.js';
import { openUrlService } from './open_url.js';
import { readClipboardService } from './read_clipboard.js';
import { setReminderService } from './set_reminder.js';
import { setTimerService } from './set_timer.js';
import { setVolumeService } from './set_volume.js';
import { takeScreenshotService } from './take_screenshot.js';
import { writeClipboardService } from './write_clipboard.js';

/** What the built-in services act on: the reminder list and this computer. */
export interface BuiltinDeps {
  reminders: Reminders;
  desktop: Desktop;
}

/**
 * The services every install has, in the order the UI lists them (grouped by `group`). The agent
 * always passes `deps`; without them (tests of the gate alone) only the services that need
 * nothing are there.
 */
export function builtinServices(deps?: BuiltinDeps): Service[] {
  const files = [
    createFileService,
    listDirectoryService,
    readFileService,
    searchFilesService,
    getFileInfoService,
  ];
  if (!deps) return [getCurrentTimeService, ...files] as Service[];
  const { reminders, desktop } = deps;
  return [
    getCurrentTimeService,
    setTimerService(reminders),
    setReminderService(reminders),
    listRemindersService(reminders),
    cancelReminderService(reminders),
    ...files,
    openUrlService(desktop),
    listAppsService(desktop),
    openAppService(desktop),
    readClipboardService(desktop),
    writeClipboardService(desktop),
    getDeviceStatusService(desktop),
    setVolumeService(desktop),
    takeScreenshotService(desktop),
  ] as Service[];
}
