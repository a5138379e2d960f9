/**
 * The contract (app/contract/commands.ts) implemented over the Agent: connection profiles and
 * their tokens, several live connections with one active for chat and voice, the built-in demo
 * server, the conversation timeline, and every event a UI shows. Hosts (Electron's IPC, the
 * headless WebSocket bridge) validate arguments, then call this; nothing here trusts a UI more
 * than the contract says.
 */
import path from 'node:path';
import { Agent, type AgentOptions } from './agent.js';
import { Newest } from './chat/newest.js';
import { STREAM_EMIT_MS, Timeline } from './chat/timeline.js';
import type { ChatItem } from './contract/chat.js';
import {
  type AdventProfile,
  type AgentApi,
  type Profile,
  type CommandResults,
  type ConnectionView,
  type EventPayloads,
  type ProfileInput,
  type ProfileView,
  type RunResult,
  type SettingsPatch,
  type SettingsView,
  type Snapshot,
} from './contract/commands.js';
import { LOCAL_CONNECTION, type RegistrationState } from './contract/connection.js';
import type {
  McpImportPreview,
  McpImportRequest,
  McpImportSourceView,
  McpLogLine,
  McpServerInput,
  McpServerView,
} from './contract/mcp.js';
import type {
  McpClientApp,
  McpClientSetupPreview,
  McpClientSetupResult,
  McpClientView,
} from './contract/mcp-clients.js';
import type { AuditQuery } from './contract/audit.js';
import { type PlatformInfo, platformInfo } from './mcp-clients/apps.js';
import { McpClientSetup } from './mcp-clients/setup.js';
import { MCP_CLIENTS_OFFER, type Offer } from './contract/offer.js';
import type { Policy, PromptAnswer } from './contract/policy.js';
import { type Language, reservedId } from './contract/profiles/spec.js';
import { Emitter } from './events.js';
import { CommandRefusal } from './contract/errors.js';
import type { BaseProfile } from './wire/dialect.js';
import { type LiveSession, notReady } from './wire/session.js';
import type { ReminderView, ScreenCapture } from './contract/reminders.js';
import type { ScreenImage, ScreenSource } from './services/platform/desktop.js';
import { spokenReminder } from './services/reminders/spoken.js';
import { ServiceFailure } from './services/service.js';
import { DEFAULT_MCP_HTTP_PORT, type McpHttpSettings } from './contract/mcp-serve.js';
import { McpServe } from './mcp-serve/mcp-serve.js';

export interface CoreApiOptions extends AgentOptions {
  version: string;
  host: SettingsView['host'];
  logDir?: string;
  /** A warning about where secrets are kept (Electron on Linux without a keyring). */
  secretsWarning?: string;
  /**
   * Starts the simulated server behind "Try the demo server". The simulators live outside the
   * core (sim/), so the host injects it; without one the demo is not offered.
   */
  demo?: DemoFactory;
  /**
   * Connect the saved profiles marked "connect at start" (default true). The terminal's `run`
   * holds only the servers its flags name, so it opens the core with this off.
   */
  autoConnect?: boolean;
  /** How an MCP client launches this agent's stdio server (advent-agent mcp); hosts provide it. */
  mcpLaunch?: { command: string; args: string[] };
  /**
   * Where the other MCP apps' config files are looked for (one-click setup): this computer's
   * platform, home folder and environment unless given; tests point them at a temp folder.
   */
  mcpClientPlatform?: Partial<PlatformInfo>;
  /**
   * Serve MCP over HTTP for this run (`--mcp-http [PORT]`), whatever the settings say; not saved.
   * Without a port, the saved one (or the default).
   */
  mcpHttp?: { port?: number };
}

/** A simulated Advent server on a loopback port that accepts any token. */
export interface DemoServer {
  readonly port: number;
  stop(): Promise<void>;
}

/** What the core tells the demo server, so it behaves like a server worth imitating. */
export interface DemoNeeds {
  /**
   * How long a permission prompt waits for the user (read at each call: Settings may change it).
   * The demo waits for a call's result at least this long plus a margin, so an allow near the
   * end of the countdown is still heard.
   */
  promptTimeoutMs: () => number;
  /** The app's language, for the demo's own words (read at each turn). */
  language: () => Language;
}
export type DemoFactory = (needs: DemoNeeds) => Promise<DemoServer>;

const tokenKey = (profileId: string): string => `profile:${profileId}:token`;
const DEMO_ID = 'demo';
/** How long a page has to let the user pick a screen before the capture is given up. */
export const SCREEN_PICK_MS = 60_000;

