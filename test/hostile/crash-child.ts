/**
 * A child process for the crash tests: opens an Agent on a data folder (file secrets, so the
 * audit key survives restarts like the terminal host's), reports what the start found, then has a
 * hostile-ish caller create files through the gate, several at a time, until it is killed.
 *
 *   node --import tsx test/hostile/crash-child.ts <dataDir> <filesRoot> <round>
 *
 * Prints one JSON line on start: {"started":true,"interrupted":[callId…]} (the calls this start
 * recorded as interrupted), then one line per finished call.
 */
import path from 'node:path';
import { Agent } from '../../app/agent.js';
import { FileSecretStore } from '../../app/settings/secrets.js';

const [dataDir, filesRoot, round] = process.argv.slice(2) as [string, string, string];
const secrets = await FileSecretStore.open(path.join(dataDir, 'secrets.json'));
const agent = await Agent.open({
  dataDir,
  defaultFilesRoot: filesRoot,
  secrets,
  overrides: { filesRoots: [filesRoot], policies: { create_file: 'allow' } },
});
const interrupted = agent.interruptedAtStart.map((r) => ({
  callId: r.callId,
  intentSeq: r.intentSeq,
}));
process.stdout.write(
  `${JSON.stringify({ started: true, notices: agent.startupNotices, interrupted })}\n`,
);

const connection = { id: 'hostile', name: 'hostile' };
let n = 0;
async function worker(): Promise<void> {
  for (;;) {
    const k = n++;
    const callId = `r${round}-${k}`;
    const result = await agent.dispatch({
      connection,
      dialect: 'advent',
      callId,
      service: 'create_file',
      params: { filename: `${callId}.txt`, content: `call ${callId}\n`.repeat(8) },
    });
    process.stdout.write(`${JSON.stringify({ callId, ok: result.ok })}\n`);
  }
}
await Promise.all([worker(), worker(), worker(), worker()]);
