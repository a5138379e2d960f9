/**
 * The composition root (DESIGN §2): settings + registry + gate + audit + connections.
 * Hosts (terminal, Electron, the browser bridge) build one Agent and talk to it; nothing else
 * wires these parts together, so every host gets the same gate.
 */
import path from 'node:path';
import { type Clock, systemClock } from './clock.js';
import type { AuditPage, AuditQuery, AuditRecord, AuditVerifyResult } from './contract/audit.js';
import type { ServiceView } from './contract/commands.js';
import type { AgentNotice, NoticeWords } from './contract/notice.js';
import {
  type ConnectionRef,
  type ConnectionState,
  LOCAL_CONNECTION,
  type RegistrationState,
} from './contract/connection.js';

export type { ServiceView };
import type { Policy, PromptAnswer } from './contract/policy.js';
import { type Offer, offerAllows, offerKeyOf } from './contract/offer.js';
import { type CallRequest, type DispatchResult, Dispatcher, type GateEvents } from './dispatch.js';
import { CallPace, type CallPaceLimits, SERVER_LINE_PACE } from './call-pace.js';
import { ServerTasks } from './server-tasks.js';
import type { AuditIo } from './audit/append.js';
import { AuditChainSecret } from './audit/chain-secret.js';
import { AuditLog } from './audit/log.js';
import { exportAudit } from './audit/export.js';
import { CommandRefusal } from './contract/errors.js';
import { Emitter } from './events.js';
import { type Disposable, DisposableStore } from './lifecycle.js';
import { type IdSource, cryptoIds } from './ids.js';
import { Broker, type BrokerEvents } from './permissions/broker.js';
import { PolicyStore, settingsPolicyPersistence } from './permissions/policy.js';
import { builtinServices } from './services/builtin/index.js';
import { createFilesSandbox } from './services/files/sandbox.js';
import { type Desktop, systemDesktop } from './services/platform/desktop.js';
import { Reminders } from './services/reminders/reminders.js';
import type { ReminderView } from './contract/reminders.js';
import { Registry } from './services/registry.js';
import { plainTypes } from './services/server-schema.js';
import type { ParsedServer } from './services/mcp/config.js';
import { McpHub } from './services/mcp/hub.js';
import type { McpLauncher } from './services/mcp/launcher.js';
import type { McpTiming } from './services/mcp/server.js';
import type { Service } from './services/service.js';
import type { SecretStore } from './settings/secrets.js';
import { type Settings, defaultSettings } from './settings/schema.js';
import type { AdventProfile } from './contract/commands.js';
import { type DataDirLock, lockDataDir } from './settings/lock.js';
import { makeDataDirPrivate } from './settings/paths.js';
import { SettingsStore } from './settings/store.js';
import type { AdventSession } from './wire/advent/session.js';
import { type BaseProfile, type Dialect, DialectSet, type SecretSource } from './wire/dialect.js';
import { DIALECTS } from './wire/dialects.js';
import type { Timing } from './wire/advent/link.js';
import type { LiveSession, SessionEvents, ToolEntry } from './wire/session.js';
import type { WsTiming } from './wire/kit/ws-dialer.js';

export interface AgentOptions {
  dataDir: string;
  /** The default files root when settings have none yet (`~/Documents/Advent Agent`). */
  defaultFilesRoot: string;
  secrets: SecretStore;
  clock?: Clock;
  ids?: IdSource;
  /** Overrides for this run only, never saved (terminal flags). */
  overrides?: {
    filesRoots?: string[];
    promptTimeoutSec?: number;
    policies?: Record<string, Policy>;
    disabled?: string[];
    /**
     * How fast each connection's calls may start (default `DEFAULT_CALL_PACE`): `--calls-per-second`,
     * and the tests and bench that push thousands of calls through one connection on purpose.
     */
    callPace?: CallPaceLimits;
    /**
     * Permission questions one connection may have waiting at once (default MAX_WAITING_PROMPTS):
     * tests that hold a connection's calls open on purpose.
     */
    maxWaitingPrompts?: number;
  };
  /** Extra services (tests, plugins); the built-ins are always there. */
  services?: Service[];
  /** Connection timing overrides (tests): Advent TCP and the WebSocket dialects. */
  timing?: Partial<Timing>;
  wsTiming?: Partial<WsTiming>;
  /** The app's version, told to MCP clients in `serverInfo`. */
  version?: string;
  /** The connection kinds this agent can hold (default: every kind the app ships). */
  dialects?: readonly Dialect[];
  /**
   * This computer as the desktop services see it (platform, command runner, clipboard, screen).
   * Hosts add what they have (Electron's clipboard and screen capture); tests inject a recorder.
   */
  desktop?: Partial<Desktop>;
  /** The MCP hub: how servers are started, their search PATH, this run's servers. */
  mcp?: AgentMcpOptions;
  /** How the audit log reaches its files (default node's fs; tests and the bench inject their own). */
  auditIo?: AuditIo;
}