interface ScreenWait {
  resolve: (image: ScreenImage) => void;
  reject: (err: Error) => void;
  /** Stops the wait's timer and abort listener. */
  end: () => void;
}

/** Reminder speeches remembered to let their audio through from a connection not active. */
const MAX_SPEECHES = 16;

export class CoreApi implements AgentApi {
  readonly events = new Emitter<EventPayloads>();
  private readonly timeline: Timeline;
  private readonly moods: Newest<EventPayloads['mood']>;
  private readonly registrations = new Map<string, RegistrationState>();
  private readonly tokens = new Set<string>();
  private active: string | undefined;
  /** Reminder speech asked of a connection (`id\ntaskId`), newest MAX_SPEECHES: heard anyway. */
  private readonly speeches = new Set<string>();
  private demo: { sim: DemoServer; profile: AdventProfile } | undefined;
  private voiceTask:
    { connection: string; taskId: string; bytes: number; logged: boolean } | undefined;
  /** The last voice turn closed by the UI, so a late chunk is refused with a clear reason. */
  private closedVoice: { taskId: string; why: 'ended' | 'cancelled' } | undefined;
  /** Screen captures asked of the page (browser host), by request id. */
  private readonly screenWaits = new Map<string, ScreenWait>();
  private readonly mcpClients: McpClientSetup;
  /** The services served to MCP client apps (stdio, the data folder's socket, HTTP). */
  readonly mcpServe: McpServe;
  /** `--mcp-http`: HTTP on for this run until the user saves the setting. */
  private httpOverride: McpHttpSettings | undefined;

  private constructor(
    readonly agent: Agent,
    private readonly options: CoreApiOptions,
  ) {
    this.timeline = new Timeline(agent.events, agent.clockSource);
    // The face follows the newest mood, a few times a second at most: a server may send moods
    // as fast as its socket goes, and each would be a message to every window.
    this.moods = new Newest(
      agent.clockSource,
      STREAM_EMIT_MS,
      (m: EventPayloads['mood']) => this.events.emit('mood', m),
      (a, b) => a.emoji === b.emoji && a.taskId === b.taskId,
    );
    this.mcpClients = new McpClientSetup({
      platform: platformInfo(options.mcpClientPlatform),
      launch: options.mcpLaunch,
      clock: agent.clockSource,
      ids: agent.ids,
    });
    this.timeline.events.on('chat', (item) => this.events.emit('chat', item));
    this.mcpServe = new McpServe({
      agent,
      secrets: options.secrets,
      dataDir: options.dataDir,
      version: options.version,
      // A client's protocol trouble is its own; what the user must know is a warning.
      log: (level, message, words) => {
        if (level === 'warn')
          agent.events.emit('notice', { level, message, ...(words && { words }) });
      },
    });
    this.mcpServe.events.on('http', (state) => this.events.emit('mcpHttp', state));
    if (options.mcpHttp) {
      const saved = agent.getSettings().mcpHttp;
      this.httpOverride = {
        enabled: true,
        port: options.mcpHttp.port ?? saved?.port ?? DEFAULT_MCP_HTTP_PORT,
      };
    }

    const e = agent.events;
    e.on('connection', ({ id }) => this.emitConnection(id));
    e.on('registration', ({ id, registration }) => {
      this.registrations.set(id, registration);
      this.emitConnection(id);
    });
    e.on('audio', ({ id, taskId, seq, data, sampleRate }) => {
      // Only the connection the user talks to is heard, and a reminder's speech by the connection
      // that set it: a background server pushing audio would cut off the active one's answer in
      // the page's player and speak in its place, with nothing to tell the user who is talking.
      if (id !== this.active && !this.speeches.has(`${id}\n${taskId}`)) return;
      // A copy: the event crosses a bridge and the buffer may be a view into a socket chunk.
      const pcm = data.buffer.slice(
        data.byteOffset,
        data.byteOffset + data.byteLength,
      ) as ArrayBuffer;
      // The session has already turned Opus into PCM; its rate is the decoder's.
      this.events.emit('audio', {
        connection: id,
        taskId,
        seq,
        sampleRate: sampleRate ?? 16_000,
        pcm,
      });
    });
    e.on('mood', ({ id, taskId, emoji }) => this.moods.put(id, { connection: id, taskId, emoji }));
    e.on('listen', ({ id, taskId, message }) => {
      // Hands-free: the server's LISTEN stop ends the user's input, so it joins the timeline now.
      const task = this.voiceTask;
      if (
        task &&
        !task.logged &&
        task.connection === id &&
        task.taskId === taskId &&
        (message as { state?: unknown } | null)?.state === 'stop'
      ) {
        task.logged = true;
        this.timeline.user(id, taskId, '', Math.round(task.bytes / 32));
      }
      this.events.emit('listen', { connection: id, taskId, message });
    });
    e.on('services', (list) => this.events.emit('services', list));
    e.on('prompt', (p) => this.events.emit('prompt', p));
    e.on('promptResolved', ({ id, resolution }) =>
      this.events.emit('promptResolved', { id, resolution }),
    );
    e.on('audit', (r) => this.events.emit('audit', r));
    e.on('notice', (n) => this.events.emit('notice', n));
    agent.mcp.events.on('server', (view) => this.events.emit('mcpServer', view));
    agent.mcp.events.on('removed', (p) => this.events.emit('mcpServerRemoved', p));
    // What the agent found while opening (before anyone listened): a settings file set aside,
    // calls a crash interrupted. Told again now, so the timeline and every UI have them.
    for (const notice of agent.startupNotices) e.emit('notice', { level: 'warn', ...notice });
    e.on('reminders', (list) => this.events.emit('reminders', list));
    e.on('reminderFired', (r) => this.announce(r));
    // Missed while the app was closed: in the conversation from the first snapshot on.
    for (const r of agent.reminders.missedAtStart()) this.timeline.reminder(r, true);
  }

