/** "Say this": the server speaks the given text in its voice (SPEAK), behind a small toggle. */
import { type FormEvent, useId, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { bridge } from '../../bridge/current.js';
import { errorText } from '../../lib/labels.js';
import { toast } from '../../store/toasts.js';
import { voice } from './voice.js';

export function SpeakBox({ ready }: { ready: boolean }) {
  const { t } = useTranslation();
  const id = useId();
  const [open, setOpen] = useState(false);
  const [text, setText] = useState('');
  const [busy, setBusy] = useState(false);

  async function submit(e: FormEvent) {
    e.preventDefault();
    const say = text.trim();
    if (!say || !ready || busy) return;
    setBusy(true);
    try {
      const { taskId } = await bridge().invoke('speak', say.slice(0, 2000));
      voice.expectReply(taskId);
      setText('');
    } catch (err) {
      toast('error', errorText(t, err));
    } finally {
      setBusy(false);
    }
  }

  return (
    <div className="speak">
      <button
        type="button"
        className="button button-small"
        aria-expanded={open}
        aria-controls={`${id}-form`}
        onClick={() => setOpen((o) => !o)}
        data-testid="speak-toggle"
      >
        {t('voice.speakToggle')}
      </button>
      {open && (
        <form id={`${id}-form`} className="speak-form" onSubmit={submit} data-testid="speak-form">
          <label htmlFor={`${id}-input`}>{t('voice.speakLabel')}</label>
          <input
            id={`${id}-input`}
            type="text"
            value={text}
            maxLength={2000}
            disabled={!ready}
            placeholder={t('voice.speakPlaceholder')}
            onChange={(e) => setText(e.target.value)}
            data-testid="speak-input"
          />
          <button
            type="submit"
            className="button button-small"
            disabled={!ready || busy || text.trim() === ''}
            data-testid="speak-send"
          >
            {t('voice.speakSend')}
          </button>
        </form>
      )}
    </div>
  );
}
