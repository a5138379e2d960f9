import { afterEach, describe, expect, it } from 'vitest';
import { type Clock, systemClock } from '../../../app/clock.js';
import { printReminders } from '../../../main/headless/reminders.js';
import { type TempAgent, openTempAgent } from '../../helpers/ws-agent.js';
import { until } from '../../helpers/wait.js';
import path from 'node:path';
import { Agent } from '../../../app/agent.js';
import { MemorySecretStore } from '../../../app/settings/secrets.js';

let temp: TempAgent | undefined;
const extra: Agent[] = [];
afterEach(async () => {
  for (const a of extra.splice(0)) await a.close();
  await temp?.close();
  temp = undefined;
});

function output() {
  const lines: string[] = [];
  return {
    lines,
    info: (text: string) => lines.push(text),
    notice: (level: string, message: string) => lines.push(`${level}: ${message}`),
  };
}

describe('the terminal prints reminders', () => {
  it('one line when a reminder rings, naming it and who set it', async () => {
    temp = await openTempAgent('advent-term-reminders-');
    const out = output();
    printReminders(temp.agent, out);
    await temp.agent.reminders.add({
      kind: 'timer',
      text: 'stretch',
      dueAt: Date.now() + 30,
      connection: { id: 'demo', name: 'Demo server' },
    });
    await until(() => out.lines.length > 0, 'the reminder line');
    expect(out.lines[0]).toMatch(/^⏰ timer: stretch \(due .+, set by Demo server\)$/);
  });

  it('at start, one warning per reminder missed while no agent ran', async () => {
    temp = await openTempAgent('advent-term-missed-');
    const dataDir = path.join(temp.dir, 'data');
    await temp.agent.reminders.add({
      kind: 'reminder',
      text: 'call mom',
      dueAt: Date.now() + 60_000,
      connection: { id: 'local', name: 'local' },
    });
    await temp.agent.close();
    const later: Clock = { ...systemClock, now: () => Date.now() + 120_000 };
    const agent = await Agent.open({
      dataDir,
      defaultFilesRoot: temp.filesRoot,
      secrets: new MemorySecretStore(),
      clock: later,
    });
    extra.push(agent);
    const out = output();
    printReminders(agent, out);
    expect(out.lines).toHaveLength(1);
    expect(out.lines[0]).toMatch(
      /^warn: ⏰ missed while the agent was not running — reminder: call mom \(due .+, set by local\)$/,
    );
  });
});
