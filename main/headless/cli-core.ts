/**
 * The core as a command-line host opens it (`run`, `ui`): one CoreApi over the data folder, with
 * the servers named by flags saved as profiles for this run only. Their tokens stay in memory
 * (RunSecretStore) and the profiles are deleted again at close, so a run leaves no trace of them.
 */
import path from 'node:path';
import { CoreApi, type DemoFactory } from '../../app/api.js';
import type { SettingsView } from '../../app/contract/commands.js';
import { checkCommand } from '../../app/contract/validate.js';
import { FileSecretStore } from '../../app/settings/secrets.js';
import { DialectSet } from '../../app/wire/dialect.js';
import { DIALECTS } from '../../app/wire/dialects.js';
import { type SessionFlags, overridesOf } from './args.js';
import { type FlagConnection, flagConnections } from './flag-profiles.js';
import type { CliIo } from './io.js';
import { readMcpConfigs } from './mcp-config.js';
import { resolvedMcpLaunch } from './mcp-launch.js';
import { RunSecretStore } from './run-secrets.js';
import { oneLine } from './terminal-text.js';

export interface CliCoreOptions {
  host: SettingsView['host'];
  demo?: DemoFactory;
  /** Whether the user's saved "connect at start" profiles connect too (the browser UI: yes). */
  autoConnect: boolean;
}

export class CliCore {
  private saved: string[] = [];
  /** After `connect()`: the flags' first server that chats, if any. */
  chatId: string | undefined;
  private closing: Promise<void> | undefined;

  private constructor(
    readonly api: CoreApi,
    /** The flags' servers, in the kinds' order (the first that chats gets typed lines). */
    readonly targets: readonly FlagConnection[],
    private readonly secrets: RunSecretStore,
  ) {}

  /**
   * Read the flags' servers (their token files, the identities kept for them), then open the
   * core. Rejects with a message for the user; nothing is connected yet, so a host can listen to
   * the core's events before `connect()`.
   */
  static async open(args: SessionFlags, io: CliIo, options: CliCoreOptions): Promise<CliCore> {
    const dataDir = path.resolve(args.dataDir ?? io.dataDir());
    const dialects = io.dialects ?? DIALECTS;
    const targets = await flagConnections(args.servers, new DialectSet(dialects), dataDir);
    const saved = await FileSecretStore.open(path.join(dataDir, 'secrets.json'));
    for (const warning of saved.warnings) io.stderr.write(`advent-agent: ${oneLine(warning)}\n`);
    const secrets = new RunSecretStore(saved);
    const mcp = await readMcpConfigs(args.mcpConfigs);
    for (const warning of mcp.warnings) io.stderr.write(`advent-agent: ${oneLine(warning)}\n`);
    const api = await CoreApi.open({
      mcp: { runOnly: mcp.servers },
      dataDir,
      defaultFilesRoot: io.filesRoot(),
      secrets,
      host: options.host,
      version: io.version,
      overrides: overridesOf(args),
      timing: io.timing,
      wsTiming: io.wsTiming,
      demo: options.demo,
      dialects,
      autoConnect: options.autoConnect,
      mcpLaunch: resolvedMcpLaunch(dataDir, io),
      ...(io.mcpClientPlatform && { mcpClientPlatform: io.mcpClientPlatform }),
      ...(args.mcpHttp && { mcpHttp: args.mcpHttp }),
    });
    if (args.mcpHttp) {
      // The terminal has no Settings page: the address is told here, and its key once, when it is
      // made (as Settings shows it once): never again at each start, where scrollback and
      // redirected stderr would keep it.
      const state = api.mcpServe.state();
      if (state.status !== 'listening') {
        io.stderr.write(
          `advent-agent: MCP over HTTP did not start: ${oneLine(state.status === 'failed' ? state.message : state.status)}\n`,
        );
      } else {
        const made = await api.mcpHttpTokenAtStart(args.mcpNewToken === true);
        io.stderr.write(
          made
            ? `advent-agent: MCP over HTTP at ${state.url} (Authorization: Bearer ${made})\n` +
                `advent-agent: this token is shown only now; give it to the apps that connect\n`
            : `advent-agent: MCP over HTTP at ${state.url}, with the bearer token shown when it was made ` +
                `(--mcp-new-token makes a new one and cuts off apps using the old one)\n`,
        );
      }
    }
    return new CliCore(api, targets, secrets);
  }

  /**
   * Save the flags' servers with fixed ids (`cli-…`, so a second run reuses them instead of
   * piling up copies), connect each, and make the first that chats the active connection.
   */
  async connect(): Promise<void> {
    const { api } = this;
    for (const { profile, secret } of this.targets) {
      const checked = checkCommand('saveConnection', [profile]);
      if (!checked.ok) throw new Error(`${profile.name}: ${checked.message}`);
      // Same key format as CoreApi's token store (app/api.ts tokenKey).
      this.secrets.keepInMemory(`profile:${profile.id}:token`);
      await api.saveConnection(profile, secret);
      this.saved.push(profile.id);
      await api.connect(profile.id);
    }
    const views = (await api.snapshot()).connections;
    this.chatId = this.targets
      .map((t) => views.find((v) => v.profile.id === t.profile.id))
      .find((v) => v?.capabilities.chat)?.profile.id;
    if (this.chatId) await api.setActiveConnection(this.chatId);
  }

  /**
   * Say goodbye to every server at once (each waits for its own handshake), leave no profile of
   * the flags' servers behind, then close the core (prompts ended, audit flushed). Safe to call
   * twice.
   */
  close(): Promise<void> {
    return (this.closing ??= this.shutDown());
  }

  private async shutDown(): Promise<void> {
    const { api } = this;
    await Promise.all(this.saved.map((id) => api.disconnect(id).catch(() => undefined)));
    for (const id of this.saved) await api.deleteConnection(id).catch(() => undefined);
    await api.close();
  }
}
