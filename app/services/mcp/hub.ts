/**
 * The MCP hub: every imported server, kept in step with the registry. Each server's tools become
 * services `<server>_<tool>` offered to every voice server through the one gate; when a server
 * starts, re-lists (`list_changed`), fails or is removed, the registry changes in one batch, so
 * every live connection re-registers once. The hub also answers what the policy needs about an
 * imported tool: its default (ask, unless its server is trusted and it claims to only read), its
 * grant identity (a changed server is a new one), and the hint the prompt shows.
 */
import { readFile, stat } from 'node:fs/promises';
import os from 'node:os';
import type { Clock } from '../../clock.js';
import {
  MCP_IMPORT_SOURCES,
  type McpImportCandidate,
  type McpImportPreview,
  type McpImportRequest,
  type McpImportSourceView,
  type McpLogLine,
  type McpServerConfig,
  type McpServerInput,
  type McpServerView,
  type McpToolView,
} from '../../contract/mcp.js';
import type { Policy, PromptHint } from '../../contract/policy.js';
import { Emitter } from '../../events.js';
import type { IdSource } from '../../ids.js';
import type { SecretStore } from '../../settings/secrets.js';
import type { Settings } from '../../settings/schema.js';
import type { Registry } from '../registry.js';
import type { Service } from '../service.js';
import { autoAllowed, toolService } from './adapter.js';
import { type ParsedServer, parseServersJson } from './config.js';
import { serverIdentity } from './identity.js';
import { importSourcePath } from './import-sources.js';
import { createSpawnLauncher, type McpLauncher } from './launcher.js';
import { MCP_LIMITS } from './limits.js';
import { assignServiceNames, serverPrefix } from './names.js';
import {
  DEFAULT_CALL_TIMEOUT_SEC,
  DEFAULT_MCP_TIMING,
  McpServerConnection,
  type McpTiming,
  type ServerSecrets,
} from './server.js';

/** The part of SettingsStore the hub needs. */
export interface HubSettings {
  get(): Settings;
  update(mutator: (draft: Settings) => void): Promise<unknown>;
}

export interface McpHubOptions {
  registry: Registry;
  settings: HubSettings;
  secrets: SecretStore;
  clock: Clock;
  ids: IdSource;
  version: string;
  launcher?: McpLauncher;
  /** The PATH servers are started with (hosts pass the login shell's). */
  searchPath?: () => Promise<string | undefined>;
  /** Servers for this run only (`--mcp-config`): not saved; their secrets stay in memory. */
  runOnly?: readonly ParsedServer[];
  timing?: Partial<McpTiming>;
  /** Forget the remembered grants of a service (a removed server's tools). */
  revokeGrants?: (service: string) => Promise<void>;
  platform?: NodeJS.Platform;
  home?: string;
  env?: Readonly<Record<string, string | undefined>>;
  fetch?: typeof fetch;
}

export type McpHubEvents = {
  server: McpServerView;
  removed: { id: string };
  /** Trust or a server policy changed: the services' effective policies changed with it. */
  policies: undefined;
};

interface Registered {
  serverId: string;
  tool: string;
  signature: string;
}

interface PendingImport {
  from: string;
  servers: ParsedServer[];
  at: number;
}

const secretKey = (id: string, kind: 'env' | 'header', name: string): string =>
  `mcp:${id}:${kind}:${name}`;
const IMPORT_TTL_MS = 10 * 60_000;

export class McpHub {
  readonly events = new Emitter<McpHubEvents>();
  private readonly connections = new Map<string, McpServerConnection>();
  private readonly runOnly: McpServerConfig[] = [];
  private readonly memorySecrets = new Map<string, string>();
  private readonly registered = new Map<string, Registered>();
  /** The service name each server's tools were given, kept for them (assignServiceNames). */
  private readonly given = new Map<string, { server: string; names: Map<string, string> }>();
  /** Problems met when registering (a schema the registry refused), by server id and tool. */
  private readonly registerProblems = new Map<string, Map<string, string>>();
  private readonly pendingImports = new Map<string, PendingImport>();
  private readonly launcher: McpLauncher;
  private readonly timing: McpTiming;
  private closed = false;
  private cache:
    | { settings: Settings; defaults: Record<string, Policy>; identities: Map<string, string> }
    | undefined;