export interface AgentMcpOptions {
  /** How stdio servers are started (default: spawn; the desktop app forks bundled JS servers). */
  launcher?: McpLauncher;
  /** The PATH servers are started with (hosts pass the login shell's). */
  searchPath?: () => Promise<string | undefined>;
  /** Servers for this run only (`--mcp-config FILE`): not saved. */
  runOnly?: readonly ParsedServer[];
  timing?: Partial<McpTiming>;
  fetch?: typeof fetch;
}

/** Every event a host may show, tagged with the connection where one applies. */
export type AgentEvents = {
  connection: { id: string; name: string; state: ConnectionState };
  registration: { id: string; name: string; registration: RegistrationState };
  replyDelta: SessionEvents['replyDelta'] & { id: string };
  replyDone: SessionEvents['replyDone'] & { id: string };
  replyInterrupted: SessionEvents['replyInterrupted'] & { id: string };
  thought: SessionEvents['thought'] & { id: string };
  transcript: SessionEvents['transcript'] & { id: string };
  mood: SessionEvents['mood'] & { id: string };
  audio: SessionEvents['audio'] & { id: string };
  listen: SessionEvents['listen'] & { id: string };
  status: { id: string; name: string; text: string };
  services: ServiceView[];
  prompt: BrokerEvents['prompt'];
  promptResolved: BrokerEvents['promptResolved'];
  callStarted: GateEvents['callStarted'];
  callWaiting: GateEvents['callWaiting'];
  callFinished: GateEvents['callFinished'];
  audit: AuditRecord;
  /** `kind: 'protocol'`: a technical line from a connection's protocol handling (see the contract). */
  notice: {
    level: 'info' | 'warn' | 'error';
    message: string;
    connection?: ConnectionRef;
    kind?: 'protocol';
    words?: NoticeWords;
  };
  /**
   * The services offered under a selection key changed (a connection's id, or `mcp-clients`):
   * its live sessions re-register; hosts serving MCP apps tell them the list changed.
   */
  offerChanged: { key: string };
  /** A reminder or timer rang (whether or not any server is connected). */
  reminderFired: ReminderView;
  /** The reminder list changed. */
  reminders: ReminderView[];
};

function interruptedNotice(records: readonly AuditRecord[]): AgentNotice {
  const shown = records
    .slice(0, 5)
    .map((r) => `${r.service} (#${r.seq})`)
    .join(', ');
  const more = records.length > 5 ? ` and ${records.length - 5} more` : '';
  return {
    message: `${records.length} call(s) were interrupted when the agent last stopped, so whether they finished is unknown: ${shown}${more}. See Activity.`,
    words: {
      key: 'notice.interrupted',
      params: { count: records.length, calls: `${shown}${records.length > 5 ? ', …' : ''}` },
    },
  };
}

