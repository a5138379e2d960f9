/**
 * `advent-agent run`: hold sessions with one or more servers (Advent, XiaoZhi device, XiaoZhi MCP
 * endpoint, robot) from a terminal, all behind the same gate. Like every host it goes through
 * CoreApi: the flags' servers are saved as profiles for this run only, stdin lines are text turns
 * for the first server that chats (or /commands), and what it prints comes from the contract's
 * events: chat items as they grow, connection views, permission prompts.
 */
import { createInterface } from 'node:readline';
import type { CoreApi } from '../../app/api.js';
import type { ChatItem } from '../../app/contract/chat.js';
import type { ConnectionView } from '../../app/contract/commands.js';
import type { PendingPrompt, PromptAnswer } from '../../app/contract/policy.js';
import { checkCommand } from '../../app/contract/validate.js';
import type { RunArgs } from './args.js';
import { CliCore } from './cli-core.js';
import type { CliIo } from './io.js';
import { Printer } from './printer.js';
import { oneLine } from './terminal-text.js';
import { printMcpServers } from './mcp-lines.js';
import { printReminders } from './reminders.js';

const ANSWERS: Record<string, PromptAnswer> = { y: 'once', s: 'session', a: 'always', n: 'deny' };
/**
 * A "yes" that comes this soon after a question is shown was typed for the one before it (the
 * window keeps its allow buttons inactive as long, PromptModal's ARM_DELAY_MS): a server that
 * withdraws a harmless question and asks another at once must not get the answer meant for the
 * first. "n" is always taken: denying the wrong question costs a retry, nothing more.
 */
export const PROMPT_ARM_MS = 600;
const SENDING = Symbol('sending');

/** User items (typed lines, what the server heard) remembered to tell a transcript from an echo. */
const USER_ITEMS_LIMIT = 64;

