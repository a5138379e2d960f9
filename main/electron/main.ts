/** Electron's entry point (package.json "main": dist/main/electron/main.js). */
import { app } from 'electron';
import { failStart, startHost } from './host.js';
import { hostPaths } from './paths.js';

startHost(hostPaths(app.isPackaged)).catch(failStart);