export class Agent {
  readonly events = new Emitter<AgentEvents>();
  readonly registry: Registry;
  readonly policy: PolicyStore;
  readonly broker: Broker;
  readonly gate: Dispatcher;
  /** Imported MCP servers, their tools kept in the registry. */
  readonly mcp: McpHub;
  private readonly sessions = new Map<string, LiveSession>();
  /** Per connection, the agent's listeners on its session: disposed when it disconnects. */
  private readonly watches = new Map<string, Disposable>();
  /** The enabled services as servers see them; undefined after any registry change. */
  private tools: readonly ToolEntry[] | undefined;
  /** Per selection key, the part of `tools` it offers; cleared with `tools` or the selection. */
  private readonly offeredTools = new Map<string, readonly ToolEntry[]>();
  /** Each selection as last seen (JSON), to tell which keys a settings change touched. */
  private offersSeen = new Map<string, string>();
  private lock: DataDirLock | undefined;
  /** The audit chain's secret: its key, and the log's newest seq as kept there (noteAuditSeq). */
  private auditChain: AuditChainSecret | undefined;
  /**
   * What the agent found on opening that the user should know (settings repaired, the data folder
   * made private, calls interrupted by a crash). Also emitted as notices, but a host attaches its
   * listeners only after open, so it shows these itself.
   */
  readonly startupNotices: AgentNotice[] = [];
  /** The calls this start recorded as interrupted (the previous run stopped while they ran). */
  interruptedAtStart: readonly AuditRecord[] = [];
  readonly clockSource: Clock;
  /** How fast each connection's status and protocol lines are shown (the rest are dropped). */
  private readonly serverLines: CallPace;
  /** Which tasks a server starts reach the conversation (the rest are not shown). */
  private readonly serverTasks: ServerTasks;
  readonly ids: IdSource;

  private constructor(
    private readonly options: AgentOptions,
    readonly settings: SettingsStore,
    readonly audit: AuditLog,
    /** The connection kinds this agent holds: how each profile becomes a session. */
    readonly dialects: DialectSet,
    readonly reminders: Reminders,
  ) {
    this.clockSource = options.clock ?? systemClock;
    this.serverLines = new CallPace(this.clockSource, SERVER_LINE_PACE);
    this.serverTasks = new ServerTasks(this.clockSource);
    this.ids = options.ids ?? cryptoIds;
    const overrides = options.overrides ?? {};

    const enabled = Object.fromEntries(
      Object.entries(settings.get().services)
        .filter(([, s]) => typeof s.enabled === 'boolean')
        .map(([name, s]) => [name, s.enabled as boolean]),
    );
    for (const name of overrides.disabled ?? []) enabled[name] = false;
    this.registry = new Registry({ enabled });
    const desktop = systemDesktop(options.desktop);
    for (const service of [...builtinServices({ reminders, desktop }), ...(options.services ?? [])])
      this.registry.add(service);
    this.mcp = new McpHub({
      registry: this.registry,
      settings,
      secrets: options.secrets,
      clock: this.clockSource,
      ids: this.ids,
      version: options.version ?? '0.0.0',
      launcher: options.mcp?.launcher,
      searchPath: options.mcp?.searchPath,
      runOnly: options.mcp?.runOnly,
      timing: options.mcp?.timing,
      fetch: options.mcp?.fetch,
      revokeGrants: (name) => this.policy.revoke(name),
    });
    for (const name of [...Object.keys(overrides.policies ?? {}), ...(overrides.disabled ?? [])]) {
      // An imported tool exists only once its server has listed it: a name that one of them may
      // own is accepted now and applies when the tool appears.
      if (!this.registry.get(name) && !this.mcp.mayOwn(name))
        throw new CommandRefusal('unknown_service', `there is no service named '${name}'`, {
          name,
        });
    }

    const persistence = settingsPolicyPersistence(settings);
    this.policy = new PolicyStore(
      {
        ...persistence,
        // An imported tool's default (ask; allow for a trusted server's readers), then what the
        // user chose, then this run's flags.
        getPolicies: () => ({
          ...this.mcp.policyDefaults(),
          ...persistence.getPolicies(),
          ...overrides.policies,
        }),
      },
      { identity: (service) => this.mcp.identityOf(service) },
    );
    this.broker = new Broker({
      clock: this.clockSource,
      ids: this.ids,
      timeoutMs: () => (overrides.promptTimeoutSec ?? settings.get().promptTimeoutSec) * 1000,
    });
    const files = createFilesSandbox({
      roots: () => overrides.filesRoots ?? settings.get().files.roots,
      maxFileBytes: () => settings.get().files.maxFileBytes,
      ids: this.ids,
      protectedFolders: () => [options.dataDir],
    });
    this.gate = new Dispatcher({
      registry: this.registry,
      offered: (connectionId, service) => this.isOffered(connectionId, service),
      policy: {
        decide: (q) => this.policy.decide(q),
        remember: (key, scope) => this.remember(key, scope),
      },
      // The prompt of an imported tool shows its server and what the server claims about it.
      broker: {
        ask: (request, options) => {
          const hint = this.mcp.hintOf(request.service);
          return this.broker.ask(hint ? { ...request, hint } : request, options);
        },
      },
      audit,
      files,
      clock: this.clockSource,
      pace: new CallPace(this.clockSource, options.overrides?.callPace),
      ...(options.overrides?.maxWaitingPrompts !== undefined && {
        maxWaitingPrompts: options.overrides.maxWaitingPrompts,
      }),
    });

    this.broker.on('prompt', (p) => this.events.emit('prompt', p));
    this.broker.on('promptResolved', (p) => this.events.emit('promptResolved', p));
    this.gate.events.on('callStarted', (e) => this.events.emit('callStarted', e));
    this.gate.events.on('callWaiting', (e) => this.events.emit('callWaiting', e));
    this.gate.events.on('callFinished', (e) => this.events.emit('callFinished', e));
    this.gate.events.on('auditError', ({ message }) =>
      this.events.emit('notice', {
        level: 'error',
        message: `the audit log cannot be written: ${message}`,
        words: { key: 'notice.auditUnwritable', params: { reason: message } },
      }),
    );
    this.gate.events.on('callsPaced', ({ connection, burst, perSecond }) =>
      this.events.emit('notice', {
        level: 'warn',
        connection,
        message: `'${connection.name}' is calling services faster than ${perSecond} a second (after ${burst} at once), so its calls now wait their turn; each is still asked about and recorded`,
        words: {
          key: 'notice.callsPaced',
          params: { server: connection.name, burst, perSecond },
        },
      }),
    );
    audit.onAppend((record) => this.events.emit('audit', record));
    this.mcp.events.on('policies', () => this.events.emit('services', this.services()));
    reminders.events.on('fired', (r) => this.events.emit('reminderFired', r));
    reminders.events.on('changed', (list) => this.events.emit('reminders', list));
    this.registry.events.on('changed', (change) => {
      this.tools = undefined;
      this.offeredTools.clear();
      // Only the connections offered a service that changed are told (once per change).
      const names = change.kind === 'batch' ? [...change.added, ...change.removed] : [change.name];
      for (const session of this.sessions.values())
        if (names.some((name) => this.isOffered(session.id, name))) session.reregister();
      this.events.emit('services', this.services());
    });
    this.offersSeen = offersJson(settings.get().offer);
    settings.on('changed', (next) => this.offersMayHaveChanged(next.offer));
  }

