import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { type ConnectionView, type ProfileView, textIn } from '../../../app/contract/index.js';
import { bridge } from '../../bridge/current.js';
import { Badge, type Tone } from '../../components/Badge.js';
import { ConfirmDialog } from '../../components/ConfirmDialog.js';
import { useNow } from '../../components/hooks.js';
import { PlusIcon } from '../../components/Icons.js';
import { PageHeader } from '../../components/PageHeader.js';
import { formatTime } from '../../lib/format.js';
import { connStateText } from '../../lib/labels.js';
import { useAction } from '../../lib/useAction.js';
import { isLive, kindOf, useConnections } from '../../store/connection.js';
import { toast } from '../../store/toasts.js';
import { useUi } from '../../store/ui.js';
import { ProfileForm } from './ProfileForm.js';

function stateTone(c: ConnectionView): Tone {
  switch (c.state.status) {
    case 'ready':
      return 'good';
    case 'offline':
      return c.state.reason === 'stopped' ? 'neutral' : 'bad';
    case 'idle':
      return 'neutral';
    default:
      return 'warn';
  }
}

function ConnectionCard({
  c,
  onEdit,
  now,
}: {
  c: ConnectionView;
  onEdit: (p: ProfileView) => void;
  now: number;
}) {
  const { t, i18n } = useTranslation();
  const { busy, run } = useAction();
  const [confirming, setConfirming] = useState(false);
  const p = c.profile;
  const spec = useConnections((s) => kindOf(s.kinds, p.kind));
  const live = isLive(c.state);
  const reg = c.registration;
  const lastError =
    c.state.status === 'reconnecting'
      ? c.state.lastError
      : c.state.status === 'offline' && c.state.reason !== 'stopped'
        ? c.state.message
        : undefined;

  return (
    <article
      className={`card connection${c.active ? ' connection-active' : ''}`}
      aria-labelledby={`conn-${p.id}-name`}
      data-testid={`connection-${p.id}`}
      data-state={c.state.status}
      data-active={c.active}
    >
      <header className="connection-head">
        <h2 id={`conn-${p.id}-name`}>{p.demo ? t('connections.demoName') : p.name}</h2>
        {p.demo && <Badge tone="accent">{t('connections.demoBadge')}</Badge>}
        {c.active && (
          <Badge tone="info" testId={`connection-active-${p.id}`}>
            {t('connections.active')}
          </Badge>
        )}
        <span className="spacer" />
        <Badge tone={stateTone(c)} testId={`connection-state-${p.id}`}>
          {connStateText(t, c.state, now)}
        </Badge>
      </header>
      <p className="connection-addr">
        <Badge tone="neutral" testId={`connection-kind-${p.id}`}>
          {spec ? textIn(spec.short, i18n.language) : p.kind}
        </Badge>{' '}
        <code>{p.address}</code>
        {!p.demo && spec?.secret && (
          <span className="muted small">
            {' · '}
            {p.hasToken ? t('connections.tokenSaved') : t('connections.noToken')}
          </span>
        )}
      </p>
      {lastError && (
        <p className="text-bad small" data-testid={`connection-error-${p.id}`}>
          {t('connections.lastError', { error: lastError })}
        </p>
      )}
      {live && reg && (
        <p className={`small ${reg.state === 'failed' ? 'text-bad' : 'muted'}`}>
          {t('registration.label')}:{' '}
          {reg.state === 'registering'
            ? t('registration.registering')
            : reg.state === 'failed'
              ? t('registration.failed', { message: reg.message })
              : `${t('registration.registered', { time: formatTime(reg.at, i18n.language) })} (${reg.services.join(', ') || t('common.none')})`}
        </p>
      )}
      <div className="card-actions">
        {live && !c.active && (
          <button
            type="button"
            className="button button-small"
            disabled={busy}
            onClick={() => void run(() => bridge().invoke('setActiveConnection', p.id))}
            data-testid={`connection-activate-${p.id}`}
          >
            {t('connections.makeActive')}
          </button>
        )}
        {live ? (
          <button
            type="button"
            className="button button-small"
            disabled={busy}
            onClick={() => void run(() => bridge().invoke('disconnect', p.id))}
            data-testid={`connection-disconnect-${p.id}`}
          >
            {t('connections.disconnect')}
          </button>
        ) : (
          <button
            type="button"
            className="button button-small button-primary"
            disabled={busy}
            onClick={() => void run(() => bridge().invoke('connect', p.id))}
            data-testid={`connection-connect-${p.id}`}
          >
            {t('connections.connect')}
          </button>
        )}
        <span className="spacer" />
        {!p.demo && (
          <button
            type="button"
            className="button button-small"
            onClick={() => onEdit(p)}
            data-testid={`connection-edit-${p.id}`}
          >
            {t('connections.edit')}
          </button>
        )}
        <button
          type="button"
          className="button button-small button-danger-quiet"
          disabled={busy}
          onClick={() => setConfirming(true)}
          data-testid={`connection-delete-${p.id}`}
        >
          {t('connections.delete')}
        </button>
      </div>
      {confirming && (
        <ConfirmDialog
          message={
            p.demo
              ? t('connections.confirmDeleteDemo')
              : t('connections.confirmDelete', { name: p.name })
          }
          confirmLabel={t('connections.delete')}
          onCancel={() => setConfirming(false)}
          onConfirm={() => {
            setConfirming(false);
            void run(async () => {
              await bridge().invoke('deleteConnection', p.id);
              toast(
                'info',
                t('connections.deleted', { name: p.demo ? t('connections.demoName') : p.name }),
              );
            });
          }}
        />
      )}
    </article>
  );
}

