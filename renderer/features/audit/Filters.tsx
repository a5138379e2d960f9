import { useEffect, useId, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { DECISIONS, type Decision, OUTCOMES, type Outcome } from '../../../app/contract/index.js';
import { NO_FILTERS, useAudit } from '../../store/audit.js';
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
  const connectionNames = [
    ...new Set([
      ...connections.map((c) => c.profile.name),
      ...[...seen.connections].sort(),
      filters.connection,
    ]),
  ].filter(Boolean);
  const anyFilter = Object.entries(filters).some(([, v]) => v !== '');

  return (
    <form
      className="filters"
      aria-label={t('activity.filters')}
      onSubmit={(e) => {
        e.preventDefault();
        setFilters({ text });
      }}
    >
      <label className="field" htmlFor={`${id}-text`}>
        <span>{t('activity.text')}</span>
        <input
          id={`${id}-text`}
          type="search"
          value={text}
          maxLength={200}
          placeholder={t('activity.textPlaceholder')}
          onChange={(e) => setText(e.target.value)}
          data-testid="audit-filter-text"
        />
      </label>
      <label className="field">
        <span>{t('activity.service')}</span>
        <select
          value={filters.service}
          onChange={(e) => setFilters({ service: e.target.value })}
          data-testid="audit-filter-service"
        >
          <option value="">{t('common.any')}</option>
          {serviceNames.map((n) => (
            <option key={n} value={n}>
              {n}
            </option>
          ))}
        </select>
      </label>
      <label className="field">
        <span>{t('activity.decision')}</span>
        <select
          value={filters.decision}
          onChange={(e) => setFilters({ decision: e.target.value as Decision | '' })}
          data-testid="audit-filter-decision"
        >
          <option value="">{t('common.any')}</option>
          {DECISIONS.map((d) => (
            <option key={d} value={d}>
              {t(`decision.${d}`)}
            </option>
          ))}
        </select>
      </label>
      <label className="field">
        <span>{t('activity.outcome')}</span>
        <select
          value={filters.outcome}
          onChange={(e) => setFilters({ outcome: e.target.value as Outcome | '' })}
          data-testid="audit-filter-outcome"
        >
          <option value="">{t('common.any')}</option>
          {OUTCOMES.map((o) => (
            <option key={o} value={o}>
              {t(`outcome.${o}`)}
            </option>
          ))}
        </select>
      </label>
      <label className="field">
        <span>{t('activity.connection')}</span>
        <select
          value={filters.connection}
          onChange={(e) => setFilters({ connection: e.target.value })}
          data-testid="audit-filter-connection"
        >
          <option value="">{t('common.any')}</option>
          {connectionNames.map((n) => (
            <option key={n} value={n}>
              {n}
            </option>
          ))}
        </select>
      </label>
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
      <div className="field field-end">
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
      </div>
    </form>
  );
}
