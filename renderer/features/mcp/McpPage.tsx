/**
 * MCP servers: the tools people already run (files, memory, git, home automation…) imported and
 * offered to every voice server behind the same permission prompt and audit log. Each server's
 * row shows its state (starting / ready N tools / failed: reason / restarting in N s), its log,
 * its tools with their on/off switch and policy, whether it is trusted, and how to remove it.
 */
import { useEffect, useId, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type {
  McpLogLine,
  McpServerView,
  Policy,
  ServiceView,
} from '../../../app/contract/index.js';
import { bridge } from '../../bridge/current.js';
import { Badge } from '../../components/Badge.js';
import { ConfirmDialog } from '../../components/ConfirmDialog.js';
import { useNow } from '../../components/hooks.js';
import { PageHeader } from '../../components/PageHeader.js';
import { Switch } from '../../components/Switch.js';
import { formatTime } from '../../lib/format.js';
import { grantText } from '../../lib/labels.js';
import { useAction } from '../../lib/useAction.js';
import { useServices } from '../../store/services.js';
import { toast } from '../../store/toasts.js';
import { type ImportStart, ImportPanel } from './ImportPanel.js';
import { hintPhrases, mcpStateText, mcpStateTone } from './labels.js';
import { ServerForm } from './ServerForm.js';
import { followMcp, useMcp } from './store.js';

function LogView({ server }: { server: McpServerView }) {
  const { t, i18n } = useTranslation();
  const [lines, setLines] = useState<McpLogLine[] | undefined>();
  const load = () =>
    void bridge()
      .invoke('readMcpLog', server.id)
      .then(setLines, () => setLines([]));
  // Reload when the state changes: that is when new lines are most likely.
  useEffect(load, [server.id, server.state.status]);
  return (
    <div className="mcp-log">
      <pre
        tabIndex={0}
        aria-label={t('mcp.log.label', { name: server.name })}
        data-testid={`mcp-log-${server.id}`}
      >
        {lines === undefined
          ? t('app.loading')
          : lines.length === 0
            ? t('mcp.log.empty')
            : lines
                .map(
                  (l) =>
                    `${formatTime(l.at, i18n.language)} ${t(`mcp.log.stream.${l.stream}`)} ${l.text}`,
                )
                .join('\n')}
      </pre>
      <button type="button" className="link-button" onClick={load}>
        {t('mcp.log.refresh')}
      </button>
    </div>
  );
}

function ToolRow({
  server,
  tool,
  service,
}: {
  server: McpServerView;
  tool: McpServerView['tools'][number];
  service: ServiceView | undefined;
}) {
  const { t } = useTranslation();
  const { busy, run } = useAction();
  const phrases = hintPhrases(t, tool.hint);
  return (
    <li className="mcp-tool" data-testid={`mcp-tool-${server.id}-${tool.tool}`}>
      <div className="mcp-tool-head">
        {service && (
          <Switch
            checked={service.enabled}
            label={t('services.switchLabel', { title: tool.title })}
            disabled={busy}
            onChange={(on) =>
              void run(() => bridge().invoke('setServiceEnabled', service.name, on))
            }
            testId={`mcp-tool-switch-${tool.service}`}
          />
        )}
        <strong>{tool.title}</strong>
        {tool.service ? <code className="small">{tool.service}</code> : null}
        {phrases.map((p) => (
          <Badge key={p} tone="neutral" title={t('mcp.hint.claimTitle')}>
            {p}
          </Badge>
        ))}
        <span className="spacer" />
        {service && (
          <label className="inline-field small">
            <span>{t('mcp.policyLabel')}</span>
            <select
              value={service.policy}
              disabled={busy}
              onChange={(e) =>
                void run(() =>
                  bridge().invoke('setServicePolicy', service.name, e.target.value as Policy),
                )
              }
              data-testid={`mcp-tool-policy-${tool.service}`}
            >
              {(['allow', 'ask', 'deny'] as const).map((p) => (
                <option key={p} value={p}>
                  {t(`policy.${p}`)}
                </option>
              ))}
            </select>
          </label>
        )}
      </div>
      {tool.problem && (
        <p className="small text-bad" data-testid={`mcp-tool-problem-${tool.tool}`}>
          {t('mcp.toolProblem', { problem: tool.problem })}
        </p>
      )}
      {service && service.alwaysGrants.length > 0 && (
        <p className="small muted">
          {t('grants.label')}{' '}
          {service.alwaysGrants.map((key) => grantText(t, service.name, key)).join(', ')}{' '}
          <button
            type="button"
            className="link-button"
            disabled={busy}
            onClick={() => void run(() => bridge().invoke('revokeGrants', service.name))}
          >
            {t('grants.revoke')}
          </button>
        </p>
      )}
    </li>
  );
}

function ServerCard({
  server,
  now,
  onEdit,
}: {
  server: McpServerView;
  now: number;
  onEdit: () => void;
}) {
  const { t } = useTranslation();
  const id = useId();
  const { busy, run } = useAction();
  const [confirming, setConfirming] = useState(false);
  const [showLog, setShowLog] = useState(false);
  const services = useServices((s) => s.services);
  const byName = new Map(services.map((s) => [s.name, s]));
  const { state } = server;
  const reason =
    state.status === 'failed' || state.status === 'restarting' ? state.reason : undefined;
  const where =
    server.transport === 'stdio' ? [server.command, ...server.args].join(' ') : server.url;

  return (
    <article
      className={`card mcp-server${server.enabled ? '' : ' service-off'}`}
      aria-labelledby={`${id}-name`}
      data-testid={`mcp-server-${server.name}`}
      data-state={state.status}
    >
      <header className="connection-head">
        <Switch
          checked={server.enabled}
          label={t('mcp.enableLabel', { name: server.name })}
          disabled={busy}
          onChange={(on) => void run(() => bridge().invoke('setMcpServerEnabled', server.id, on))}
          testId={`mcp-server-switch-${server.name}`}
        />
        <h2 id={`${id}-name`}>{server.name}</h2>
        <Badge>{t(`mcp.transport.${server.transport}`)}</Badge>
        {server.runOnly && <Badge tone="info">{t('mcp.runOnly')}</Badge>}
        <span className="spacer" />
        <Badge tone={mcpStateTone(state)} testId={`mcp-state-${server.name}`}>
          {mcpStateText(t, state, now)}
        </Badge>
      </header>
      <p className="connection-addr">
        <code className="small">{where}</code>
        {server.serverInfo && (
          <span className="muted small">
            {' · '}
            {server.serverInfo.name} {server.serverInfo.version}
          </span>
        )}
      </p>
      {reason && (
        <p className="text-bad small" data-testid={`mcp-reason-${server.name}`}>
          {reason}
        </p>
      )}
      <div className="mcp-settings">
        <label className="check-label">
          <input
            type="checkbox"
            checked={server.trusted}
            disabled={busy}
            aria-describedby={`${id}-trust-help`}
            onChange={(e) =>
              void run(() => bridge().invoke('trustMcpServer', server.id, e.target.checked))
            }
            data-testid={`mcp-trust-${server.name}`}
          />
          {t('mcp.trust')}
        </label>
        <p className="help" id={`${id}-trust-help`}>
          {t('mcp.trustHelp')}
        </p>
        <label className="inline-field">
          <span>{t('mcp.serverPolicy')}</span>
          <select
            value={server.policy ?? ''}
            disabled={busy}
            onChange={(e) =>
              void run(() =>
                bridge().invoke(
                  'setMcpServerPolicy',
                  server.id,
                  e.target.value === '' ? null : (e.target.value as Policy),
                ),
              )
            }
            data-testid={`mcp-policy-${server.name}`}
          >
            <option value="">{t('mcp.policyDefault')}</option>
            {(['allow', 'ask', 'deny'] as const).map((p) => (
              <option key={p} value={p}>
                {t(`policy.${p}`)}
              </option>
            ))}
          </select>
        </label>
      </div>
      {server.tools.length > 0 && (
        <details className="mcp-tools" open>
          <summary>{t('mcp.tools', { count: server.tools.length })}</summary>
          <ul>
            {server.tools.map((tool) => (
              <ToolRow
                key={tool.tool}
                server={server}
                tool={tool}
                service={tool.service ? byName.get(tool.service) : undefined}
              />
            ))}
          </ul>
        </details>
      )}
      {showLog && <LogView server={server} />}
      <div className="card-actions">
        <button
          type="button"
          className="button button-small"
          aria-expanded={showLog}
          onClick={() => setShowLog(!showLog)}
          data-testid={`mcp-log-toggle-${server.name}`}
        >
          {showLog ? t('mcp.log.hide') : t('mcp.log.show')}
        </button>
        {server.enabled && (
          <button
            type="button"
            className="button button-small"
            disabled={busy}
            onClick={() => void run(() => bridge().invoke('restartMcpServer', server.id))}
            data-testid={`mcp-restart-${server.name}`}
          >
            {t('mcp.restart')}
          </button>
        )}
        <span className="spacer" />
        {!server.runOnly && (
          <>
            <button type="button" className="button button-small" onClick={onEdit}>
              {t('common.edit')}
            </button>
            <button
              type="button"
              className="button button-small button-danger-quiet"
              disabled={busy}
              onClick={() => setConfirming(true)}
              data-testid={`mcp-remove-${server.name}`}
            >
              {t('common.remove')}
            </button>
          </>
        )}
      </div>
      {confirming && (
        <ConfirmDialog
          message={t('mcp.confirmRemove', { name: server.name })}
          confirmLabel={t('common.remove')}
          onCancel={() => setConfirming(false)}
          onConfirm={() => {
            setConfirming(false);
            void run(async () => {
              await bridge().invoke('removeMcpServer', server.id);
              toast('info', t('mcp.removed', { name: server.name }));
            });
          }}
        />
      )}
    </article>
  );
}

export function McpPage() {
  const { t } = useTranslation();
  const servers = useMcp((s) => s.servers);
  const loaded = useMcp((s) => s.loaded);
  const [editing, setEditing] = useState<{ server?: McpServerView } | undefined>();
  const [importing, setImporting] = useState<ImportStart | undefined>();
  const now = useNow(servers.some((s) => s.state.status === 'restarting'));

  useEffect(() => followMcp(bridge()), []);
  const busyPanel = editing !== undefined || importing !== undefined;

  return (
    <div className="page page-scroll">
      <PageHeader
        title={t('mcp.title')}
        intro={t('mcp.intro')}
        actions={
          <>
            <button
              type="button"
              className="button"
              disabled={busyPanel}
              onClick={() => setImporting({ kind: 'sources' })}
              data-testid="mcp-import-from"
            >
              {t('mcp.importFrom')}
            </button>
            <button
              type="button"
              className="button"
              disabled={busyPanel}
              onClick={() => setImporting({ kind: 'paste' })}
              data-testid="mcp-paste"
            >
              {t('mcp.paste')}
            </button>
            <button
              type="button"
              className="button button-primary"
              disabled={busyPanel}
              onClick={() => setEditing({})}
              data-testid="mcp-add"
            >
              {t('mcp.add')}
            </button>
          </>
        }
      />
      {importing && <ImportPanel start={importing} onDone={() => setImporting(undefined)} />}
      {editing && (
        <ServerForm
          key={editing.server?.id ?? 'new'}
          server={editing.server}
          onDone={() => setEditing(undefined)}
        />
      )}
      {loaded && servers.length === 0 && !busyPanel ? (
        <p className="muted empty" data-testid="mcp-empty">
          {t('mcp.empty')}
        </p>
      ) : (
        <div className="cards">
          {servers.map((s) => (
            <ServerCard key={s.id} server={s} now={now} onEdit={() => setEditing({ server: s })} />
          ))}
        </div>
      )}
    </div>
  );
}
