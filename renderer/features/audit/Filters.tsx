import { useEffect, useId, useState } from 'react';
import { useTranslation } from 'react-i18next';
import {
  DECISIONS,
  type Decision,
  type McpServerView,
  OUTCOMES,
  type Outcome,
  type ServiceView,
} from '../../../app/contract/index.js';
import { NO_FILTERS, anyFilterSet, useAudit } from '../../store/audit.js';
import { useMcp } from '../mcp/store.js';
import { connectionChoiceKey, connectionChoices, useKindShortName } from '../../lib/names.js';
import { useConnections } from '../../store/connection.js';
import { useServices } from '../../store/services.js';

export function Filters() {
  const { t } = useTranslation();
  const id = useId();
  const filters = useAudit((s) => s.filters);
  const setFilters = useAudit((s) => s.setFilters);
  const seen = useAudit((s) => s.seen);
  useAudit((s) => s.version); // the seen names grow as pages load
  const services = useServices((s) => s.services);
  const connections = useConnections((s) => s.connections);
  const [text, setText] = useState(filters.text);

  // Typing filters after a short pause; everything else at once.
  useEffect(() => setText(filters.text), [filters.text]);
  useEffect(() => {
    if (text === filters.text) return;
    const timer = setTimeout(() => setFilters({ text }), 300);
    return () => clearTimeout(timer);
  }, [text, filters.text, setFilters]);

  const serviceNames = [
    ...new Set([...services.map((s) => s.name), ...seen.services, filters.service]),
  ].filter(Boolean);
  const kindName = useKindShortName();
  // By id, labelled as rows are: two servers may share a name, and a renamed one keeps its calls.
  const connectionOptions = connectionChoices(
    t,
    connections,
    { ids: seen.connectionIds, names: seen.connectionNames },
    kindName,
    filters,
  );
  const anyFilter = anyFilterSet(filters);
  const mcpServers = useMcp((s) => s.servers);
  const servers = serversOf(services, mcpServers);
  // A server chosen earlier stays choosable (and its tools found) while the page is open.
  if (filters.server && !servers.some((s) => s.id === filters.server))
    servers.push({
      id: filters.server,
      name: filters.server,
      services: [...filters.serverServices],
    });

  const timeSet = filters.from !== '' || filters.to !== '';

  // One bar: each control is labelled for assistive tech ("Filter: Service"), and its "any"
  // choice shows the filter's name, so no label row above it takes the table's height.
  return (
    <form
      className="filters"
      aria-label={t('activity.filters')}
      onSubmit={(e) => {
        e.preventDefault();
        setFilters({ text });
      }}
    >
      <label className="sr-only" htmlFor={`${id}-text`}>
        {t('activity.text')}
      </label>
      <input
        id={`${id}-text`}
        className="filter-text"
        type="search"
        value={text}
        maxLength={200}
        placeholder={t('activity.textPlaceholder')}
        onChange={(e) => setText(e.target.value)}
        data-testid="audit-filter-text"
      />
      <label className="sr-only" htmlFor={`${id}-service`}>
        {t('activity.filterBy', { what: t('activity.service') })}
      </label>
      <select
        id={`${id}-service`}
        value={filters.service}
        onChange={(e) => setFilters({ service: e.target.value })}
        data-testid="audit-filter-service"
      >
        <option value="">{t('activity.service')}</option>
        {serviceNames.map((n) => (
          <option key={n} value={n} translate="no">
            {n}
          </option>
        ))}
      </select>
      {servers.length > 0 && (
        <>
          <label className="sr-only" htmlFor={`${id}-server`}>
            {t('activity.filterBy', { what: t('activity.mcpServer') })}
          </label>
          <select
            id={`${id}-server`}
            value={filters.server}
            onChange={(e) => {
              const server = servers.find((s) => s.id === e.target.value);
              setFilters({ server: server?.id ?? '', serverServices: server?.services ?? [] });
            }}
            data-testid="audit-filter-server"
          >
            <option value="">{t('activity.mcpServer')}</option>
            {servers.map((s) => (
              <option key={s.id} value={s.id}>
                {s.name}
              </option>
            ))}
          </select>
        </>
      )}
      <label className="sr-only" htmlFor={`${id}-decision`}>
        {t('activity.filterBy', { what: t('activity.decision') })}
      </label>
      <select
        id={`${id}-decision`}
        value={filters.decision}
        onChange={(e) => setFilters({ decision: e.target.value as Decision | '' })}
        data-testid="audit-filter-decision"
      >
        <option value="">{t('activity.decision')}</option>
        {DECISIONS.map((d) => (
          <option key={d} value={d}>
            {t(`decision.${d}`)}
          </option>
        ))}
      </select>
      <label className="sr-only" htmlFor={`${id}-outcome`}>
        {t('activity.filterBy', { what: t('activity.outcome') })}
      </label>
      <select
        id={`${id}-outcome`}
        value={filters.outcome}
        onChange={(e) => setFilters({ outcome: e.target.value as Outcome | '' })}
        data-testid="audit-filter-outcome"
      >
        <option value="">{t('activity.outcome')}</option>
        {OUTCOMES.map((o) => (
          <option key={o} value={o}>
            {t(`outcome.${o}`)}
          </option>
        ))}
      </select>
      <label className="sr-only" htmlFor={`${id}-connection`}>
        {t('activity.filterBy', { what: t('activity.connection') })}
      </label>
      <select
        id={`${id}-connection`}
        value={connectionChoiceKey(filters)}
        onChange={(e) => {
          const choice = connectionOptions.find((c) => c.key === e.target.value);
          setFilters({
            connectionId: choice?.connectionId ?? '',
            connection: choice?.connection ?? '',
          });
        }}
        data-testid="audit-filter-connection"
      >
        <option value="">{t('activity.connection')}</option>
        {connectionOptions.map((c) => (
          <option key={c.key} value={c.key}>
            {c.label}
          </option>
        ))}
      </select>
      <details className="filter-time" data-testid="audit-filter-time">
        <summary className="button button-small">
          {timeSet ? t('activity.timeSet') : t('activity.time')}
        </summary>
        <div className="filter-time-panel">
          <label className="field field-time">
            <span>{t('activity.from')}</span>
            <input
              type="datetime-local"
              value={filters.from}
              max={filters.to || undefined}
              onChange={(e) => setFilters({ from: e.target.value })}
              data-testid="audit-filter-from"
            />
          </label>
          <label className="field field-time">
            <span>{t('activity.to')}</span>
            <input
              type="datetime-local"
              value={filters.to}
              min={filters.from || undefined}
              onChange={(e) => setFilters({ to: e.target.value })}
              data-testid="audit-filter-to"
            />
          </label>
        </div>
      </details>
      <button
        type="button"
        className="button button-small"
        disabled={!anyFilter}
        onClick={() => {
          setText('');
          setFilters(NO_FILTERS);
        }}
        data-testid="audit-filter-clear"
      >
        {t('activity.clear')}
      </button>
    </form>
  );
}

/**
 * The imported MCP servers and the services their tools became: from the services (tools listed
 * now) and, where the MCP page has loaded them, the servers' own views (tools of a stopped one).
 */
function serversOf(
  services: readonly ServiceView[],
  mcp: readonly McpServerView[],
): { id: string; name: string; services: string[] }[] {
  const byId = new Map<string, { id: string; name: string; services: Set<string> }>();
  const entry = (id: string, name: string) => {
    let e = byId.get(id);
    if (!e) byId.set(id, (e = { id, name, services: new Set() }));
    return e;
  };
  for (const s of services) if (s.server) entry(s.server.id, s.server.name).services.add(s.name);
  for (const m of mcp)
    for (const tool of m.tools) if (tool.service) entry(m.id, m.name).services.add(tool.service);
  return [...byId.values()]
    .map((e) => ({ id: e.id, name: e.name, services: [...e.services].sort() }))
    .sort((a, b) => a.name.localeCompare(b.name));
}
