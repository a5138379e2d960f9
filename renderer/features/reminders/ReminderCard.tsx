/** A reminder in the conversation: it rang, or (missed) fell due while the app was closed. */
import { useTranslation } from 'react-i18next';
import type { ReminderItem } from '../../../app/contract/index.js';
import { formatDateTime, formatTime } from '../../lib/format.js';
import { ReminderIcon } from '../../components/Icons.js';
import './reminders.css';

export function ReminderCard({ item }: { item: ReminderItem }) {
  const { t, i18n } = useTranslation();
  const title = item.missed
    ? t('reminders.card.missed')
    : item.reminderKind === 'timer'
      ? t('reminders.card.timer')
      : t('reminders.card.reminder');
  return (
    <div
      className={`msg msg-reminder${item.missed ? ' msg-reminder-missed' : ''}`}
      data-testid="chat-reminder"
      data-id={item.id}
      data-missed={item.missed}
      role="status"
    >
      <ReminderIcon />
      <span className="reminder-card-text">
        <strong>{title}</strong>
        {item.text && <span> {item.text}</span>}
        {item.missed && (
          <span className="muted small">
            {' '}
            {t('reminders.card.wasDue', { time: formatDateTime(item.dueAt, i18n.language) })}
          </span>
        )}
      </span>
      <time className="muted" dateTime={new Date(item.at).toISOString()}>
        {formatTime(item.at, i18n.language)}
      </time>
    </div>
  );
}