  static async open(options: CoreApiOptions): Promise<CoreApi> {
    // The browser host has no screen of its own: its page asks the user to pick one.
    const made: { api?: CoreApi } = {};
    const fromPage: ScreenSource = (request) =>
      made.api
        ? made.api.captureFromPage(request)
        : Promise.reject(new ServiceFailure('unsupported', 'the app is still starting'));
    const desktop =
      options.host === 'browser' && !options.desktop?.screen
        ? { ...options.desktop, screen: fromPage }
        : options.desktop;
    const agent = await Agent.open({ ...options, desktop });
    const api = new CoreApi(agent, options);
    made.api = api;
    // MCP client apps reach this agent: `advent-agent mcp` through the socket, others over HTTP.
    await api.mcpServe.listen();
    await api.mcpServe.applyHttp(api.mcpHttpSettings());
    for (const p of agent.getSettings().connections) {
      if (await options.secrets.get(tokenKey(p.id))) api.tokens.add(p.id);
    }
    if (options.autoConnect === false) return api;
    for (const p of agent.getSettings().connections)
      if (p.autoConnect && (api.tokens.has(p.id) || !api.needsSecret(p))) await api.connect(p.id);
    return api;
  }

  // --- snapshot & settings -------------------------------------------------------------------

  async snapshot(): Promise<Snapshot> {
    return {
      version: this.options.version,
      kinds: this.agent.dialects.views(),
      connections: this.profiles().map((p) => this.connectionView(p)),
      services: this.agent.services(),
      chat: this.timeline.list(),
      prompts: this.agent.broker.pending(),
      settings: await this.getSettings(),
      mcpHttp: this.mcpServe.state(),
    };
  }

  /** The HTTP endpoint as it should be: this run's `--mcp-http`, else the saved setting. */
  private mcpHttpSettings(): McpHttpSettings {
    return (
      this.httpOverride ??
      this.agent.getSettings().mcpHttp ?? { enabled: false, port: DEFAULT_MCP_HTTP_PORT }
    );
  }

  async getSettings(): Promise<SettingsView> {
    const s = this.agent.getSettings();
    return {
      filesRoots: [...(this.options.overrides?.filesRoots ?? s.files.roots)],
      maxFileBytes: s.files.maxFileBytes,
      promptTimeoutSec: this.options.overrides?.promptTimeoutSec ?? s.promptTimeoutSec,
      language: s.language,
      theme: s.theme,
      dataDir: this.options.dataDir,
      logDir: this.options.logDir,
      secrets: { kind: this.options.secrets.kind, warning: this.options.secretsWarning },
      host: this.options.host,
      offer: structuredClone(s.offer ?? {}),
      mcpHttp: { ...this.mcpHttpSettings() },
    };
  }

