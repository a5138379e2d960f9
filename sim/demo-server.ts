/**
 * The demo server a host injects into the core (`CoreApiOptions.demo`): the Advent simulator on a
 * random loopback port, recording nothing. The core never imports sim/ (DESIGN §2).
 *
 * It waits for a call's result as long as the agent's prompt can wait, plus a margin for the run
 * (the core says how long, and the setting may change while it runs), and speaks in the app's
 * language when a call did not work.
 */
import type { DemoFactory } from '../app/api.js';
import type { Clock } from '../app/clock.js';
import { AdventSim } from './advent/server.js';
import { coveringPrompt } from './kit/deadline.js';

/** A demo factory; tests inject the clock the simulator's call deadlines run on. */
export function demoServerFactory(inject: { clock?: Clock } = {}): DemoFactory {
  return ({ promptTimeoutMs, language }) =>
    AdventSim.start({
      record: false,
      callTimeoutMs: coveringPrompt(promptTimeoutMs),
      language,
      ...(inject.clock ? { clock: inject.clock } : {}),
    });
}

export const startDemoServer: DemoFactory = demoServerFactory();