export async function runCommand(args: RunArgs, io: CliIo): Promise<number> {
  let core: CliCore;
  try {
    core = await CliCore.open(args, io, { host: 'terminal', autoConnect: false });
  } catch (err) {
    io.stderr.write(`advent-agent: ${oneLine((err as Error).message)}\n`);
    return 2;
  }
  const { api } = core;
  const out = new Printer(io.stdout, io.stderr);
  const interactive = !args.noChat && io.stdin.isTTY === true;
  const targets = new Set(core.targets.map((t) => t.profile.id));
  const several = targets.size > 1;
  const views = new Map<string, ConnectionView>();
  const nameOf = (id: string): string => views.get(id)?.profile.name ?? id;
  let exitCode = 0;
  let finishing = false;
  let finish!: () => void;
  const finished = new Promise<void>((resolve) => (finish = resolve)).then(() => {
    finishing = true;
  });

  // One turn at a time: a line waits for the login, the registration and the previous reply (a
  // newer turn would cut the older one off). At end of input the session stays until every line
  // is answered, so `echo "what time is it" | advent-agent run …` works.
  const waiting: string[] = [];
  /** The turn waiting for its reply: its task once sendText answered, SENDING until then. */
  let current: string | typeof SENDING | undefined;
  let turnTimer: ReturnType<typeof setTimeout> | undefined;
  let inputEnded = false;
  let drainTimer: ReturnType<typeof setTimeout> | undefined;
  const maybeDone = (): void => {
    if (inputEnded && waiting.length === 0 && current === undefined) finish();
  };
  const turnEnded = (): void => {
    current = undefined;
    clearTimeout(turnTimer);
    pump();
  };
  const chatReady = (): boolean => {
    const view = core.chatId === undefined ? undefined : views.get(core.chatId);
    // The first line waits for the services to be registered too: a question asked before the
    // server knows our services would be answered without them.
    return (
      view?.state.status === 'ready' &&
      view.registration !== undefined &&
      view.registration.state !== 'registering'
    );
  };
  /** User items this run typed itself (CoreApi records a typed line while sendText runs). */
  const userItems = new Map<string, string>();
  /** The mood last printed for each of the latest replies. */
  const replyMoods = new Map<string, string>();
  let sendingLine = false;
  const pump = (): void => {
    while (current === undefined && waiting.length && chatReady()) {
      const line = waiting.shift()!;
      const checked = checkCommand('sendText', [line]);
      if (!checked.ok) {
        out.notice('warn', `not sent: ${checked.message}`);
        continue;
      }
      current = SENDING;
      sendingLine = true;
      const sent = api.sendText(line);
      sendingLine = false;
      sent.then(
        ({ taskId }) => {
          if (current !== SENDING) return;
          current = taskId;
          // A server that never finishes a reply must not block the next line forever; the next
          // turn supersedes the unfinished one.
          turnTimer = setTimeout(() => {
            out.notice('warn', 'no complete reply in time; going on');
            turnEnded();
          }, io.turnTimeoutMs ?? 60_000);
        },
        (err: unknown) => {
          out.notice('warn', `not sent: ${(err as Error).message}`);
          turnEnded();
        },
      );
    }
    maybeDone();
  };

  // A refused login or unusable settings end that connection for good; the run ends (exit 1) when
  // no connection is left.
  const gone = new Set<string>();
  api.events.on('connection', (view) => {
    const id = view.profile.id;
    if (!targets.has(id)) return;
    views.set(id, view);
    out.connection(view, several ? view.profile.name : undefined);
    if (id === core.chatId) {
      // A dropped link ends the turn: its reply will not come, and a reply cut off before any
      // text leaves no chat item to say so.
      if (view.state.status !== 'ready' && typeof current === 'string') turnEnded();
      else pump();
    }
    if (view.state.status === 'offline' && view.state.reason !== 'stopped') {
      gone.add(id);
      if (gone.size === targets.size) {
        exitCode = 1;
        finish();
      }
    }
  });
  api.events.on('chat', (item) => showChat(item));
  api.events.on('audio', ({ connection, taskId, pcm }) =>
    out.audio(connection, taskId, pcm.byteLength),
  );

  function showChat(item: ChatItem): void {
    switch (item.kind) {
      case 'assistant':
        out.reply(item);
        // From the reply, not the mood event: after the words the server sent before it.
        if (item.mood !== undefined && replyMoods.get(item.id) !== item.mood) {
          replyMoods.delete(item.id);
          replyMoods.set(item.id, item.mood);
          if (replyMoods.size > USER_ITEMS_LIMIT)
            replyMoods.delete(replyMoods.keys().next().value!);
          out.mood(item.mood);
        }
        if (item.state !== 'streaming' && item.taskId === current) turnEnded();
        return;
      case 'tool':
        if (item.state !== 'done') return;
        out.call(item);
        if (!interactive && item.code === 'no_prompt_ui')
          out.notice(
            'warn',
            `${item.service} needs your permission, but nobody can answer here (stdin is not a terminal), so it was denied. ` +
              `Run in a terminal, or pass --allow ${item.service} to let it run without asking.`,
          );
        return;
      case 'notice':
        if (item.from === 'server')
          out.info(`${several ? nameOf(item.connection) : 'server'}: ${item.text}`);
        else out.notice(item.level, item.text);
        return;
      case 'user': {
        // A typed line is ours; later words on it, or on a voice turn, are what the server heard.
        const before = userItems.get(item.id);
        userItems.delete(item.id);
        userItems.set(item.id, item.text);
        if (userItems.size > USER_ITEMS_LIMIT) userItems.delete(userItems.keys().next().value!);
        if (!sendingLine && item.text && item.text !== before) out.info(`(heard) ${item.text}`);
        return;
      }
    }
  }

  // Permission prompts: asked on the terminal when a person is there, one at a time.
  const queue: PendingPrompt[] = [];
  const armMs = io.promptArmMs ?? PROMPT_ARM_MS;
  /** When the question at the head of the queue was shown. */
  let shownAt = 0;
  const show = (p: PendingPrompt): void => {
    shownAt = Date.now();
    out.prompt(p, shownAt);
  };
  let detachTerminal = (): void => {};
  if (interactive) {
    detachTerminal = api.attachUi('terminal');
    api.events.on('prompt', (p) => {
      queue.push(p);
      if (queue.length === 1) show(p);
    });
    api.events.on('promptResolved', ({ id, resolution }) => {
      const at = queue.findIndex((p) => p.id === id);
      if (at < 0) return;
      const [done] = queue.splice(at, 1);
      if (resolution === 'timeout')
        out.notice('warn', `no answer for ${done!.service} in time: denied`);
      if (resolution === 'cancelled')
        out.notice('warn', `the question about ${done!.service} was withdrawn`);
      if (resolution === 'withdrawn')
        out.notice(
          'warn',
          `${done!.connection.name} stopped waiting for ${done!.service}: the question was withdrawn and nothing ran`,
        );
      if (at === 0 && queue[0]) show(queue[0]);
    });
  }

  await printMcpServers(api, out);
  await printReminders(api, out);

  // Listen from the start: a signal while connecting still ends the run.
  const unsubscribeSignal = io.onSignal(() => finish());
  try {
    await core.connect();
  } catch (err) {
    out.notice('error', (err as Error).message);
    exitCode = 2;
    finish();
  }
  if (core.chatId === undefined && !args.noChat)
    out.info('(none of these servers chats: typed lines are not sent; /commands still work)');
  pump();

  /** No more lines are taken: the turns waiting go out and their replies come, then the run ends. */
  const endInput = (): void => {
    // Nobody is left to answer questions once input has ended.
    detachTerminal();
    inputEnded = true;
    drainTimer = setTimeout(() => {
      if (waiting.length || current) out.notice('warn', 'gave up waiting for the last reply');
      finish();
    }, io.drainTimeoutMs ?? 30_000);
    maybeDone();
  };
  let lines: ReturnType<typeof createInterface> | undefined;
  if (!args.noChat) {
    lines = createInterface({ input: io.stdin, terminal: false });
    lines.on('line', (raw) => {
      const line = raw.trim();
      if (queue[0]) {
        const answer = ANSWERS[line.toLowerCase()];
        if (answer && answer !== 'deny' && Date.now() - shownAt < armMs) {
          out.notice('warn', 'that answer came just as this question was shown; answer it again');
          show(queue[0]);
        } else if (answer) void api.answerPrompt(queue[0].id, answer);
        else out.info('answer y (once), s (this session), a (always) or n (deny)');
        return;
      }
      if (!line || inputEnded) return;
      // Piped lines are a script: its /quit comes after the turns before it, as the end of input
      // would (a person at a terminal who types /quit means now).
      if (!interactive && /^\/(quit|exit)$/.test(line) && (waiting.length || current)) {
        endInput();
        return;
      }
      if (line.startsWith('/')) {
        void command(line, api, out).then((quit) => quit && finish());
        return;
      }
      if (core.chatId === undefined) {
        out.notice('warn', 'not sent: none of the connected servers has a chat');
        return;
      }
      waiting.push(line);
      if (views.get(core.chatId)?.state.status !== 'ready')
        out.info('(not connected yet: it will be sent once connected)');
      pump();
    });
    lines.on('close', () => {
      // Closed by the shutdown itself: nothing is left to wait for.
      if (finishing || inputEnded) return;
      endInput();
    });
  }

  await finished;
  clearTimeout(drainTimer);
  clearTimeout(turnTimer);
  unsubscribeSignal();
  // /quit, Ctrl-C or SIGTERM may come while stdin is still open: let it go, or the open handle
  // keeps the process alive after "bye" (a service manager would have to kill it).
  lines?.close();
  releaseInput(io.stdin);
  detachTerminal();
  out.info('disconnecting…');
  await core.close();
  out.info('bye');
  return exitCode;
}

/** Stop reading stdin and close it, so it holds the process no longer. */
function releaseInput(stdin: CliIo['stdin']): void {
  stdin.pause();
  (stdin as Partial<NodeJS.ReadStream>).destroy?.();
}

/** Slash commands; resolves true for /quit. */
async function command(line: string, api: CoreApi, out: Printer): Promise<boolean> {
  const [name, arg] = line.split(/\s+/, 2);
  try {
    switch (name) {
      case '/quit':
      case '/exit':
        return true;
      case '/services':
        out.services((await api.snapshot()).services);
        return false;
      case '/enable':
      case '/disable':
        if (!arg) {
          out.notice('warn', `usage: ${name} NAME`);
          return false;
        }
        await api.setServiceEnabled(arg, name === '/enable');
        out.info(`${arg} ${name === '/enable' ? 'enabled' : 'disabled'}; services re-registered`);
        return false;
      case '/audit': {
        const page = await api.queryAudit({ limit: 10 });
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
