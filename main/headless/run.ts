/**
 * `advent-agent run`: hold sessions with one or more servers (Advent, XiaoZhi device, XiaoZhi MCP
 * endpoint, robot) from a terminal, all behind the same gate. stdin lines are text turns for the
 * first server that chats (or /commands); replies and tool calls are printed as they stream.
 */
import path from 'node:path';
import { createInterface } from 'node:readline';
import { Agent } from '../../app/agent.js';
import type { PendingPrompt, PromptAnswer } from '../../app/contract/policy.js';
import { FileSecretStore } from '../../app/settings/secrets.js';
import { type RunArgs, overridesOf } from './args.js';
import { type FlagConnection, flagConnections } from './flag-profiles.js';
import type { LiveSession } from '../../app/wire/session.js';
import type { CliIo } from './io.js';
import { Printer } from './printer.js';
import { DialectSet } from '../../app/wire/dialect.js';
import { DIALECTS } from '../../app/wire/dialects.js';
import { readMcpConfigs } from './mcp-config.js';
import { printReminders } from './reminders.js';

const ANSWERS: Record<string, PromptAnswer> = { y: 'once', s: 'session', a: 'always', n: 'deny' };

export async function runCommand(args: RunArgs, io: CliIo): Promise<number> {
  const dataDir = path.resolve(args.dataDir ?? io.dataDir());
  const dialects = io.dialects ?? DIALECTS;
  let agent: Agent;
  let targets: FlagConnection[];
  try {
    targets = await flagConnections(args.servers, new DialectSet(dialects), dataDir);
    const mcp = await readMcpConfigs(args.mcpConfigs);
    for (const warning of mcp.warnings) io.stderr.write(`advent-agent: ${warning}\n`);
    const secrets = await FileSecretStore.open(path.join(dataDir, 'secrets.json'));
    agent = await Agent.open({
      mcp: { runOnly: mcp.servers },
      dataDir,
      defaultFilesRoot: io.filesRoot(),
      secrets,
      overrides: overridesOf(args),
      timing: io.timing,
      wsTiming: io.wsTiming,
      version: io.version,
      dialects,
    });
  } catch (err) {
    io.stderr.write(`advent-agent: ${(err as Error).message}\n`);
    return 2;
  }

  const out = new Printer(io.stdout, io.stderr);
  const interactive = !args.noChat && io.stdin.isTTY === true;
  const several = targets.length > 1;
  // Set once the sessions exist (below); events before that only concern connecting.
  const chatTarget: { id?: string; session?: LiveSession } = {};
  let exitCode = 0;
  let finish!: () => void;
  const finished = new Promise<void>((resolve) => (finish = resolve));

  // One turn at a time: a line waits for the login and for the previous reply (a newer turn would
  // cut the older one off). At end of input the session stays until every line is answered, so
  // `echo "what time is it" | advent-agent run …` works.
  const waiting: string[] = [];
  let current: string | undefined;
  let turnTimer: ReturnType<typeof setTimeout> | undefined;
  let inputEnded = false;
  let drainTimer: ReturnType<typeof setTimeout> | undefined;
  const maybeDone = (): void => {
    if (inputEnded && waiting.length === 0 && current === undefined) finish();
  };
  const pump = (): void => {
    const session = chatTarget.session;
    // The first line waits for the services to be registered too: a question asked before the
    // server knows our services would be answered without them.
    const registering = session?.registrationState.state === 'registering';
    while (
      current === undefined &&
      waiting.length &&
      session?.state.status === 'ready' &&
      !registering
    ) {
      const sent = session.sendText(waiting.shift()!);
      if (!sent.ok) {
        out.notice('warn', `not sent: ${sent.message}`);
        continue;
      }
      current = sent.taskId;
      // A server that never finishes a reply must not block the next line forever.
      turnTimer = setTimeout(() => session?.interrupt(), io.turnTimeoutMs ?? 60_000);
    }
    maybeDone();
  };
  const turnEnded = (taskId: string): void => {
    if (taskId !== current) return;
    current = undefined;
    clearTimeout(turnTimer);
    pump();
  };

  // A refused login or unusable settings end that connection for good; the run ends (exit 1) when
  // no connection is left.
  const gone = new Set<string>();
  agent.events.on('connection', ({ id, name, state }) => {
    out.state(name, state);
    if (state.status === 'ready' && id === chatTarget.id) pump();
    if (state.status === 'offline' && state.reason !== 'stopped') {
      gone.add(id);
      if (gone.size === targets.length) {
        exitCode = 1;
        finish();
      }
    }
  });
  agent.events.on('registration', ({ id, name, registration }) => {
    out.registration(registration, several ? name : undefined);
    if (id === chatTarget.id && registration.state !== 'registering') pump();
  });
  agent.events.on('replyDelta', ({ taskId, text }) => out.replyDelta(taskId, text));
  agent.events.on('replyDone', ({ taskId }) => {
    out.replyDone(taskId);
    turnEnded(taskId);
  });
  agent.events.on('replyInterrupted', ({ taskId }) => {
    out.replyDone(taskId, true);
    turnEnded(taskId);
  });
  agent.events.on('thought', ({ text }) => out.info(`(thinking) ${text}`));
  agent.events.on('transcript', ({ text }) => out.info(`(heard) ${text}`));
  agent.events.on('mood', ({ emoji }) => out.mood(emoji));
  agent.events.on('audio', ({ taskId, data }) => out.audio(taskId, data.length));
  agent.events.on('status', ({ name, text }) => out.info(`${several ? name : 'server'}: ${text}`));
  agent.events.on('callFinished', (call) => out.call(call));
  agent.events.on('notice', ({ level, message }) => out.notice(level, message));
  // An MCP server's state, once per change of status (not per re-list).
  const mcpShown = new Map<string, string>();
  agent.mcp.events.on('server', ({ id, name, state }) => {
    const line =
      state.status === 'ready'
        ? `MCP server ${name}: ready, ${state.tools} tool${state.tools === 1 ? '' : 's'}`
        : state.status === 'failed'
          ? `MCP server ${name}: failed: ${state.reason}`
          : state.status === 'restarting'
            ? `MCP server ${name}: ${state.reason}; restarting`
            : undefined;
    if (line === undefined || mcpShown.get(id) === line) return;
    mcpShown.set(id, line);
    if (state.status === 'ready') out.info(line);
    else out.notice('warn', line);
  });
  printReminders(agent, out);

  // Permission prompts: asked on the terminal when a person is there, one at a time.
  const queue: PendingPrompt[] = [];
  let detachTerminal = (): void => {};
  if (interactive) {
    detachTerminal = agent.broker.attach({ name: 'terminal' });
    agent.events.on('prompt', (p) => {
      queue.push(p);
      if (queue.length === 1) out.prompt(p, agent.clock());
    });
    agent.events.on('promptResolved', ({ id, resolution }) => {
      const at = queue.findIndex((p) => p.id === id);
      if (at < 0) return;
      const [done] = queue.splice(at, 1);
      if (resolution === 'timeout')
        out.notice('warn', `no answer for ${done!.service} in time: denied`);
      if (resolution === 'cancelled')
        out.notice('warn', `the question about ${done!.service} was withdrawn`);
      if (at === 0 && queue[0]) out.prompt(queue[0], agent.clock());
    });
  } else {
    agent.events.on('callFinished', (call) => {
      if (call.code === 'no_prompt_ui') {
        out.notice(
          'warn',
          `${call.service} needs your permission, but nobody can answer here (stdin is not a terminal), so it was denied. ` +
            `Run in a terminal, or pass --allow ${call.service} to let it run without asking.`,
        );
      }
    });
  }

  for (const t of targets) agent.connect(t.profile, () => t.secret);
  // Lines go to the first connection that chats (the targets come Advent, XiaoZhi, endpoint, robot).
  const chat = targets
    .map((t) => ({ id: t.profile.id, session: agent.session(t.profile.id)! }))
    .find((c) => c.session.capabilities.chat);
  chatTarget.id = chat?.id;
  chatTarget.session = chat?.session;
  const session = chat?.session;
  if (!session && !args.noChat)
    out.info('(none of these servers chats: typed lines are not sent; /commands still work)');

  const unsubscribeSignal = io.onSignal(() => finish());
  let lines: ReturnType<typeof createInterface> | undefined;
  if (!args.noChat) {
    lines = createInterface({ input: io.stdin, terminal: false });
    lines.on('line', (raw) => {
      const line = raw.trim();
      if (queue[0]) {
        const answer = ANSWERS[line.toLowerCase()];
        if (answer) agent.answerPrompt(queue[0].id, answer);
        else out.info('answer y (once), s (this session), a (always) or n (deny)');
        return;
      }
      if (!line) return;
      if (line.startsWith('/')) {
        void command(line, agent, out).then((quit) => quit && finish());
        return;
      }
      if (!session) {
        out.notice('warn', 'not sent: none of the connected servers has a chat');
        return;
      }
      waiting.push(line);
      if (session.state.status !== 'ready')
        out.info('(not connected yet: it will be sent once connected)');
      pump();
    });
    lines.on('close', () => {
      // Nobody is left to answer questions once input has ended.
      detachTerminal();
      inputEnded = true;
      drainTimer = setTimeout(() => {
        if (waiting.length || current) out.notice('warn', 'gave up waiting for the last reply');
        finish();
      }, io.drainTimeoutMs ?? 30_000);
      maybeDone();
    });
  }

  await finished;
  clearTimeout(drainTimer);
  clearTimeout(turnTimer);
  unsubscribeSignal();
  lines?.close();
  out.info('disconnecting…');
  await agent.close();
  out.info('bye');
  return exitCode;
}

/** Slash commands; resolves true for /quit. */
async function command(line: string, agent: Agent, out: Printer): Promise<boolean> {
  const [name, arg] = line.split(/\s+/, 2);
  try {
    switch (name) {
      case '/quit':
      case '/exit':
        return true;
      case '/services':
        out.services(agent.services());
        return false;
      case '/enable':
      case '/disable':
        if (!arg) {
          out.notice('warn', `usage: ${name} NAME`);
          return false;
        }
        await agent.setServiceEnabled(arg, name === '/enable');
        out.info(`${arg} ${name === '/enable' ? 'enabled' : 'disabled'}; services re-registered`);
        return false;
      case '/audit': {
        const page = await agent.queryAudit({ limit: 10 });
        out.audit(page.records, page.total);
        return false;
      }
      case '/help':
        out.info('commands: /services, /enable NAME, /disable NAME, /audit, /quit');
        return false;
      default:
        out.notice('warn', `unknown command ${name}; try /help`);
        return false;
    }
  } catch (err) {
    out.notice('error', (err as Error).message);
    return false;
  }
}
