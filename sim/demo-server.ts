/**
 * The demo server a host injects into the core (`CoreApiOptions.demo`): the Advent simulator on a
 * random loopback port, recording nothing. The core never imports sim/ (DESIGN §2).
 */
import type { DemoFactory } from '../app/api.js';
import { AdventSim } from './advent/server.js';

export const startDemoServer: DemoFactory = () => AdventSim.start({ record: false });
