import { useId } from 'react';
import { useTranslation } from 'react-i18next';
import { POLICIES, type Policy, type ServiceView } from '../../../app/contract/index.js';
import { bridge } from '../../bridge/current.js';
import { Badge, riskTone } from '../../components/Badge.js';
import { PageHeader } from '../../components/PageHeader.js';
import { Switch } from '../../components/Switch.js';
import { connStateText, registrationText } from '../../lib/labels.js';
import { useAction } from '../../lib/useAction.js';
import { isLive, useConnections } from '../../store/connection.js';
import { useServices } from '../../store/services.js';
import { toast } from '../../store/toasts.js';
import { SchemaForm } from './SchemaForm.js';

function ServiceCard({ service }: { service: ServiceView }) {
  const { t, i18n } = useTranslation();
  const id = useId();
  const connections = useConnections((s) => s.connections);
  const live = connections.filter((c) => isLive(c.state));
  const { busy, run } = useAction();
  const name = service.name;

  return (
    <article
      className={`card service${service.enabled ? '' : ' service-off'}`}
      aria-labelledby={`${id}-title`}
      data-testid={`service-${name}`}
    >
      <header className="service-head">
        <div className="service-title">
          <h2 id={`${id}-title`}>{service.title}</h2>
          <code className="muted">{name}</code>
          <Badge
            tone={riskTone(service.risk)}
            title={t(`risk.${service.risk}Hint`)}
            testId={`service-risk-${name}`}
          >
            {t(`risk.${service.risk}`)}
          </Badge>
        </div>
        <div className="service-switch">
          <span className="muted small" aria-hidden="true">
            {service.enabled ? t('services.on') : t('services.off')}
          </span>
          <Switch
            checked={service.enabled}
            label={t('services.switchLabel', { title: service.title })}
            disabled={busy}
            describedBy={`${id}-desc`}
            testId={`service-switch-${name}`}
            onChange={(on) => void run(() => bridge().invoke('setServiceEnabled', name, on))}
          />
        </div>
      </header>
      <p id={`${id}-desc`} className="service-desc">
        {service.description}
      </p>
      {service.userOnly && <p className="muted small">{t('services.userOnly')}</p>}

      <div className="service-grid">
        <label className="field">
          <span>{t('policy.label')}</span>
          <select
            value={service.policy}
            disabled={busy}
            data-testid={`service-policy-${name}`}
            onChange={(e) => {
              const policy = e.target.value as Policy;
              void run(() => bridge().invoke('setServicePolicy', name, policy));
            }}
          >
            {POLICIES.map((p) => (
              <option key={p} value={p}>
                {t(`policy.${p}`)}
              </option>
            ))}
          </select>
        </label>

        {!service.userOnly && (
          <div className="field">
            <span>{t('services.perConnection')}</span>
            {live.length === 0 ? (
              <p className="muted small">{t('services.noLive')}</p>
            ) : (
              <ul className="registrations" data-testid={`service-registrations-${name}`}>
                {live.map((c) => {
                  const text = service.enabled
                    ? registrationText(t, c.registration, name, i18n.language)
                    : t('registration.notOffered');
                  const failed = c.registration?.state === 'failed';
                  return (
                    <li key={c.profile.id} className={failed ? 'text-bad' : undefined}>
                      <span className="reg-name">{c.profile.name}</span>{' '}
                      <span className="muted small">
                        ({t(`connections.kindShort.${c.profile.kind}`)})
                      </span>
                      <span className="muted">
                        {' '}
                        — {text ?? connStateText(t, c.state, Date.now())}
                      </span>
                    </li>
                  );
                })}
              </ul>
            )}
          </div>
        )}
      </div>

      {service.alwaysGrants.length > 0 && (
        <div className="grants">
          <span>{t('services.alwaysGrants', { keys: service.alwaysGrants.join(', ') })}</span>
          <button
            type="button"
            className="button button-small"
            disabled={busy}
            data-testid={`service-revoke-${name}`}
            onClick={() =>
              void run(async () => {
                await bridge().invoke('revokeGrants', name);
                toast('success', t('services.revoked', { title: service.title }));
              })
            }
          >
            {t('services.revoke')}
          </button>
        </div>
      )}

      <details className="try-it" data-testid={`service-try-${name}`}>
        <summary>{t('services.tryIt')}</summary>
        <SchemaForm service={service} />
      </details>
    </article>
  );
}

export function ServicesPage() {
  const { t } = useTranslation();
  const services = useServices((s) => s.services);
  return (
    <div className="page page-scroll">
      <PageHeader title={t('services.title')} intro={t('services.intro')} />
      {services.length === 0 ? (
        <p className="muted">{t('services.empty')}</p>
      ) : (
        <div className="cards">
          {services.map((s) => (
            <ServiceCard key={s.name} service={s} />
          ))}
        </div>
      )}
    </div>
  );
}