  static async open(options: AgentOptions): Promise<Agent> {
    const clock = options.clock ?? systemClock;
    const lock = await lockDataDir(options.dataDir);
    try {
      return await Agent.openLocked(options, clock, lock);
    } catch (err) {
      await lock.release();
      throw err;
    }
  }

  private static async openLocked(
    options: AgentOptions,
    clock: Clock,
    lock: DataDirLock,
  ): Promise<Agent> {
    const dialects = new DialectSet(options.dialects ?? DIALECTS);
    const settings = await SettingsStore.open(
      path.join(options.dataDir, 'settings.json'),
      defaultSettings(options.defaultFilesRoot),
      { clock, ids: options.ids, checkProfile: (p) => dialects.checkSaved(p) },
    );
    // The chain's key, where its MACs begin and how long the log was, kept as one secret
    // (chain-secret.ts). A key stored but out of reach now is never replaced: the log is written
    // without MACs meanwhile, and the user is told.
    const chain = await AuditChainSecret.load(options.secrets);
    const audit = await AuditLog.open({
      dir: path.join(options.dataDir, 'audit'),
      clock,
      ...chain.logOptions(),
      ...(options.auditIo && { io: options.auditIo }),
    });
    const auditNotices = await chain.settle(audit);
    const modeWarning = await makeDataDirPrivate(options.dataDir);
    const notices: AgentNotice[] = [
      ...settings.warnings,
      ...(modeWarning ? [modeWarning] : []),
      ...auditNotices,
    ];
    const made: { agent?: Agent } = {};
    const reminders = await Reminders.open({
      file: path.join(options.dataDir, 'reminders.json'),
      clock,
      ids: options.ids,
      warn: (notice) =>
        made.agent
          ? made.agent.events.emit('notice', { level: 'warn', ...notice })
          : notices.push(notice),
    });
    const agent = new Agent(options, settings, audit, dialects, reminders);
    made.agent = agent;
    agent.lock = lock;
    // Calls the previous run let start and never finished recording (it crashed or was killed).
    const interrupted = await audit.recoverInterrupted();
    agent.interruptedAtStart = interrupted;
    agent.auditChain = chain;
    await agent.noteAuditSeq();
    if (interrupted.length > 0) notices.push(interruptedNotice(interrupted));
    for (const notice of notices) {
      agent.startupNotices.push(notice);
      agent.events.emit('notice', { level: 'warn', ...notice });
    }
    // Imported servers start once the log has settled what the last run left unfinished.
    agent.mcp.start();
    return agent;
  }

