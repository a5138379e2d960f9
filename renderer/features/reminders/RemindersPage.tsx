/**
 * Reminders and timers: what is waiting (with who set it, and a way to cancel), what was missed
 * while the app was closed, and what rang lately (cleared one by one). Servers set them with
 * set_timer / set_reminder; they ring here whether or not a server is connected.
 */
import { useId } from 'react';
import { useTranslation } from 'react-i18next';
import type { ReminderView } from '../../../app/contract/index.js';
import { bridge } from '../../bridge/current.js';
import { PageHeader } from '../../components/PageHeader.js';
import { formatDateTime } from '../../lib/format.js';
import { useAction } from '../../lib/useAction.js';
import { toast } from '../../store/toasts.js';
import { useReminders } from './reminders.js';
import './reminders.css';

function Row({ r }: { r: ReminderView }) {
  const { t, i18n } = useTranslation();
  const { busy, run } = useAction();
  const pending = r.state === 'pending';
  const label =
    r.text || t(r.kind === 'timer' ? 'reminders.kind.timer' : 'reminders.kind.reminder');

  async function remove() {
    const done = await run(() => bridge().invoke('cancelReminder', r.id));
    if (done && pending) toast('success', t('reminders.cancelled', { text: label }));
  }

  return (
    <li className="reminder-row" data-testid={`reminder-${r.id}`} data-state={r.state}>
      <span className={`badge ${r.kind === 'timer' ? 'badge-accent' : 'badge-info'}`}>
        {t(r.kind === 'timer' ? 'reminders.kind.timer' : 'reminders.kind.reminder')}
      </span>
      <span className="reminder-row-main">
        <span>{r.text || <span className="muted">{t('reminders.noLabel')}</span>}</span>
        <span className="muted small">
          {t(
            pending
              ? 'reminders.dueAt'
              : r.state === 'missed'
                ? 'reminders.wasDue'
                : 'reminders.rangAt',
            {
              time: formatDateTime(pending ? r.dueAt : (r.firedAt ?? r.dueAt), i18n.language),
            },
          )}
          {' · '}
          {t('reminders.setBy', {
            name: r.connection.name === 'local' ? t('reminders.you') : r.connection.name,
          })}
        </span>
      </span>
      <button
        type="button"
        className={`button button-small${pending ? ' button-danger-quiet' : ''}`}
        onClick={remove}
        disabled={busy}
        aria-label={t(pending ? 'reminders.cancelLabel' : 'reminders.clearLabel', { text: label })}
      >
        {t(pending ? 'reminders.cancel' : 'reminders.clear')}
      </button>
    </li>
  );
}

function Section({
  title,
  items,
  testId,
}: {
  title: string;
  items: ReminderView[];
  testId: string;
}) {
  const id = useId();
  if (items.length === 0) return null;
  return (
    <section className="card reminder-section" aria-labelledby={id} data-testid={testId}>
      <h2 id={id}>{title}</h2>
      <ul className="reminder-list">
        {items.map((r) => (
          <Row key={r.id} r={r} />
        ))}
      </ul>
    </section>
  );
}

export function RemindersPage() {
  const { t } = useTranslation();
  const list = useReminders((s) => s.list);
  const waiting = list.filter((r) => r.state === 'pending');
  const missed = list.filter((r) => r.state === 'missed');
  const rung = list.filter((r) => r.state === 'fired');
  return (
    <div className="page page-scroll">
      <PageHeader title={t('reminders.title')} intro={t('reminders.intro')} />
      {list.length === 0 ? (
        <p className="muted empty" data-testid="reminders-empty">
          {t('reminders.empty')}
        </p>
      ) : (
        <div className="cards">
          <Section title={t('reminders.missed')} items={missed} testId="reminders-missed" />
          <Section title={t('reminders.waiting')} items={waiting} testId="reminders-waiting" />
          <Section title={t('reminders.rung')} items={rung} testId="reminders-rung" />
        </div>
      )}
    </div>
  );
}
