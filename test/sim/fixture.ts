import { afterEach } from 'vitest';
import { AdventSim, type AdventSimOptions } from '../../sim/advent/server.js';
import { RawClient } from './raw-client.js';

/** Starts simulators and clients that are all closed after each test, pass or fail. */
export function useSim(): {
  start(options?: AdventSimOptions): Promise<AdventSim>;
  client(sim: AdventSim, options?: { maxFrameBytes?: number }): Promise<RawClient>;
} {
  const sims: AdventSim[] = [];
  const clients: RawClient[] = [];
  afterEach(async () => {
    for (const c of clients.splice(0)) c.destroy();
    await Promise.all(sims.splice(0).map((s) => s.stop()));
  });
  return {
    async start(options = {}) {
      const sim = await AdventSim.start(options);
      sims.push(sim);
      return sim;
    },
    async client(sim, options) {
      const c = await RawClient.connect(sim.port, options);
      clients.push(c);
      return c;
    },
  };
}
