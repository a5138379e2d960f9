/**
 * The XiaoZhi device tests' harness (device.test.ts, device-turns.test.ts): a real Agent (gate,
 * audit) + a XiaozhiSession + the simulated server. The pair opened last is closed by
 * `closeOpenPair`, which each test file runs in `afterEach`.
 */
import type { Agent, AgentOptions } from '../../../app/agent.js';
import type { ConnectionState, RegistrationState } from '../../../app/contract/connection.js';
import { XiaozhiSim, type XiaozhiSimOptions } from '../../../sim/xiaozhi/server.js';
import { XiaozhiSession, type XiaozhiSessionOptions } from '../../../app/wire/xiaozhi/session.js';
import { FAST_WS, openTempAgent, recordEvents, startSession } from '../../helpers/ws-agent.js';

export const DEVICE_ID = 'aa:bb:cc:dd:ee:01';
export const CLIENT_ID = '123e4567-e89b-42d3-a456-426614174000';

export interface Pair {
  sim: XiaozhiSim;
  agent: Agent;
  session: XiaozhiSession;
  filesRoot: string;
  states: ConnectionState[];
  registrations: RegistrationState[];
  logs: string[];
  close(): Promise<void>;
}

let pair: Pair | undefined;

/** Close the pair opened last, if any (for `afterEach`). */
export async function closeOpenPair(): Promise<void> {
  await pair?.close();
  pair = undefined;
}

export async function open(
  opts: {
    sim?: XiaozhiSimOptions;
    session?: Partial<XiaozhiSessionOptions>;
    agent?: Partial<AgentOptions>;
    waitReady?: boolean;
  } = {},
): Promise<Pair> {
  const sim = await XiaozhiSim.start({ demo: false, ...opts.sim });
  const temp = await openTempAgent('xiaozhi-device-', opts.agent);
  const { agent, filesRoot } = temp;
  const session = new XiaozhiSession({
    id: 'p-xiaozhi',
    name: 'XiaoZhi test',
    url: sim.url,
    deviceId: DEVICE_ID,
    clientId: CLIENT_ID,
    gate: agent.gate,
    tools: () => agent.toolEntries(),
    ...opts.session,
    timing: { ...FAST_WS, ...opts.session?.timing },
  });
  const states = recordEvents(session, 'state');
  const registrations = recordEvents(session, 'registration');
  const logs: string[] = [];
  session.events.on('log', (l) => logs.push(`${l.level}: ${l.message}`));
  await startSession(session, opts.waitReady !== false);
  const p: Pair = {
    sim,
    agent,
    session,
    filesRoot,
    states,
    registrations,
    logs,
    async close() {
      await session.stop();
      await temp.close();
      await sim.stop();
    },
  };
  pair = p;
  return p;
}