  constructor(private readonly o: McpHubOptions) {
    this.launcher = o.launcher ?? createSpawnLauncher({ platform: o.platform });
    this.timing = { ...DEFAULT_MCP_TIMING, ...o.timing };
    o.runOnly?.forEach((parsed, i) => {
      const id = `cli-mcp-${i + 1}`;
      const { config, secrets } = this.configOf(parsed, id);
      for (const [k, v] of secrets) this.memorySecrets.set(k, v);
      this.runOnly.push(config);
    });
  }

  /** Start every enabled server (in the background: their states tell how it goes). */
  start(): void {
    for (const config of this.configs()) this.connection(config);
    for (const config of this.configs())
      if (!config.disabled) this.connections.get(config.id)!.start();
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.connections.values()].map((c) => c.stop()));
  }

  // --- what the rest of the agent asks ------------------------------------------------------

  /** Saved servers in settings order, then this run's. */
  configs(): McpServerConfig[] {
    return [...(this.o.settings.get().mcpServers ?? []), ...this.runOnly];
  }

  private config(id: string): McpServerConfig | undefined {
    return this.configs().find((c) => c.id === id);
  }

  /**
   * What the policy asks on every call, computed once per change (of the settings or of the
   * registered tools) rather than per call: servers may bring hundreds of tools.
   */
  private derived(): {
    settings: Settings;
    defaults: Record<string, Policy>;
    identities: Map<string, string>;
  } {
    const settings = this.o.settings.get();
    if (this.cache?.settings === settings) return this.cache;
    const configs = new Map(this.configs().map((c) => [c.id, c]));
    const defaults: Record<string, Policy> = {};
    const identities = new Map<string, string>();
    for (const [name, reg] of this.registered) {
      const config = configs.get(reg.serverId);
      const hint = this.o.registry.get(name)?.hint;
      if (!config || !hint) continue;
      defaults[name] =
        config.policy ?? (autoAllowed(hint, config.trusted === true) ? 'allow' : 'ask');
      identities.set(name, serverIdentity(config));
    }
    this.cache = { settings, defaults, identities };
    return this.cache;
  }

  /** Default policies of the imported services: the server's, else ask (trusted readers: allow). */
  policyDefaults(): Record<string, Policy> {
    return this.derived().defaults;
  }

  /** Grant identity of an imported service: its server's name and what it runs or where. */
  identityOf(service: string): string | undefined {
    return this.derived().identities.get(service);
  }

  hintOf(service: string): PromptHint | undefined {
    const reg = this.registered.get(service);
    const config = reg && this.config(reg.serverId);
    const hint = this.o.registry.get(service)?.hint;
    if (!config || !hint) return undefined;
    return {
      server: config.name,
      trusted: config.trusted === true,
      ...(hint.readOnly !== undefined ? { readOnly: hint.readOnly } : {}),
      ...(hint.destructive !== undefined ? { destructive: hint.destructive } : {}),
      ...(hint.openWorld !== undefined ? { openWorld: hint.openWorld } : {}),
    };
  }

  /** Whether `name` could be a tool of a configured server (for `--allow`/`--disable` checks). */
  mayOwn(name: string): boolean {
    return this.configs().some((c) => name.startsWith(`${serverPrefix(c.name)}_`));
  }

  // --- views -------------------------------------------------------------------------------

  list(): McpServerView[] {
    return this.configs().map((c) => this.view(c));
  }

  view(config: McpServerConfig): McpServerView {
    const conn = this.connections.get(config.id);
    const names = new Map(
      [...this.registered].filter(([, r]) => r.serverId === config.id).map(([n, r]) => [r.tool, n]),
    );
    const problems = this.registerProblems.get(config.id);
    const tools: McpToolView[] = (conn?.tools ?? []).map((t) => ({
      tool: t.name,
      title: t.title,
      hint: t.hint,
      ...(names.has(t.name) ? { service: names.get(t.name) } : {}),
      ...(problems?.has(t.name) ? { problem: problems.get(t.name) } : {}),
    }));
    for (const p of conn?.problems ?? [])
      tools.push({ tool: p.tool, title: p.tool, hint: {}, problem: p.problem });
    return {
      id: config.id,
      name: config.name,
      transport: config.transport,
      ...(config.command !== undefined ? { command: config.command } : {}),
      args: [...(config.args ?? [])],
      ...(config.cwd !== undefined ? { cwd: config.cwd } : {}),
      ...(config.url !== undefined ? { url: config.url } : {}),
      env: { ...config.env },
      secretEnv: [...(config.secretEnv ?? [])],
      headers: { ...config.headers },
      secretHeaders: [...(config.secretHeaders ?? [])],
      enabled: config.disabled !== true,
      trusted: config.trusted === true,
      ...(config.policy ? { policy: config.policy } : {}),
      timeoutSec: config.timeoutSec ?? DEFAULT_CALL_TIMEOUT_SEC,
      runOnly: this.runOnly.some((r) => r.id === config.id),
      state: conn?.state ?? { status: 'stopped' },
      tools,
      ...(conn?.serverInfo ? { serverInfo: conn.serverInfo } : {}),
    };
  }

  log(id: string): McpLogLine[] {
    const conn = this.connections.get(id);
    if (!conn) throw new Error(`there is no MCP server '${id}'`);
    return conn.log.list();
  }

  // --- editing -----------------------------------------------------------------------------

  async save(input: McpServerInput): Promise<McpServerView> {
    if (input.id && this.runOnly.some((r) => r.id === input.id))
      throw new Error('a server given with --mcp-config cannot be edited here; edit its file');
    const id = input.id ?? `mcp-${this.o.ids.hex(8)}`;
    const old = this.o.settings.get().mcpServers?.find((c) => c.id === id);
    if (input.id && !old) throw new Error(`there is no MCP server '${input.id}'`);
    const taken = this.configs().find(
      (c) => c.id !== id && c.name.toLowerCase() === input.name.trim().toLowerCase(),
    );
    if (taken) throw new Error(`an MCP server named '${taken.name}' already exists`);
    if (input.transport === 'stdio' && !input.command?.trim())
      throw new Error('a server the agent runs needs a command');
    if (input.transport !== 'stdio' && !input.url)
      throw new Error('a server at an address needs its URL (http:// or https://)');

    const secretEnv = [...new Set(input.secretEnv ?? [])];
    const secretHeaders = [...new Set(input.secretHeaders ?? [])];
    const writes: [string, string][] = [];
    const keep = (kind: 'env' | 'header', names: string[], values: Record<string, string>) => {
      for (const name of names) {
        const value = values[name];
        if (value) writes.push([secretKey(id, kind, name), value]);
        else if (!(kind === 'env' ? old?.secretEnv : old?.secretHeaders)?.includes(name))
          throw new Error(
            `the secret ${kind === 'env' ? 'variable' : 'header'} '${name}' has no value`,
          );
      }
    };
    const stdio = input.transport === 'stdio';
    keep('env', stdio ? secretEnv : [], input.env ?? {});
    keep('header', stdio ? [] : secretHeaders, input.headers ?? {});
    const plain = (values: Record<string, string> | undefined, secret: string[]) =>
      Object.fromEntries(Object.entries(values ?? {}).filter(([k]) => !secret.includes(k)));

    const config: McpServerConfig = stripEmpty({
      id,
      name: input.name.trim(),
      transport: input.transport,
      ...(stdio
        ? {
            command: input.command?.trim(),
            args: input.args,
            cwd: input.cwd,
            env: plain(input.env, secretEnv),
            secretEnv,
          }
        : {
            url: input.url,
            fixedTransport: input.fixedTransport,
            headers: plain(input.headers, secretHeaders),
            secretHeaders,
          }),
      disabled: input.disabled,
      trusted: input.trusted,
      policy: input.policy,
      timeoutSec: input.timeoutSec,
    });
    for (const [key, value] of writes) await this.o.secrets.set(key, value);
    await this.o.settings.update((draft) => {
      const list = (draft.mcpServers ??= []);
      const at = list.findIndex((c) => c.id === id);
      if (at >= 0) list[at] = config;
      else list.push(config);
    });
    // Secrets no longer named are deleted, so a removed token does not linger in the store.
    for (const name of old?.secretEnv ?? [])
      if (!config.secretEnv?.includes(name))
        await this.o.secrets.delete(secretKey(id, 'env', name));
    for (const name of old?.secretHeaders ?? [])
      if (!config.secretHeaders?.includes(name))
        await this.o.secrets.delete(secretKey(id, 'header', name));

    const conn = this.connection(config);
    conn.updateConfig(config);
    if (config.disabled) await conn.stop();
    else if (!old || needsRestart(old, config) || writes.length || conn.state.status !== 'ready')
      await conn.restart();
    this.sync();
    this.events.emit('policies', undefined);
    return this.emitView(id);
  }

  async remove(id: string): Promise<void> {
    if (this.runOnly.some((r) => r.id === id))
      throw new Error('a server given with --mcp-config is there for this run only');
    const config = this.o.settings.get().mcpServers?.find((c) => c.id === id);
    if (!config) throw new Error(`there is no MCP server '${id}'`);
    const conn = this.connections.get(id);
    const services = [...this.registered].filter(([, r]) => r.serverId === id).map(([n]) => n);
    // Its tools' policies go with it: a policy is kept by service name (grants by the server's
    // identity), so a later server of the same name would inherit an "allow". A server that is off
    // lists no tools; then its tools are the stored names only it could own (its prefix, no other
    // server's, no service registered now).
    const prefix = `${serverPrefix(config.name)}_`;
    const others = this.configs().flatMap((c) => (c.id === id ? [] : `${serverPrefix(c.name)}_`));
    const owned = (name: string): boolean =>
      services.includes(name) ||
      (name.startsWith(prefix) &&
        !this.o.registry.get(name) &&
        !others.some((p) => name.startsWith(p)));
    this.connections.delete(id);
    await conn?.stop();
    await this.o.settings.update((draft) => {
      draft.mcpServers = (draft.mcpServers ?? []).filter((c) => c.id !== id);
      for (const name of Object.keys(draft.services).filter(owned))
        delete draft.services[name]!.policy;
    });
    for (const name of config.secretEnv ?? [])
      await this.o.secrets.delete(secretKey(id, 'env', name));
    for (const name of config.secretHeaders ?? [])
      await this.o.secrets.delete(secretKey(id, 'header', name));
    for (const name of services) await this.o.revokeGrants?.(name).catch(() => undefined);
    this.registerProblems.delete(id);
    this.sync();
    this.events.emit('removed', { id });
  }

  async setEnabled(id: string, on: boolean): Promise<void> {
    const config = this.mustConfig(id);
    if ((config.disabled !== true) === on) return;
    await this.patch(id, { disabled: on ? undefined : true });
    const conn = this.connection(this.mustConfig(id));
    if (on) conn.start();
    else await conn.stop();
    this.emitView(id);
  }

  async setTrusted(id: string, trusted: boolean): Promise<void> {
    await this.patch(id, { trusted: trusted ? true : undefined });
    this.refreshServices(id);
  }

  async setPolicy(id: string, policy: Policy | null): Promise<void> {
    await this.patch(id, { policy: policy ?? undefined });
    this.refreshServices(id);
  }

  async restart(id: string): Promise<void> {
    const config = this.mustConfig(id);
    const conn = this.connection(config);
    if (config.disabled) throw new Error(`'${config.name}' is switched off; switch it on first`);
    await conn.restart();
  }

  private mustConfig(id: string): McpServerConfig {
    const config = this.config(id);
    if (!config) throw new Error(`there is no MCP server '${id}'`);
    return config;
  }

  /** Change a few fields of a saved server (in memory for a run-only one). */
  private async patch(id: string, fields: Partial<McpServerConfig>): Promise<void> {
    const runOnly = this.runOnly.findIndex((r) => r.id === id);
    const apply = (c: McpServerConfig): McpServerConfig => stripEmpty({ ...c, ...fields });
    if (runOnly >= 0) this.runOnly[runOnly] = apply(this.runOnly[runOnly]!);
    else {
      this.mustConfig(id);
      await this.o.settings.update((draft) => {
        draft.mcpServers = (draft.mcpServers ?? []).map((c) => (c.id === id ? apply(c) : c));
      });
    }
    this.cache = undefined;
    this.connections.get(id)?.updateConfig(this.mustConfig(id));
  }

  /** Trust changes risk labels (the signature has it: sync re-registers); policies follow. */
  private refreshServices(id: string): void {
    this.sync();
    this.events.emit('policies', undefined);
    this.emitView(id);
  }

  // --- import ------------------------------------------------------------------------------

  importSources(): McpImportSourceView[] {
    return MCP_IMPORT_SOURCES.map((source) => ({
      source,
      path: importSourcePath(source, this.platformInfo()),
      exists: false,
    }));
  }

  async importSourcesChecked(): Promise<McpImportSourceView[]> {
    return Promise.all(
      this.importSources().map(async (s) => ({
        ...s,
        exists: await stat(s.path).then(
          (st) => st.isFile(),
          () => false,
        ),
      })),
    );
  }

  private platformInfo() {
    return {
      platform: this.o.platform ?? process.platform,
      home: this.o.home ?? os.homedir(),
      env: this.o.env ?? process.env,
    };
  }

  /** Read servers from a file or pasted JSON; nothing is saved or started here. */
  async previewImport(request: McpImportRequest): Promise<McpImportPreview> {
    let text: string;
    let from: string;
    if ('json' in request) {
      text = request.json;
      from = 'pasted JSON';
    } else {
      const file =
        'path' in request ? request.path : importSourcePath(request.source, this.platformInfo());
      from = file;
      const info = await stat(file).catch(() => undefined);
      if (!info?.isFile()) throw new Error(`there is no file at ${file}`);
      if (info.size > MCP_LIMITS.importFileBytes)
        throw new Error(
          `${file} is ${info.size} bytes; at most ${MCP_LIMITS.importFileBytes} are read`,
        );
      text = await readFile(file, 'utf8');
    }
    const parsed = parseServersJson(text);
    const id = `imp-${this.o.ids.hex(8)}`;
    const now = this.o.clock.now();
    for (const [key, p] of this.pendingImports)
      if (now - p.at > IMPORT_TTL_MS) this.pendingImports.delete(key);
    while (this.pendingImports.size >= MCP_LIMITS.pendingImports)
      this.pendingImports.delete(this.pendingImports.keys().next().value!);
    this.pendingImports.set(id, { from, servers: parsed.servers, at: now });
    const saved = this.o.settings.get().mcpServers ?? [];
    return {
      id,
      from,
      problems: parsed.problems,
      servers: parsed.servers.map((s): McpImportCandidate => ({
        name: s.name,
        transport: s.transport,
        ...(s.command !== undefined ? { command: s.command } : {}),
        args: s.args,
        ...(s.url !== undefined ? { url: s.url } : {}),
        secretEnv: s.secretEnv,
        secretHeaders: s.secretHeaders,
        envNames: Object.keys(s.env),
        headerNames: Object.keys(s.headers),
        disabled: s.disabled,
        trusted: s.trusted,
        replaces: saved.some((c) => c.name.toLowerCase() === s.name.toLowerCase()),
        notes: s.notes,
      })),
    };
  }

  /** Save (and start) the chosen servers of a preview; a saved one of the same name is replaced. */
  async confirmImport(id: string, names: readonly string[]): Promise<McpServerView[]> {
    const pending = this.pendingImports.get(id);
    if (!pending || this.o.clock.now() - pending.at > IMPORT_TTL_MS)
      throw new Error('this import preview has expired; read the file or the pasted JSON again');
    this.pendingImports.delete(id);
    const chosen = pending.servers.filter((s) => names.includes(s.name));
    const views: McpServerView[] = [];
    for (const parsed of chosen) {
      const existing = (this.o.settings.get().mcpServers ?? []).find(
        (c) => c.name.toLowerCase() === parsed.name.toLowerCase(),
      );
      if (existing) await this.remove(existing.id);
      const { config } = this.configOf(parsed, '');
      views.push(
        await this.save({
          ...config,
          id: undefined,
          env: parsed.env,
          headers: parsed.headers,
        }),
      );
    }
    return views;
  }

  /** A parsed entry as a config (secret values split out as SecretStore writes). */
  private configOf(
    parsed: ParsedServer,
    id: string,
  ): { config: McpServerConfig; secrets: [string, string][] } {
    const stdio = parsed.transport === 'stdio';
    const secrets: [string, string][] = [];
    for (const name of parsed.secretEnv)
      secrets.push([secretKey(id, 'env', name), parsed.env[name]!]);
    for (const name of parsed.secretHeaders)
      secrets.push([secretKey(id, 'header', name), parsed.headers[name]!]);
    const plain = (values: Record<string, string>, secret: string[]) =>
      Object.fromEntries(Object.entries(values).filter(([k]) => !secret.includes(k)));
    const config: McpServerConfig = stripEmpty({
      id,
      name: parsed.name,
      transport: parsed.transport,
      ...(stdio
        ? {
            command: parsed.command,
            args: parsed.args,
            cwd: parsed.cwd,
            env: plain(parsed.env, parsed.secretEnv),
            secretEnv: parsed.secretEnv,
          }
        : {
            url: parsed.url,
            fixedTransport: parsed.fixedTransport || undefined,
            headers: plain(parsed.headers, parsed.secretHeaders),
            secretHeaders: parsed.secretHeaders,
          }),
      disabled: parsed.disabled || undefined,
      trusted: parsed.trusted || undefined,
      timeoutSec: parsed.timeoutSec,
    });
    return { config, secrets };
  }

  // --- connections and the registry ---------------------------------------------------------

  private connection(config: McpServerConfig): McpServerConnection {
    let conn = this.connections.get(config.id);
    if (conn) return conn;
    conn = new McpServerConnection(config, {
      clock: this.o.clock,
      ids: this.o.ids,
      launcher: this.launcher,
      searchPath: this.o.searchPath ?? (async () => undefined),
      secrets: (c) => this.secretsOf(c),
      version: this.o.version,
      timing: this.timing,
      platform: this.o.platform,
      fetch: this.o.fetch,
    });
    const id = config.id;
    conn.events.on('tools', () => {
      this.sync();
      this.emitView(id);
    });
    conn.events.on('state', () => this.emitView(id));
    this.connections.set(id, conn);
    return conn;
  }

  private async secretsOf(config: McpServerConfig): Promise<ServerSecrets> {
    const read = async (key: string) =>
      this.memorySecrets.get(key) ?? (await this.o.secrets.get(key)) ?? undefined;
    const env: Record<string, string> = {};
    const headers: Record<string, string> = {};
    for (const name of config.secretEnv ?? []) {
      const v = await read(secretKey(config.id, 'env', name));
      if (v !== undefined) env[name] = v;
    }
    for (const name of config.secretHeaders ?? []) {
      const v = await read(secretKey(config.id, 'header', name));
      if (v !== undefined) headers[name] = v;
    }
    return { env, headers };
  }

  /**
   * Make the registry hold exactly the tools of the servers that have them, under names assigned
   * for all servers at once (settings order). One registry batch: one re-registration everywhere.
   */
  private sync(): void {
    if (this.closed) return;
    this.cache = undefined;
    const registry = this.o.registry;
    const configs = this.configs().filter((c) => this.connections.has(c.id));
    const reserved = new Set(
      registry
        .list()
        .map((e) => e.service.name)
        .filter((n) => !this.registered.has(n)),
    );
    const assigned = assignServiceNames(
      configs.map((c) => ({
        id: c.id,
        name: c.name,
        tools: (this.connections.get(c.id)?.tools ?? []).map((t) => t.name),
      })),
      reserved,
      new Map(
        configs.flatMap((c) => {
          const kept = this.given.get(c.id);
          return kept?.server === c.name ? [[c.id, kept.names] as const] : [];
        }),
      ),
    );
    this.remember(configs, assigned);
    const wanted = new Map<string, { service: Service; reg: Registered }>();
    for (const config of configs) {
      const conn = this.connections.get(config.id)!;
      const names = assigned.get(config.id)!;
      for (const tool of conn.tools) {
        const name = names.get(tool.name)!;
        // The inlined schema is left out: it follows from the input schema, and may be 4× its size.
        const { shownSchema: _derived, ...listed } = tool;
        const signature = JSON.stringify([
          listed,
          config.name,
          config.trusted === true,
          conn.timeoutMs,
        ]);
        wanted.set(name, {
          reg: { serverId: config.id, tool: tool.name, signature },
          service: toolService({
            name,
            server: { id: config.id, name: config.name, trusted: config.trusted === true },
            tool,
            timeoutMs: conn.timeoutMs,
            caller: conn,
          }),
        });
      }
    }
    const touched = new Set<string>();
    registry.batch(() => {
      for (const [name, reg] of [...this.registered]) {
        const want = wanted.get(name);
        if (want && want.reg.signature === reg.signature) continue;
        registry.remove(name);
        this.registered.delete(name);
        touched.add(reg.serverId);
      }
      for (const [name, { service, reg }] of wanted) {
        if (this.registered.has(name)) continue;
        touched.add(reg.serverId);
        const problems = this.registerProblems.get(reg.serverId) ?? new Map<string, string>();
        this.registerProblems.set(reg.serverId, problems);
        problems.delete(reg.tool);
        try {
          registry.add(service);
          this.registered.set(name, reg);
        } catch (err) {
          // The registry refused it (an invalid schema): a problem on the row, nothing else.
          problems.set(reg.tool, (err as Error).message.replace(/^service '[^']*': /, ''));
        }
      }
    });
    for (const id of touched) if (this.connections.has(id)) this.emitView(id);
  }

  /**
   * Keep the names just given for the next sync, so each stays with its tool (assignServiceNames).
   * Bounded: a server's tools not listed now are forgotten oldest first past twice the tools it may
   * list, and a server no longer configured is forgotten whole.
   */
  private remember(
    configs: readonly McpServerConfig[],
    assigned: ReadonlyMap<string, ReadonlyMap<string, string>>,
  ): void {
    // A renamed server's tools are named anew, after its new name.
    const names = new Map(configs.map((c) => [c.id, c.name]));
    for (const [id, kept] of [...this.given])
      if (names.get(id) !== kept.server) this.given.delete(id);
    for (const [id, given] of assigned) {
      const kept = this.given.get(id)?.names ?? new Map<string, string>();
      this.given.set(id, { server: names.get(id)!, names: kept });
      for (const [tool, name] of given) {
        // Listed now: the newest (Map order is the order of forgetting).
        kept.delete(tool);
        kept.set(tool, name);
      }
      for (const tool of kept.keys()) {
        if (kept.size <= 2 * MCP_LIMITS.toolsPerServer) break;
        kept.delete(tool);
      }
    }
  }

  private emitView(id: string): McpServerView {
    const config = this.mustConfig(id);
    const view = this.view(config);
    this.events.emit('server', view);
    return view;
  }
}

/** What makes a running server need a new connection (everything but trust, policy, timeout). */
function needsRestart(a: McpServerConfig, b: McpServerConfig): boolean {
  const key = (c: McpServerConfig) =>
    JSON.stringify([
      c.name,
      c.transport,
      c.command,
      c.args,
      c.cwd,
      c.url,
      c.env,
      c.headers,
      c.secretEnv,
      c.secretHeaders,
      c.fixedTransport,
    ]);
  return key(a) !== key(b);
}

/** Leave out undefined fields and empty lists and maps, so settings stay small and valid. */
function stripEmpty<T extends object>(o: T): T {
  return Object.fromEntries(
    Object.entries(o).filter(([, v]) => {
      if (v === undefined || v === '') return false;
      if (Array.isArray(v)) return v.length > 0;
      if (typeof v === 'object' && v !== null) return Object.keys(v).length > 0;
      return true;
    }),
  ) as T;
}