  async saveSettings(patch: SettingsPatch): Promise<SettingsView> {
    const roots = patch.filesRoots;
    if (roots) {
      const relative = roots.find((r) => !path.isAbsolute(r));
      if (relative !== undefined)
        throw new CommandRefusal(
          'invalid_settings',
          `'${relative}' is not a full path; choose a folder such as ${this.options.defaultFilesRoot}`,
          { path: relative, example: this.options.defaultFilesRoot },
        );
    }
    await this.agent.settings.update((draft) => {
      if (roots) draft.files.roots = roots.map((r) => path.resolve(r));
      if (patch.promptTimeoutSec !== undefined) draft.promptTimeoutSec = patch.promptTimeoutSec;
      if (patch.language) draft.language = patch.language;
      if (patch.theme) draft.theme = patch.theme;
      if (patch.mcpHttp) draft.mcpHttp = { ...patch.mcpHttp };
    });
    if (patch.mcpHttp) {
      // The user's choice now rules over this run's flag.
      this.httpOverride = undefined;
      await this.mcpServe.applyHttp(this.mcpHttpSettings());
    }
    const view = await this.getSettings();
    this.events.emit('settings', view);
    return view;
  }

  // --- connections ---------------------------------------------------------------------------

  /**
   * Save a profile of any kind the agent holds, with its token when it has one (`secret`). A kind
   * that cannot connect without a token is not saved without one, so nothing half-made is left.
   */
  async saveConnection(input: ProfileInput, secret?: string): Promise<ProfileView> {
    if (input.id === DEMO_ID)
      throw new CommandRefusal('demo_readonly', 'the demo server cannot be edited');
    if (input.id !== undefined && reservedId(input.id))
      throw new CommandRefusal(
        'invalid_profile',
        `the id '${input.id}' is kept for the app's own connections; save the profile under another id`,
      );
    const id = input.id ?? `p-${this.agent.ids.hex(8)}`;
    const { profile, secret: split } = this.completeProfile({ ...stripUndefined(input), id });
    const token = (split ?? secret)?.trim() || undefined;
    if (this.needsSecret(profile) && !token && !this.tokens.has(id))
      throw new CommandRefusal(
        'needs_token',
        `'${profile.name}' needs a token to connect; add it before saving`,
        { name: profile.name },
      );
    await this.agent.settings.update((draft) => {
      const at = draft.connections.findIndex((c) => c.id === id);
      if (at >= 0) draft.connections[at] = profile;
      else draft.connections.push(profile);
    });
    // A token pasted inside an endpoint URL is kept as the profile's secret, never in settings.
    if (token !== undefined) {
      await this.options.secrets.set(tokenKey(id), token);
      this.tokens.add(id);
    }
    // A live connection picks the new settings up by reconnecting.
    if (this.agent.session(id)) {
      await this.agent.disconnect(id);
      await this.connect(id);
    } else {
      this.emitConnection(id);
    }
    return this.profileView(profile);
  }

  /**
   * The profile checked against its kind and completed by its dialect: what it needs to stay the
   * same device across runs (generated once, kept on edits), a secret split off an address.
   */
  private completeProfile(input: ProfileInput & { id: string }): {
    profile: Profile;
    secret?: string;
  } {
    const checked = this.agent.dialects.checkInput(input);
    if (!checked.ok) throw new CommandRefusal('invalid_profile', checked.message);
    const dialect = this.agent.dialects.get(input.kind)!;
    const old = this.profile(input.id);
    try {
      const done = dialect.complete(
        checked.value as BaseProfile,
        old?.kind === input.kind ? old : undefined,
        this.agent.ids,
      );
      return { profile: done.profile as Profile, secret: done.secret };
    } catch (err) {
      throw new CommandRefusal('invalid_profile', (err as Error).message);
    }
  }

  async deleteConnection(id: string): Promise<void> {
    if (id === DEMO_ID) return this.stopDemo();
    await this.agent.disconnect(id);
    await this.agent.settings.update((draft) => {
      draft.connections = draft.connections.filter((c) => c.id !== id);
      // Its selection goes with it: a later profile never inherits what this one was offered.
      if (draft.offer && Object.hasOwn(draft.offer, id)) {
        delete draft.offer[id];
        if (Object.keys(draft.offer).length === 0) delete draft.offer;
      }
    });
    await this.options.secrets.delete(tokenKey(id));
    this.tokens.delete(id);
    this.registrations.delete(id);
    this.moods.forget(id);
    if (this.active === id) this.active = undefined;
    this.events.emit('connectionRemoved', { id });
  }

  async setSecret(profileId: string, token: string): Promise<void> {
    this.profileOrRefuse(profileId);
    if (token.trim()) {
      await this.options.secrets.set(tokenKey(profileId), token.trim());
      this.tokens.add(profileId);
    } else {
      await this.options.secrets.delete(tokenKey(profileId));
      this.tokens.delete(profileId);
    }
    this.emitConnection(profileId);
  }