export function ConnectionsPage() {
  const { t } = useTranslation();
  const connections = useConnections((s) => s.connections);
  const newRequested = useUi((s) => s.newProfileRequested);
  const clearRequest = useUi((s) => s.clearNewProfileRequest);
  const [editing, setEditing] = useState<{ profile?: ProfileView } | undefined>();
  const demo = useAction();
  const hasDemo = connections.some((c) => c.profile.demo);
  const reconnecting = connections.some((c) => c.state.status === 'reconnecting');
  const now = useNow(reconnecting);

  useEffect(() => {
    if (newRequested) {
      setEditing({});
      clearRequest();
    }
  }, [newRequested, clearRequest]);

  // The profile being edited may change underneath (hasToken after saving the token).
  const editingProfile = editing?.profile
    ? (connections.find((c) => c.profile.id === editing.profile?.id)?.profile ?? editing.profile)
    : undefined;

  return (
    <div className="page page-scroll">
      <PageHeader
        title={t('connections.title')}
        intro={t('connections.intro')}
        actions={
          <>
            {!hasDemo && (
              <button
                type="button"
                className="button"
                disabled={demo.busy}
                onClick={() => void demo.run(() => bridge().invoke('startDemo'))}
                data-testid="demo-start"
              >
                {t('connections.demo')}
              </button>
            )}
            <button
              type="button"
              className="button button-primary"
              onClick={() => setEditing({})}
              disabled={editing !== undefined && !editing.profile}
              data-testid="connection-add"
            >
              <PlusIcon />
              {t('connections.add')}
            </button>
          </>
        }
      />
      {editing && (
        <ProfileForm
          key={editing.profile?.id ?? 'new'}
          profile={editingProfile}
          onDone={() => setEditing(undefined)}
        />
      )}
      {connections.length === 0 && !editing ? (
        <p className="muted empty">{t('connections.empty')}</p>
      ) : (
        <div className="cards">
          {connections.map((c) => (
            <ConnectionCard
              key={c.profile.id}
              c={c}
              now={now}
              onEdit={(profile) => setEditing({ profile })}
            />
          ))}
        </div>
      )}
    </div>
  );
}