  // --- services ------------------------------------------------------------------------------

  services(): ServiceView[] {
    return this.registry.list().map(({ service, enabled }) => ({
      name: service.name,
      title: service.title,
      description: service.description,
      summary: service.summary ?? service.title,
      group: service.group ?? 'other',
      risk: service.risk,
      userOnly: service.userOnly === true,
      enabled,
      policy: this.policy.effectivePolicy(service.name, service.risk),
      alwaysGrants: this.policy.alwaysGrantsOf(service.name),
      parameters: service.parameters,
      ...(service.server ? { server: { ...service.server } } : {}),
      ...(service.hint ? { hint: { ...service.hint } } : {}),
      ...(service.outputSchema ? { outputSchema: service.outputSchema } : {}),
    }));
  }

  /** The enabled services as MCP-style servers see them (user-only ones marked, not removed). */
  toolEntries(): readonly ToolEntry[] {
    // Read on every tools/list and tools/call: built once per change of the registry, not per call.
    this.tools ??= this.registry
      .list()
      .filter((e) => e.enabled)
      .map(({ service }) => ({
        name: service.name,
        description: service.description,
        inputSchema: plainTypes(service.serverParameters ?? service.parameters) as Record<
          string,
          unknown
        >,
        risk: service.risk,
        userOnly: service.userOnly === true,
        title: service.title,
        ...(service.hint ? { hint: service.hint } : {}),
        ...(service.outputSchema ? { outputSchema: service.outputSchema } : {}),
      }));
    return this.tools;
  }

  /**
   * The services a connection is offered: the enabled ones its selection lets through. Every
   * session reads this for its tools/list or registration; built once per change, not per call.
   */
  toolEntriesFor(connectionId: string): readonly ToolEntry[] {
    const all = this.toolEntries();
    const offer = this.offerOf(connectionId);
    if (!offer) return all;
    const key = offerKeyOf(connectionId);
    let offered = this.offeredTools.get(key);
    if (!offered) {
      offered = all.filter((t) => offerAllows(offer, t.name));
      this.offeredTools.set(key, offered);
    }
    return offered;
  }

  /**
   * THE check of what a connection may see and call (the gate refuses the rest as unknown): its
   * selection lets `service` through. A user's own run (the local connection) sees everything;
   * every MCP app (`mcp:…`) shares the `mcp-clients` selection. Whether the service exists or is
   * switched on is decided apart.
   */
  isOffered(connectionId: string, service: string): boolean {
    return offerAllows(this.offerOf(connectionId), service);
  }

  /** The selection in force for a connection (undefined: every enabled service). */
  offerOf(connectionId: string): Offer | undefined {
    if (connectionId === LOCAL_CONNECTION.id) return undefined;
    const offers = this.settings.get().offer;
    const key = offerKeyOf(connectionId);
    return offers && Object.hasOwn(offers, key) ? offers[key] : undefined;
  }