  async connect(id: string): Promise<void> {
    const profile = this.profileOrRefuse(id);
    if (id !== DEMO_ID && this.needsSecret(profile) && !this.tokens.has(id))
      throw new CommandRefusal(
        'needs_token',
        this.agent.dialects.get(profile.kind)?.profile.secret?.mode === 'url'
          ? `'${profile.name}' has no token; paste its address with the ?token=… part first`
          : `no token is saved for '${profile.name}'; add one first`,
        { name: profile.name },
      );
    const token = id === DEMO_ID ? () => 'demo' : undefined;
    this.agent.connect(profile, token);
    if (!this.active || !this.agent.session(this.active)) this.active = id;
    this.emitAll();
  }

  async disconnect(id: string): Promise<void> {
    await this.agent.disconnect(id);
    if (this.active === id) this.active = this.liveIds()[0];
    this.emitAll();
  }

  async setActiveConnection(id: string): Promise<void> {
    this.profileOrRefuse(id);
    this.active = id;
    this.emitAll();
  }

  /** The built-in simulator on a random loopback port, for a first look without an account. */
  async startDemo(): Promise<ProfileView> {
    if (!this.demo) {
      if (!this.options.demo)
        throw new CommandRefusal('demo_unavailable', 'this host has no demo server');
      const sim = await this.options.demo({
        promptTimeoutMs: () => this.agent.broker.timeoutMs(),
        language: () => this.agent.getSettings().language,
      });
      const profile: AdventProfile = {
        id: DEMO_ID,
        kind: 'advent',
        name: 'Demo server (simulated)',
        host: '127.0.0.1',
        port: sim.port,
      };
      this.demo = { sim, profile };
    }
    await this.connect(DEMO_ID);
    await this.setActiveConnection(DEMO_ID);
    return this.profileView(this.demo.profile);
  }

  // --- chat & voice ----------------------------------------------------------------------------

  async sendText(text: string): Promise<{ taskId: string }> {
    if (!text.trim()) throw new CommandRefusal('empty_text', 'nothing to send');
    const { id, session } = this.activeSession('chat');
    const sent = session.sendText(text);
    if (!sent.ok) throw this.turnRefused(session, sent.message);
    this.timeline.user(id, sent.taskId, text);
    return { taskId: sent.taskId };
  }

  async speak(text: string): Promise<{ taskId: string }> {
    if (!text.trim()) throw new CommandRefusal('empty_text', 'nothing to say');
    const { session } = this.activeSession('speak');
    const sent = session.speak(text);
    if (!sent.ok) throw this.turnRefused(session, sent.message);
    return { taskId: sent.taskId };
  }

  /**
   * Start a voice turn on the active connection. With `mode: 'vad'` this sends LISTEN start and
   * the server ends the input (LISTEN stop); a new voiceStart while a reply plays is a barge-in.
   */
  async voiceStart(): Promise<{ taskId: string }> {
    const { id, session } = this.activeSession('voice');
    const started = session.voiceStart();
    if (!started.ok) throw this.turnRefused(session, started.message);
    this.voiceTask = { connection: id, taskId: started.taskId, bytes: 0, logged: false };
    this.closedVoice = undefined;
    return { taskId: started.taskId };
  }

  /** PCM s16le 16 kHz mono from the microphone; the session adapts it to the server's format. */
  async voiceChunk(chunk: ArrayBuffer | Uint8Array): Promise<void> {
    const task = this.voiceTask;
    if (!task) {
      const closed = this.closedVoice;
      throw new CommandRefusal(
        'no_voice_turn',
        closed
          ? `voice turn '${closed.taskId}' was ${closed.why === 'ended' ? 'ended' : 'cancelled'}; this audio was not sent (start a new turn first)`
          : 'no voice turn is open; start one first',
      );
    }
    const bytes = chunk instanceof Uint8Array ? chunk : new Uint8Array(chunk);
    const session = this.agent.session(task.connection);
    if (!session)
      throw new CommandRefusal(
        'no_voice_turn',
        'the connection of this voice turn is gone; start a new one',
      );
    const sent = session.voiceChunk(task.taskId, bytes);
    if (!sent.ok) throw new CommandRefusal('no_voice_turn', sent.message);
    if (!sent.ignored) task.bytes += bytes.byteLength;
  }

