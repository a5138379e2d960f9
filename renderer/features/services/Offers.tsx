/**
 * "Offered to each connection": per saved connection (and the MCP apps connected to the agent),
 * how many services it is offered and whether that is over the limit its server accepts, and a
 * dialog to choose them (select all / none, find, whether services added later flow in). The
 * core applies the same selection to what each server is told and to what the gate lets it call.
 */
import { useId, useMemo, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { type Offer, type ServiceView, offerAllows } from '../../../app/contract/index.js';
import { bridge } from '../../bridge/current.js';
import { useDialog } from '../../components/hooks.js';
import { serviceTitle } from '../../i18n/service-text.js';
import { useConnectionLabel, useKindShortName } from '../../lib/names.js';
import { useAction } from '../../lib/useAction.js';
import { useConnections } from '../../store/connection.js';
import { useServices } from '../../store/services.js';
import { useSettings } from '../../store/settings.js';
import { toast } from '../../store/toasts.js';
import {
  MCP_APPS_KEY,
  type OfferTarget,
  offerFor,
  offerFrom,
  offerSummary,
  offerable,
} from './offers.js';

function useTargets(): OfferTarget[] {
  const connections = useConnections((s) => s.connections);
  const label = useConnectionLabel();
  return useMemo(
    () => [
      ...connections.map((c) => ({
        key: c.profile.id,
        name: label({ id: c.profile.id, name: c.profile.name }),
        kind: c.profile.kind,
        limit: c.profile.toolLimit,
      })),
      { key: MCP_APPS_KEY, name: '' },
    ],
    [connections, label],
  );
}

export function OfferPanel() {
  const { t } = useTranslation();
  const id = useId();
  const services = useServices((s) => s.services);
  const offers = useSettings((s) => s.settings?.offer);
  const kindShort = useKindShortName();
  const targets = useTargets();
  const [editing, setEditing] = useState<OfferTarget>();
  const opener = useRef<HTMLButtonElement | null>(null);

  return (
    <section className="offer-panel card" aria-labelledby={`${id}-title`} data-testid="offers">
      <h2 id={`${id}-title`}>{t('offers.title')}</h2>
      <p className="muted small">{t('offers.intro')}</p>
      <ul className="offer-list">
        {targets.map((target) => {
          const offer = offerFor(offers, target.key);
          const { count, over, missing } = offerSummary(services, offer, target.limit);
          const name = target.key === MCP_APPS_KEY ? t('offers.mcpApps') : target.name;
          return (
            <li
              key={target.key}
              className={`offer-row${over ? ' offer-over' : ''}`}
              data-testid={`offer-row-${target.key}`}
              data-count={count}
              data-over={over}
            >
              <span className="offer-name">
                <strong>{name}</strong>
                {target.kind && <span className="muted small"> ({kindShort(target.kind)})</span>}
              </span>
              <span className="offer-count" data-testid={`offer-count-${target.key}`}>
                {offer ? t('offers.count', { count }) : t('offers.all', { count })}
                {target.limit !== undefined && !over && (
                  <span className="muted small">
                    {' '}
                    · {t('offers.limit', { limit: target.limit })}
                  </span>
                )}
              </span>
              {/* Always there, so a warning appearing in it is announced. */}
              <span className="offer-warn-slot" role="status">
                {over && (
                  <span className="offer-warn" data-testid={`offer-warn-${target.key}`}>
                    <span aria-hidden="true">⚠ </span>
                    {t('offers.overLimit', { limit: target.limit ?? 0 })}
                  </span>
                )}
              </span>
              {missing.length > 0 && (
                <span className="muted small">
                  {t('offers.missing', { count: missing.length })}
                </span>
              )}
              <button
                type="button"
                className="button button-small"
                aria-label={t('offers.chooseFor', { name })}
                data-testid={`offer-choose-${target.key}`}
                onClick={(e) => {
                  opener.current = e.currentTarget;
                  setEditing({ ...target, name });
                }}
              >
                {t('offers.choose')}
              </button>
            </li>
          );
        })}
      </ul>
      {editing && (
        <OfferDialog
          target={editing}
          services={services}
          offer={offerFor(offers, editing.key)}
          onClose={() => {
            setEditing(undefined);
            opener.current?.focus();
          }}
        />
      )}
    </section>
  );
}

function OfferDialog({
  target,
  services,
  offer,
  onClose,
}: {
  target: OfferTarget;
  services: ServiceView[];
  offer: Offer | undefined;
  onClose: () => void;
}) {
  const { t, i18n } = useTranslation();
  const id = useId();
  const ref = useRef<HTMLDivElement>(null);
  const findRef = useRef<HTMLInputElement>(null);
  const { busy, run } = useAction();
  const lang = i18n.language;
  const choosable = useMemo(() => offerable(services), [services]);
  // The dialog edits the selection it opened with: its missing names are read once.
  const [initial] = useState(() => offerSummary(services, offer, target.limit));
  const wasAutoNew = !offer || 'except' in offer;
  const [checked, setChecked] = useState<Set<string>>(
    () => new Set(choosable.filter((s) => offerAllows(offer, s.name)).map((s) => s.name)),
  );
  const [autoNew, setAutoNew] = useState(wasAutoNew);
  const [forgotten, setForgotten] = useState(false);
  const [query, setQuery] = useState('');
  useDialog(ref, findRef, onClose);

  const q = query.trim().toLocaleLowerCase();
  const shown = choosable.filter(
    (s) =>
      !q ||
      [s.name, serviceTitle(lang, s), s.server?.name ?? '']
        .join('\n')
        .toLocaleLowerCase()
        .includes(q),
  );
  const selectedOn = choosable.filter((s) => s.enabled && checked.has(s.name)).length;
  const selectedOff = choosable.filter((s) => !s.enabled && checked.has(s.name)).length;
  const over = target.limit !== undefined && selectedOn > target.limit;
  const missing = forgotten ? [] : initial.missing;

  const setMany = (names: string[], on: boolean) =>
    setChecked((prev) => {
      const next = new Set(prev);
      for (const n of names) {
        if (on) next.add(n);
        else next.delete(n);
      }
      return next;
    });

  const save = (next: Offer | null) =>
    void run(async () => {
      await bridge().invoke('setOffer', target.key, next);
      toast('success', t('offers.saved', { name: target.name }));
      onClose();
    });

  const names = choosable.map((s) => s.name);
  // Names not here now keep their meaning only in the mode they were chosen in.
  const kept = autoNew === wasAutoNew ? missing : [];

  return (
    <div className="modal-backdrop">
      <div
        ref={ref}
        className="modal offer-dialog"
        role="dialog"
        aria-modal="true"
        aria-labelledby={`${id}-title`}
        data-testid="offer-dialog"
      >
        <header className="modal-head">
          <h2 id={`${id}-title`}>{t('offers.dialogTitle', { name: target.name })}</h2>
        </header>
        <div className="modal-body">
          {target.limit !== undefined && (
            <p className="muted small">{t('offers.limitNote', { limit: target.limit })}</p>
          )}
          <div className="offer-tools">
            <label className="sr-only" htmlFor={`${id}-find`}>
              {t('offers.find')}
            </label>
            <input
              ref={findRef}
              id={`${id}-find`}
              type="search"
              value={query}
              maxLength={100}
              placeholder={t('services.findPlaceholder')}
              onChange={(e) => setQuery(e.target.value)}
              data-testid="offer-find"
            />
            <button
              type="button"
              className="button button-small"
              onClick={() =>
                setMany(
                  shown.map((s) => s.name),
                  true,
                )
              }
              data-testid="offer-select-all"
            >
              {q ? t('offers.selectShown') : t('offers.selectAll')}
            </button>
            <button
              type="button"
              className="button button-small"
              onClick={() =>
                setMany(
                  shown.map((s) => s.name),
                  false,
                )
              }
              data-testid="offer-select-none"
            >
              {q ? t('offers.clearShown') : t('offers.selectNone')}
            </button>
          </div>
          <p className="offer-selected" role="status" data-testid="offer-selected">
            {t('offers.selected', { count: selectedOn })}
            {selectedOff > 0 && (
              <span className="muted"> · {t('offers.offCount', { count: selectedOff })}</span>
            )}
            {over && (
              <span className="offer-warn">
                {' '}
                <span aria-hidden="true">⚠ </span>
                {t('offers.overLimit', { limit: target.limit ?? 0 })}
              </span>
            )}
          </p>
          <fieldset className="offer-choices">
            <legend className="sr-only">{t('services.title')}</legend>
            {shown.length === 0 && <p className="muted">{t('offers.noMatch')}</p>}
            <ul>
              {shown.map((s) => (
                <li key={s.name}>
                  <label className="check-label">
                    <input
                      type="checkbox"
                      checked={checked.has(s.name)}
                      onChange={(e) => setMany([s.name], e.target.checked)}
                      data-testid={`offer-choice-${s.name}`}
                    />
                    <span>
                      {serviceTitle(lang, s)}{' '}
                      <code className="muted" translate="no">
                        {s.name}
                      </code>
                      {!s.enabled && <span className="muted small"> ({t('offers.off')})</span>}
                    </span>
                  </label>
                </li>
              ))}
            </ul>
          </fieldset>
          <label className="check-label">
            <input
              type="checkbox"
              checked={autoNew}
              aria-describedby={`${id}-auto-help`}
              onChange={(e) => setAutoNew(e.target.checked)}
              data-testid="offer-auto-new"
            />
            <span>{t('offers.autoNew')}</span>
          </label>
          <p className="help muted small" id={`${id}-auto-help`}>
            {t('offers.autoNewHelp')}
          </p>
          {missing.length > 0 && (
            <div className="offer-missing" data-testid="offer-missing">
              <strong>{t('offers.missingTitle')}</strong>{' '}
              <span translate="no">{missing.join(', ')}</span>
              <p className="muted small">{t('offers.missingHelp')}</p>
              <button
                type="button"
                className="button button-small"
                onClick={() => setForgotten(true)}
                data-testid="offer-forget"
              >
                {t('offers.forget')}
              </button>
            </div>
          )}
        </div>
        <footer className="modal-actions">
          <button
            type="button"
            className="button"
            disabled={busy}
            onClick={() => save(null)}
            data-testid="offer-everything"
          >
            {t('offers.offerAll')}
          </button>
          <span className="spacer" />
          <button type="button" className="button" onClick={onClose} data-testid="offer-cancel">
            {t('common.cancel')}
          </button>
          <button
            type="button"
            className="button button-primary"
            disabled={busy}
            onClick={() => save(offerFrom(names, checked, autoNew, kept))}
            data-testid="offer-save"
          >
            {busy ? t('common.saving') : t('common.save')}
          </button>
        </footer>
      </div>
    </div>
  );
}