  /**
   * Choose what a connection (or, under `mcp-clients`, every MCP app) is offered; null offers
   * every enabled service again. Saved; its live sessions re-register if what they see changed.
   */
  async setOffer(key: string, offer: Offer | null): Promise<void> {
    await this.settings.update((draft) => {
      // Built with fromEntries: a key is data, never a property path ('__proto__' is a valid id).
      const offers = Object.fromEntries([
        ...Object.entries(draft.offer ?? {}).filter(([k]) => k !== key),
        ...(offer ? [[key, offer] as const] : []),
      ]);
      if (Object.keys(offers).length > 0) draft.offer = offers;
      else delete draft.offer;
    });
  }

  /**
   * Settings changed: the selections that differ from before drop their cached tools, and each
   * live session under one re-registers once, when the services it is offered changed.
   */
  private offersMayHaveChanged(next: Settings['offer']): void {
    const before = this.offersSeen;
    const now = offersJson(next);
    this.offersSeen = now;
    const keys = new Set([...before.keys(), ...now.keys()]);
    for (const key of keys) {
      const was = before.get(key);
      if (was === now.get(key)) continue;
      const previous = this.offeredTools.get(key) ?? this.filterTools(was);
      this.offeredTools.delete(key);
      // A name added that matches no service, or the same set written again, changes nothing.
      const offered = this.filterTools(now.get(key));
      if (sameNames(previous, offered)) continue;
      // Questions for a service no longer offered to these connections go: the gate refuses them.
      const still = new Set(offered.map((t) => t.name));
      this.broker.cancelWhere((p) => offerKeyOf(p.connection.id) === key && !still.has(p.service));
      for (const session of this.sessions.values())
        if (offerKeyOf(session.id) === key) session.reregister();
      this.events.emit('offerChanged', { key });
    }
  }

  /** The enabled services a selection (as JSON, absent: none) lets through. */
  private filterTools(offerJson: string | undefined): readonly ToolEntry[] {
    const all = this.toolEntries();
    if (offerJson === undefined) return all;
    const offer = JSON.parse(offerJson) as Offer;
    return all.filter((t) => offerAllows(offer, t.name));
  }

  /** Switch a service on or off: saved, and every live connection re-registers at once. */
  async setServiceEnabled(name: string, on: boolean): Promise<void> {
    if (!this.registry.get(name))
      throw new CommandRefusal('unknown_service', `there is no service named '${name}'`, { name });
    await this.settings.update((draft) => {
      draft.services[name] = { ...draft.services[name], enabled: on };
    });
    this.registry.setEnabled(name, on);
    // Its questions still open go from every window: the gate refuses those calls as switched off.
    if (!on) this.broker.cancelWhere((p) => p.service === name);
  }

  async setServicePolicy(name: string, policy: Policy): Promise<void> {
    if (!this.registry.get(name))
      throw new CommandRefusal('unknown_service', `there is no service named '${name}'`, { name });
    await this.settings.update((draft) => {
      draft.services[name] = { ...draft.services[name], policy };
    });
    // Blocked: its questions still open go, and the gate refuses those calls as blocked.
    if (policy === 'deny') this.broker.cancelWhere((p) => p.service === name);
    this.events.emit('services', this.services());
  }

  async revokeGrants(name: string): Promise<void> {
    await this.policy.revoke(name);
    this.events.emit('services', this.services());
  }

  /** A run the user started themselves ("Try it"): no prompt, audited as user-run. */
  runService(name: string, params: unknown): Promise<DispatchResult> {
    return this.gate.dispatch({
      connection: LOCAL_CONNECTION,
      dialect: 'local',
      callId: `user-${this.ids.hex(8)}`,
      service: name,
      params,
      userRun: true,
    });
  }

  /** For hosts and tests that act as a server-side caller. */
  dispatch(call: CallRequest): Promise<DispatchResult> {
    return this.gate.dispatch(call);
  }

  answerPrompt(id: string, answer: PromptAnswer): boolean {
    return this.broker.answer(id, answer);
  }

  // --- connections ---------------------------------------------------------------------------