  async voiceEnd(): Promise<void> {
    const task = this.voiceTask;
    this.voiceTask = undefined;
    if (!task) return;
    this.closedVoice = { taskId: task.taskId, why: 'ended' };
    this.agent.session(task.connection)?.voiceEnd(task.taskId);
    // 16 kHz, 16-bit mono: 32 bytes per millisecond.
    if (!task.logged)
      this.timeline.user(task.connection, task.taskId, '', Math.round(task.bytes / 32));
  }

  /** Stop the upload without END_FRAME and drop the turn's reply. */
  async voiceCancel(): Promise<void> {
    const task = this.voiceTask;
    this.voiceTask = undefined;
    if (!task) return;
    this.closedVoice = { taskId: task.taskId, why: 'cancelled' };
    this.agent.session(task.connection)?.voiceCancel(task.taskId);
  }

  // --- services, prompts, audit ----------------------------------------------------------------

  setServiceEnabled(name: string, on: boolean): Promise<void> {
    return this.agent.setServiceEnabled(name, on);
  }

  setServicePolicy(name: string, policy: Policy): Promise<void> {
    return this.agent.setServicePolicy(name, policy);
  }

  revokeGrants(name: string): Promise<void> {
    return this.agent.revokeGrants(name);
  }

  /**
   * Choose the services a connection is offered (a saved profile, the demo, or `mcp-clients` for
   * every MCP app); null offers every enabled service again. Its live sessions re-register.
   */
  async setOffer(key: string, offer: Offer | null): Promise<void> {
    if (key !== MCP_CLIENTS_OFFER) this.profileOrRefuse(key);
    await this.agent.setOffer(key, offer);
    this.events.emit('settings', await this.getSettings());
  }

  async answerPrompt(id: string, answer: PromptAnswer): Promise<boolean> {
    return this.agent.answerPrompt(id, answer);
  }

  async runService(name: string, params: Record<string, unknown>): Promise<RunResult> {
    return this.agent.runService(name, params);
  }

  queryAudit(q: AuditQuery): Promise<CommandResults['queryAudit']> {
    return this.agent.queryAudit(q);
  }

  exportAudit(q: AuditQuery, format: 'json' | 'csv'): Promise<string> {
    return this.agent.exportAudit(q, format);
  }

  verifyAudit(): Promise<CommandResults['verifyAudit']> {
    return this.agent.verifyAudit();
  }

  // --- MCP servers -----------------------------------------------------------------------------

  async listMcpServers(): Promise<McpServerView[]> {
    return this.agent.mcp.list();
  }

  saveMcpServer(input: McpServerInput): Promise<McpServerView> {
    return this.agent.mcp.save(input);
  }

  removeMcpServer(id: string): Promise<void> {
    return this.agent.mcp.remove(id);
  }

  setMcpServerEnabled(id: string, on: boolean): Promise<void> {
    return this.agent.mcp.setEnabled(id, on);
  }

  trustMcpServer(id: string, trusted: boolean): Promise<void> {
    return this.agent.mcp.setTrusted(id, trusted);
  }

  setMcpServerPolicy(id: string, policy: Policy | null): Promise<void> {
    return this.agent.mcp.setPolicy(id, policy);
  }

  restartMcpServer(id: string): Promise<void> {
    return this.agent.mcp.restart(id);
  }

  async readMcpLog(id: string): Promise<McpLogLine[]> {
    return this.agent.mcp.log(id);
  }

  listMcpImportSources(): Promise<McpImportSourceView[]> {
    return this.agent.mcp.importSourcesChecked();
  }

  previewMcpImport(request: McpImportRequest): Promise<McpImportPreview> {
    return this.agent.mcp.previewImport(request);
  }

  confirmMcpImport(id: string, names: string[]): Promise<McpServerView[]> {
    return this.agent.mcp.confirmImport(id, names);
  }

  // --- this agent in other apps (one-click setup) ----------------------------------------------

  listMcpClients(): Promise<McpClientView[]> {
    return this.mcpClients.list();
  }

  previewMcpClientSetup(app: McpClientApp): Promise<McpClientSetupPreview> {
    return this.mcpClients.preview(app);
  }

  applyMcpClientSetup(id: string): Promise<McpClientSetupResult> {
    return this.mcpClients.apply(id);
  }

  /** Attach a UI able to answer permission prompts; returns its detach function. */
  attachUi(name: string): () => void {
    const detach = this.agent.broker.attach({ name });
    return () => {
      detach();
      // Nobody is left to pick a screen: the captures waiting for one are given up now.
      if (!this.agent.broker.hasAnswerer())
        for (const id of [...this.screenWaits.keys()])
          this.endScreenWait(id)?.reject(
            new ServiceFailure('no_prompt_ui', 'the window closed before a screen was picked'),
          );
    };
  }

