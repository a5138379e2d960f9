/**
 * Services: what servers may use on this computer, grouped (time, files, apps, …; imported MCP
 * tools under their server) so forty of them stay readable. One row per service holds one model
 * of what happens when a server calls it: offered or not, the policy, and any approval the user
 * remembered from a prompt ("Always allow"), which the policy menu shows as its value and which
 * can be revoked right there. The model-facing description, the per-server registration and
 * Try it are folded under the row.
 */
import { useId, useMemo, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { ServiceView } from '../../../app/contract/index.js';
import { bridge } from '../../bridge/current.js';
import { Badge, riskTone } from '../../components/Badge.js';
import { PageHeader } from '../../components/PageHeader.js';
import { Switch } from '../../components/Switch.js';
import { serviceSummary, serviceTitle } from '../../i18n/service-text.js';
import { connStateText, grantText, registrationText } from '../../lib/labels.js';
import { useConnectionLabel, useKindShortName } from '../../lib/names.js';
import { useAction } from '../../lib/useAction.js';
import { isLive, useConnections } from '../../store/connection.js';
import { useServices } from '../../store/services.js';
import { toast } from '../../store/toasts.js';
import { OfferPanel } from './Offers.js';
import { SchemaForm } from './SchemaForm.js';
import { type PolicyChoice, policyChoice, sectionsOf } from './sections.js';

function matches(service: ServiceView, lang: string, query: string): boolean {
  if (!query) return true;
  const q = query.toLocaleLowerCase();
  return [service.name, serviceTitle(lang, service), serviceSummary(lang, service), service.title]
    .join('\n')
    .toLocaleLowerCase()
    .includes(q);
}

function PolicyControl({ service, titleText }: { service: ServiceView; titleText: string }) {
  const { t } = useTranslation();
  const id = useId();
  const { busy, run } = useAction();
  const name = service.name;
  const choice = policyChoice(service);
  const grants = service.alwaysGrants;

  function choose(next: PolicyChoice) {
    if (next === choice || next === 'granted') return;
    void run(async () => {
      // "Ask me every time" means it: a remembered "always" would otherwise keep answering yes.
      if (next === 'ask' && choice === 'granted') await bridge().invoke('revokeGrants', name);
      await bridge().invoke('setServicePolicy', name, next);
    });
  }

  return (
    <div className="service-policy">
      <label className="sr-only" htmlFor={`${id}-policy`}>
        {t('policy.labelFor', { title: titleText })}
      </label>
      <select
        id={`${id}-policy`}
        value={choice}
        disabled={busy}
        aria-describedby={grants.length > 0 ? `${id}-grants` : undefined}
        data-testid={`service-policy-${name}`}
        onChange={(e) => choose(e.target.value as PolicyChoice)}
      >
        <option value="allow">{t('policy.allow')}</option>
        {choice === 'granted' && <option value="granted">{t('policy.granted')}</option>}
        <option value="ask">{t('policy.ask')}</option>
        <option value="deny">{t('policy.deny')}</option>
      </select>
      {grants.length > 0 && (
        <div className="grants" id={`${id}-grants`} data-testid={`service-grants-${name}`}>
          <span>
            {t('grants.label')}{' '}
            {grants.map((key, i) => (
              <span key={key}>
                {i > 0 && ', '}
                <strong>{grantText(t, name, key)}</strong>
              </span>
            ))}
            {service.policy === 'deny' && (
              <span className="muted"> {t('grants.unusedWhileDenied')}</span>
            )}
          </span>
          <button
            type="button"
            className="button button-small"
            disabled={busy}
            aria-label={t('grants.revokeFor', { title: titleText })}
            data-testid={`service-revoke-${name}`}
            onClick={() =>
              void run(async () => {
                await bridge().invoke('revokeGrants', name);
                toast('success', t('services.revoked', { title: titleText }));
              })
            }
          >
            {t('grants.revoke')}
          </button>
        </div>
      )}
    </div>
  );
}

function Registrations({ service }: { service: ServiceView }) {
  const { t, i18n } = useTranslation();
  const label = useConnectionLabel();
  const connections = useConnections((s) => s.connections);
  const kindShort = useKindShortName();
  const live = connections.filter((c) => isLive(c.state));
  const name = service.name;
  if (live.length === 0) return <p className="muted small">{t('services.noLive')}</p>;
  return (
    <ul className="registrations" data-testid={`service-registrations-${name}`}>
      {live.map((c) => {
        const text = service.enabled
          ? registrationText(t, c.registration, name, i18n.language)
          : t('registration.notOffered');
        const failed = c.registration?.state === 'failed';
        return (
          <li key={c.profile.id} className={failed ? 'text-bad' : undefined}>
            <span className="reg-name">{label({ id: c.profile.id, name: c.profile.name })}</span>{' '}
            <span className="muted small">({kindShort(c.profile.kind)})</span>
            <span className="muted"> — {text ?? connStateText(t, c.state, Date.now())}</span>
          </li>
        );
      })}
    </ul>
  );
}

function ServiceRow({ service }: { service: ServiceView }) {
  const { t, i18n } = useTranslation();
  const id = useId();
  const { busy, run } = useAction();
  const name = service.name;
  const lang = i18n.language;
  const title = serviceTitle(lang, service);

  return (
    <li
      className={`service-row${service.enabled ? '' : ' service-off'}`}
      aria-labelledby={`${id}-title`}
      data-testid={`service-${name}`}
      data-policy={policyChoice(service)}
    >
      <div className="service-main">
        <div className="service-title">
          <h3 id={`${id}-title`}>{title}</h3>
          <code className="muted" translate="no">
            {name}
          </code>
          <Badge
            tone={riskTone(service.risk)}
            title={t(`risk.${service.risk}Hint`)}
            testId={`service-risk-${name}`}
          >
            {t(`risk.${service.risk}`)}
          </Badge>
        </div>
        <p id={`${id}-desc`} className="service-summary" data-testid={`service-summary-${name}`}>
          {serviceSummary(lang, service)}
        </p>
        {service.userOnly && <p className="muted small">{t('services.userOnly')}</p>}
      </div>
      <div className="service-controls">
        <div className="service-switch">
          <Switch
            checked={service.enabled}
            label={t('services.switchLabel', { title })}
            disabled={busy}
            describedBy={`${id}-desc`}
            testId={`service-switch-${name}`}
            onChange={(on) => void run(() => bridge().invoke('setServiceEnabled', name, on))}
          />
          <span className="muted small" aria-hidden="true">
            {service.enabled ? t('services.on') : t('services.off')}
          </span>
        </div>
        {!service.userOnly && <PolicyControl service={service} titleText={title} />}
      </div>
      <details className="service-more" data-testid={`service-try-${name}`}>
        <summary>{t('services.more')}</summary>
        <div className="service-more-body">
          <details className="model-text" data-testid={`service-description-${name}`}>
            <summary>{t('services.aiIsTold')}</summary>
            <p lang="en">{service.description}</p>
          </details>
          {!service.userOnly && (
            <div className="field">
              <span>{t('services.perConnection')}</span>
              <Registrations service={service} />
            </div>
          )}
          <h4 className="try-it-title">{t('services.tryIt')}</h4>
          <SchemaForm service={service} />
        </div>
      </details>
    </li>
  );
}

export function ServicesPage() {
  const { t, i18n } = useTranslation();
  const id = useId();
  const services = useServices((s) => s.services);
  const [query, setQuery] = useState('');
  const lang = i18n.language;
  const sections = useMemo(
    () => sectionsOf(services.filter((s) => matches(s, lang, query.trim()))),
    [services, lang, query],
  );
  const on = services.filter((s) => s.enabled).length;

  return (
    <div className="page page-scroll">
      <PageHeader title={t('services.title')} intro={t('services.intro')} />
      {services.length === 0 ? (
        <p className="muted">{t('services.empty')}</p>
      ) : (
        <>
          <OfferPanel />
          <div className="services-toolbar">
            <label className="sr-only" htmlFor={`${id}-find`}>
              {t('services.find')}
            </label>
            <input
              id={`${id}-find`}
              type="search"
              value={query}
              maxLength={100}
              placeholder={t('services.findPlaceholder')}
              onChange={(e) => setQuery(e.target.value)}
              data-testid="services-find"
            />
            <span className="muted small" data-testid="services-count">
              {t('services.count', { count: services.length, on })}
            </span>
          </div>
          {sections.length === 0 && <p className="muted">{t('services.noMatch')}</p>}
          {sections.map((section) => (
            <section
              key={section.key}
              className="service-group"
              aria-labelledby={`${id}-${section.key}`}
              data-testid={`service-group-${section.group ?? section.key}`}
            >
              <h2 id={`${id}-${section.key}`}>
                {section.server !== undefined
                  ? t('serviceGroup.server', { server: section.server })
                  : t(`serviceGroup.${section.group ?? 'other'}`)}{' '}
                <span className="group-count muted">{section.services.length}</span>
              </h2>
              <ul className="service-list">
                {section.services.map((s) => (
                  <ServiceRow key={s.name} service={s} />
                ))}
              </ul>
            </section>
          ))}
        </>
      )}
    </div>
  );
}