  /**
   * Start a session for a profile of any kind; every one serves the same services through the
   * same gate. The secret (an Advent or XiaoZhi token, the endpoint URL's token) comes from the
   * SecretStore key `profile:<id>:token` unless `secret` is given (terminal flags).
   */
  connect(profile: BaseProfile, secret?: SecretSource): LiveSession {
    const existing = this.sessions.get(profile.id);
    if (existing) return existing;
    const dialect = this.dialects.get(profile.kind);
    if (!dialect) throw new Error(`this agent cannot hold a '${profile.kind}' connection`);
    const stored = async (): Promise<string | undefined> =>
      (await this.options.secrets.get(`profile:${profile.id}:token`)) ?? undefined;
    const session = dialect.createSession(profile, {
      gate: this.gate,
      tools: () => this.toolEntriesFor(profile.id),
      secret: secret ?? stored,
      clock: this.clockSource,
      ids: this.ids,
      timing: this.options.timing,
      wsTiming: this.options.wsTiming,
      version: this.options.version ?? '0.0.0',
    });
    // A session of this profile still saying goodbye (disconnect awaits its stop) is no longer
    // what hosts are told about: its last words would read as this new session's state.
    this.watches.get(profile.id)?.dispose();
    this.watches.set(profile.id, this.watch(profile.id, session));
    this.sessions.set(profile.id, session);
    session.start();
    return session;
  }

  /** An Advent session (tests and the Advent-only paths want its concrete type). */
  connectAdvent(profile: AdventProfile, token?: () => Promise<string> | string): AdventSession {
    return this.connect(profile, token) as AdventSession;
  }

  /** Forward a session's events to the agent's; the listeners go when the returned store does. */
  private watch(id: string, session: LiveSession): Disposable {
    const { name } = session;
    const ref = { id, name };
    const e = session.events;
    const store = new DisposableStore();
    const on: typeof e.on = (event, listener) => store.add(e.on(event, listener));
    on('state', (state) => {
      // A dropped link withdraws its pending prompts: the server is no longer waiting for them.
      // (Each call's own signal does this when its socket closes; this also covers a prompt
      // raised for a call whose socket went while it was being looked at.)
      if (state.status !== 'ready' && state.status !== 'authenticating') {
        this.broker.withdrawWhere((p) => p.connection.id === id);
      }
      this.events.emit('connection', { id, name, state });
    });
    on('registration', (registration) =>
      this.events.emit('registration', { id, name, registration }),
    );
    // What a server sends per frame and each window shows as an item (its status and protocol
    // lines, the tasks it starts) passes a pace; past it, it is not shown, and the user is told
    // once per streak. Otherwise a server sending them in a flood (malformed frames on purpose,
    // replies on made-up tasks) would bury every window, the terminal and the log.
    const passes = (
      turn: { admitted: boolean; startsStreak: boolean },
      held: { what: string; key: 'notice.linesHidden' | 'notice.repliesHidden'; perSecond: number },
    ): boolean => {
      if (turn.startsStreak)
        this.events.emit('notice', {
          level: 'warn',
          connection: ref,
          message: `'${name}' is ${held.what} faster than ${held.perSecond} a second; the rest are not shown until it slows down`,
          words: { key: held.key, params: { server: name, perSecond: held.perSecond } },
        });
      return turn.admitted;
    };
    const inTask = (taskId: string): boolean =>
      passes(this.serverTasks.admit(id, taskId), {
        what: 'starting replies',
        key: 'notice.repliesHidden',
        perSecond: this.serverTasks.limits.perSecond,
      });
    const shown = (): boolean =>
      passes(this.serverLines.admit(id), {
        what: 'sending status and protocol messages',
        key: 'notice.linesHidden',
        perSecond: SERVER_LINE_PACE.perSecond,
      });
    on('replyDelta', (p) => {
      if (inTask(p.taskId)) this.events.emit('replyDelta', { ...p, id });
    });
    on('replyDone', (p) => {
      if (inTask(p.taskId)) this.events.emit('replyDone', { ...p, id });
    });
    on('replyInterrupted', (p) => {
      if (inTask(p.taskId)) this.events.emit('replyInterrupted', { ...p, id });
    });
    on('thought', (p) => {
      if (inTask(p.taskId)) this.events.emit('thought', { ...p, id });
    });
    on('transcript', (p) => {
      if (inTask(p.taskId)) this.events.emit('transcript', { ...p, id });
    });
    on('mood', (p) => {
      if (inTask(p.taskId)) this.events.emit('mood', { ...p, id });
    });
    on('audio', (p) => this.events.emit('audio', { ...p, id }));
    on('listen', (p) => this.events.emit('listen', { ...p, id }));
    on('status', (text) => {
      if (shown()) this.events.emit('status', { id, name, text });
    });
    // Protocol lines are the dialect's words (frames, ids, methods): marked so a UI words them.
    on('log', ({ level, message }) => {
      if (shown())
        this.events.emit('notice', { level, message, connection: ref, kind: 'protocol' });
    });
    on('tokenExpiring', ({ expiresAt }) =>
      this.events.emit('notice', {
        level: 'warn',
        connection: ref,
        message: `the token for '${name}' expires at ${new Date(expiresAt).toISOString()}; get a new one to stay connected`,
        words: { key: 'notice.tokenExpiring', params: { server: name, at: expiresAt } },
      }),
    );
    return store;
  }