  // --- reminders -------------------------------------------------------------------------------

  async listReminders(): Promise<ReminderView[]> {
    return this.agent.reminders.list();
  }

  /** Cancel a waiting reminder, or clear a rung or missed one; false for an unknown id. */
  async cancelReminder(id: string): Promise<boolean> {
    return (await this.agent.reminders.cancel(id)) !== undefined;
  }

  /**
   * A reminder rang: into the conversation, then spoken — by the voice of the connection that set
   * it (the active one for the user's own) where its dialect says text verbatim (Advent SPEAK),
   * else the window speaks it (Web Speech API). Never by another server's voice: one server's
   * words would land in the other's conversation, and its model would read them.
   */
  private announce(r: ReminderView): void {
    this.timeline.reminder(r, false);
    const speaker = r.connection.id === LOCAL_CONNECTION.id ? this.active : r.connection.id;
    const session = speaker ? this.agent.session(speaker) : undefined;
    let speech: 'connection' | 'window' = 'window';
    if (session?.capabilities.speak && session.state.status === 'ready') {
      const sent = session.speak(spokenReminder(r, this.agent.getSettings().language));
      if (sent.ok) {
        speech = 'connection';
        // Its audio is heard though the connection may not be the active one.
        this.speeches.add(`${speaker}\n${sent.taskId}`);
        if (this.speeches.size > MAX_SPEECHES)
          this.speeches.delete(this.speeches.values().next().value!);
      }
    }
    this.events.emit('reminder', { reminder: r, speech });
  }

  // --- screen capture through the page (browser host) -----------------------------------------

  /**
   * Ask the page for a picture of the screen: it shows the request and, when the user agrees,
   * picks a screen with getDisplayMedia and answers with `answerScreen`.
   */
  captureFromPage(request: Parameters<ScreenSource>[0]): Promise<ScreenImage> {
    if (!this.agent.broker.hasAnswerer())
      return Promise.reject(
        new ServiceFailure(
          'no_prompt_ui',
          'no window is open, so nobody can pick the screen to capture; it was not captured',
        ),
      );
    const id = `s-${this.agent.ids.hex(8)}`;
    const clock = this.agent.clockSource;
    const expiresAt = clock.now() + SCREEN_PICK_MS;
    return new Promise<ScreenImage>((resolve, reject) => {
      const timer = clock.setTimeout(
        () =>
          this.endScreenWait(id)?.reject(
            new ServiceFailure(
              'prompt_timeout',
              'the user did not pick a screen in time; nothing was captured',
            ),
          ),
        SCREEN_PICK_MS,
      );
      const onAbort = (): void =>
        this.endScreenWait(id)?.reject(new ServiceFailure('cancelled', 'the capture was stopped'));
      request.signal.addEventListener('abort', onAbort, { once: true });
      this.screenWaits.set(id, {
        resolve,
        reject,
        end: () => {
          clock.clearTimeout(timer);
          request.signal.removeEventListener('abort', onAbort);
        },
      });
      this.events.emit('screenRequest', { id, connection: request.connection, expiresAt });
    });
  }

  /** The page's answer: a capture, or null when the user declined. False for an unknown id. */
  // --- MCP clients of this agent -----------------------------------------------------------------

  /**
   * For the terminal host, which has no Settings page, at start: the HTTP endpoint's token when it
   * is made now (there was none, or `renew`), to be shown that once; undefined when one was made
   * before (it was shown then, and is not shown again). Not a contract command: no page can read
   * a token back.
   */
  async mcpHttpTokenAtStart(renew: boolean): Promise<string | undefined> {
    if (!renew && (await this.mcpServe.hasHttpToken())) return undefined;
    return this.mcpServe.resetHttpToken();
  }

  resetMcpHttpToken(): Promise<string> {
    return this.mcpServe.resetHttpToken();
  }

  async answerScreen(id: string, capture: ScreenCapture | null): Promise<boolean> {
    const wait = this.endScreenWait(id);
    if (!wait) return false;
    if (capture === null) {
      wait.reject(
        new ServiceFailure('denied', 'the user declined to share the screen; nothing was captured'),
      );
      return true;
    }
    wait.resolve({
      data: Buffer.from(capture.data, 'base64'),
      mimeType: capture.mimeType,
      width: capture.width,
      height: capture.height,
    });
    return true;
  }

  private endScreenWait(id: string): ScreenWait | undefined {
    const wait = this.screenWaits.get(id);
    if (!wait) return undefined;
    this.screenWaits.delete(id);
    wait.end();
    this.events.emit('screenRequestDone', { id });
    return wait;
  }

