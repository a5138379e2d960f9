import type { Service } from '../service.js';
import { createFileService } from './create_file.js';
import { getCurrentTimeService } from './get_current_time.js';
import { getFileInfoService } from './get_file_info.js';
import { listDirectoryService } from './list_directory.js';
import { readFileService } from './read_file.js';
import { searchFilesService } from './search_files.js';

/** The services every install has, in the order the UI lists them. */
export function builtinServices(): Service[] {
  return [
    getCurrentTimeService,
    createFileService,
    listDirectoryService,
    readFileService,
    searchFilesService,
    getFileInfoService,
  ];
}