  session(id: string): LiveSession | undefined {
    return this.sessions.get(id);
  }

  async disconnect(id: string): Promise<void> {
    const session = this.sessions.get(id);
    if (!session) return;
    this.sessions.delete(id);
    const watch = this.watches.get(id);
    try {
      await session.stop();
    } finally {
      // After the stop, so hosts still hear the session's last state ("disconnected"). Only this
      // session's watch: a connect during the goodbye has put the new session's in its place.
      if (this.watches.get(id) === watch) this.watches.delete(id);
      watch?.dispose();
    }
  }

  private unwatch(id: string): void {
    const watch = this.watches.get(id);
    this.watches.delete(id);
    watch?.dispose();
  }

  // --- audit ---------------------------------------------------------------------------------

  queryAudit(q: AuditQuery): Promise<AuditPage> {
    return this.audit.query(q);
  }

  exportAudit(q: AuditQuery, format: 'json' | 'csv'): Promise<string> {
    return exportAudit(this.audit, q, format);
  }

  verifyAudit(): Promise<AuditVerifyResult> {
    return this.audit.verify();
  }

  /** The agent's notion of now (epoch ms), for hosts showing countdowns. */
  clock(): number {
    return this.clockSource.now();
  }

  getSettings(): Settings {
    return this.settings.get();
  }

  /** Stop every session (with the goodbye handshake), end every prompt, flush the audit log. */
  async close(): Promise<void> {
    await Promise.all([...this.sessions.values()].map((s) => s.stop()));
    this.sessions.clear();
    for (const id of [...this.watches.keys()]) this.unwatch(id);
    // Pending questions end as "no one could be asked"; running calls finish and are recorded.
    this.broker.dispose();
    // Imported servers stop (their calls are cancelled and recorded as such), processes and all.
    await this.mcp.close();
    await this.gate.drain();
    await this.reminders.close();
    await this.audit.flush();
    await this.audit.close();
    await this.noteAuditSeq();
    await this.lock?.release();
  }

  /**
   * Keeps the log's newest seq in the secret store (at start and at a clean close): verify then
   * knows how long the log was, beyond the reach of whoever can write its files.
   */
  private async noteAuditSeq(): Promise<void> {
    // Only ever raised: a log found shorter than it was must stay found out by the next verify.
    await this.auditChain?.noteSeq(this.audit.lastSeq);
  }

  private async remember(key: string, scope: 'session' | 'always'): Promise<void> {
    try {
      await this.policy.remember(key, scope);
      // The services page lists "always" grants (with a way to revoke them): tell it.
      if (scope === 'always') this.events.emit('services', this.services());
    } catch (err) {
      // The grant still holds for this run; the user is told it will not survive a restart.
      this.events.emit('notice', {
        level: 'warn',
        message: `"Always allow" could not be saved (${(err as Error).message}); it holds until the app quits`,
        words: { key: 'notice.alwaysNotSaved', params: { reason: (err as Error).message } },
      });
    }
  }
}

function offersJson(offers: Settings['offer']): Map<string, string> {
  return new Map(Object.entries(offers ?? {}).map(([key, offer]) => [key, JSON.stringify(offer)]));
}

function sameNames(a: readonly ToolEntry[], b: readonly ToolEntry[]): boolean {
  return a.length === b.length && a.every((t, i) => t.name === b[i]?.name);
}