  chat(): ChatItem[] {
    return this.timeline.list();
  }

  async close(): Promise<void> {
    for (const id of [...this.screenWaits.keys()])
      this.endScreenWait(id)?.reject(new ServiceFailure('cancelled', 'the app is closing'));
    // Client sessions end first: their waiting calls are withdrawn and recorded as such.
    await this.mcpServe.close();
    await this.agent.close();
    // After the agent: what it reports while closing (an interrupted reply) still joins the chat.
    this.timeline.dispose();
    this.moods.dispose();
    await this.demo?.sim.stop();
    this.demo = undefined;
  }

  // -------------------------------------------------------------------------------------------

  private async stopDemo(): Promise<void> {
    await this.agent.disconnect(DEMO_ID);
    await this.demo?.sim.stop();
    this.demo = undefined;
    if (this.active === DEMO_ID) this.active = this.liveIds()[0];
    this.events.emit('connectionRemoved', { id: DEMO_ID });
  }

  /** The active connection, if it can carry `what` now; otherwise a refusal saying why. */
  private activeSession(what: 'chat' | 'voice' | 'speak'): { id: string; session: LiveSession } {
    const id = this.active;
    const session = id ? this.agent.session(id) : undefined;
    if (!id || !session)
      throw new CommandRefusal(
        'no_active_connection',
        'no connection is active; connect to a server first',
      );
    if (!session.capabilities[what]) {
      const kind = this.agent.dialects.get(session.kind)?.profile.title.en ?? session.kind;
      throw new CommandRefusal(
        'not_supported',
        `${what === 'speak' ? 'speaking a given text' : what} is not possible on '${session.name}' (${kind})`,
        { name: session.name, what },
      );
    }
    return { id, session };
  }

  /** A turn the session refused: not connected (the usual reason), or its own message. */
  private turnRefused(session: LiveSession, message: string): CommandRefusal {
    return session.state.status === 'ready'
      ? new CommandRefusal('connection_not_ready', message, { name: session.name })
      : new CommandRefusal('connection_not_ready', notReady(session.state), { name: session.name });
  }

  private profileOrRefuse(id: string): Profile {
    const profile = this.profile(id);
    if (!profile)
      throw new CommandRefusal('unknown_connection', `there is no connection '${id}'`, { id });
    return profile;
  }

  /** Whether this profile's kind cannot connect without a saved secret. */
  private needsSecret(profile: Pick<Profile, 'kind'>): boolean {
    const mode = this.agent.dialects.get(profile.kind)?.profile.secret?.mode;
    return mode === 'required' || mode === 'url';
  }

  private profiles(): Profile[] {
    const saved = this.agent.getSettings().connections;
    return this.demo ? [this.demo.profile, ...saved] : [...saved];
  }

  private profile(id: string): Profile | undefined {
    return this.profiles().find((p) => p.id === id);
  }

  private liveIds(): string[] {
    return this.profiles()
      .map((p) => p.id)
      .filter((id) => this.agent.session(id));
  }

  private profileView(p: Profile): ProfileView {
    return {
      ...p,
      demo: p.id === DEMO_ID || undefined,
      hasToken: p.id === DEMO_ID || this.tokens.has(p.id),
      address: addressOf(p),
    } as ProfileView;
  }

  private connectionView(p: Profile): ConnectionView {
    const session = this.agent.session(p.id);
    return {
      profile: this.profileView(p),
      state: session?.state ?? { status: 'idle' },
      registration: session ? this.registrations.get(p.id) : undefined,
      active: this.active === p.id,
      capabilities: session?.capabilities ??
        this.agent.dialects.get(p.kind)?.profile.capabilities ?? {
          chat: false,
          voice: false,
          speak: false,
        },
    };
  }

  private emitConnection(id: string): void {
    const p = this.profile(id);
    if (p) this.events.emit('connection', this.connectionView(p));
  }

  /** Active flags change together: send every connection. */
  private emitAll(): void {
    for (const p of this.profiles()) this.events.emit('connection', this.connectionView(p));
  }
}

function stripUndefined<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined && v !== '')) as T;
}

/** Where a profile connects, for people: `host:port` (IPv6 in brackets) or its address. */
function addressOf(p: Profile): string {
  const { host, port, url } = p as { host?: unknown; port?: unknown; url?: unknown };
  if (typeof url === 'string') return url;
  if (typeof host === 'string' && typeof port === 'number')
    return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
  return '';
}
