import { afterEach, describe, expect, it } from 'vitest';
import { type Clock, systemClock } from '../../../app/clock.js';
import { printReminders } from '../../../main/headless/reminders.js';
import { until } from '../../helpers/wait.js';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { CoreApi } from '../../../app/api.js';
import { MemorySecretStore } from '../../../app/settings/secrets.js';

let dir = '';
const apis: CoreApi[] = [];
afterEach(async () => {
  for (const a of apis.splice(0)) await a.close();
  if (dir) await rm(dir, { recursive: true, force: true });
  dir = '';
});

async function openApi(clock: Clock = systemClock): Promise<CoreApi> {
  dir ||= await mkdtemp(path.join(os.tmpdir(), 'advent-term-reminders-'));
  const api = await CoreApi.open({
    dataDir: path.join(dir, 'data'),
    defaultFilesRoot: path.join(dir, 'files'),
    secrets: new MemorySecretStore(),
    version: '1.0.0',
    host: 'terminal',
    clock,
  });
  apis.push(api);
  return api;
}

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
    const api = await openApi();
    const out = output();
    await printReminders(api, out);
    await api.agent.reminders.add({
      kind: 'timer',
      text: 'stretch',
      dueAt: Date.now() + 30,
      connection: { id: 'demo', name: 'Demo server' },
    });
    await until(() => out.lines.length > 0, 'the reminder line');
    expect(out.lines[0]).toMatch(/^⏰ timer: stretch \(due .+, set by Demo server\)$/);
  });

  it('at start, one warning per reminder missed while no agent ran', async () => {
    const first = await openApi();
    await first.agent.reminders.add({
      kind: 'reminder',
      text: 'call mom',
      dueAt: Date.now() + 60_000,
      connection: { id: 'local', name: 'local' },
    });
    await first.close();
    apis.splice(apis.indexOf(first), 1);
    const later: Clock = { ...systemClock, now: () => Date.now() + 120_000 };
    const api = await openApi(later);
    const out = output();
    await printReminders(api, out);
    expect(out.lines).toHaveLength(1);
    expect(out.lines[0]).toMatch(
      /^warn: ⏰ missed while the agent was not running — reminder: call mom \(due .+, set by local\)$/,
    );
  });
});
