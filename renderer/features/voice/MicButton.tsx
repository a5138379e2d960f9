/**
 * The composer's microphone: hold to talk (pointer, or Space/Enter on the button, or Space
 * anywhere the text box is not focused), a level meter while listening, the turn's state in its
 * label, the hands-free switch next to it and a clear line when the microphone cannot be used.
 * With local voice detection on, a click is enough: the turn ends when the user stops speaking.
 */
import { type KeyboardEvent, useEffect } from 'react';
import { useTranslation } from 'react-i18next';
import { voiceMode } from '../connections/profile.js';
import type { ConnectionView } from '../../../app/contract/index.js';
import { useVoice } from '../../store/voice.js';
import { useLocalVad } from './local-vad-setting.js';
import { voice } from './voice.js';

function MicIcon() {
  return (
    <svg
      width="18"
      height="18"
      viewBox="0 0 24 24"
      fill="none"
      stroke="currentColor"
      strokeWidth="2"
      strokeLinecap="round"
      strokeLinejoin="round"
      aria-hidden="true"
    >
      <rect x="9" y="3" width="6" height="11" rx="3" />
      <path d="M5 11a7 7 0 0 0 14 0M12 18v3" />
    </svg>
  );
}

/** Keys that type text: Space there is a space, not push-to-talk. */
function typing(target: EventTarget | null): boolean {
  if (!(target instanceof HTMLElement)) return false;
  if (target.isContentEditable) return true;
  const tag = target.tagName;
  return tag === 'INPUT' || tag === 'TEXTAREA' || tag === 'SELECT' || tag === 'BUTTON';
}

export function MicButton({
  active,
  ready,
}: {
  active: ConnectionView | undefined;
  ready: boolean;
}) {
  const { t } = useTranslation();
  const phase = useVoice((s) => s.phase);
  const level = useVoice((s) => s.level);
  const problem = useVoice((s) => s.problem);
  const handsFree = useVoice((s) => s.handsFree);
  // Local voice detection: a click starts a turn that ends when the user stops speaking.
  const localVad = useLocalVad((s) => s.on);
  const vadNotice = useLocalVad((s) => (s.notice ? s.error : undefined));
  const mode = voiceMode(active?.profile);
  const handsFreeOk = mode === 'vad' || mode === 'auto';

  // Space held anywhere but in a field talks.
  useEffect(() => {
    if (!ready) return;
    const down = (e: globalThis.KeyboardEvent) => {
      if (e.code !== 'Space' || e.repeat || typing(e.target) || e.ctrlKey || e.metaKey || e.altKey)
        return;
      e.preventDefault();
      void voice.press();
    };
    const up = (e: globalThis.KeyboardEvent) => {
      if (e.code !== 'Space') return;
      void voice.release();
    };
    window.addEventListener('keydown', down);
    window.addEventListener('keyup', up);
    return () => {
      window.removeEventListener('keydown', down);
      window.removeEventListener('keyup', up);
    };
  }, [ready]);

  const listening = phase === 'listening';
  const onKeyDown = (e: KeyboardEvent<HTMLButtonElement>) => {
    if ((e.key === ' ' || e.key === 'Enter') && !e.repeat) {
      e.preventDefault();
      void voice.press();
    }
  };
  const onKeyUp = (e: KeyboardEvent<HTMLButtonElement>) => {
    if (e.key === ' ' || e.key === 'Enter') {
      e.preventDefault();
      void voice.release();
    }
  };

  return (
    <div className="mic" data-testid="mic" data-phase={phase}>
      <span className="mic-controls">
        <button
          type="button"
          className={`button mic-button mic-${phase}`}
          disabled={!ready}
          aria-pressed={listening}
          aria-label={t(localVad ? 'voice.clickToTalk' : 'voice.holdToTalk')}
          aria-describedby={problem ? 'mic-problem' : undefined}
          title={t(localVad ? 'voice.clickHint' : 'voice.holdHint')}
          data-local-vad={localVad}
          data-testid="mic-button"
          data-phase={phase}
          onPointerDown={(e) => {
            if (e.button !== 0) return;
            e.currentTarget.setPointerCapture?.(e.pointerId);
            void voice.press();
          }}
          onPointerUp={() => void voice.release()}
          onPointerCancel={() => void voice.release()}
          onKeyDown={onKeyDown}
          onKeyUp={onKeyUp}
          onContextMenu={(e) => e.preventDefault()}
        >
          <MicIcon />
          <span
            className="mic-meter"
            aria-hidden="true"
            data-testid="mic-meter"
            style={{ transform: `scaleY(${listening ? Math.max(0.05, level) : 0})` }}
          />
        </button>
        <span className="mic-state muted" role="status" data-testid="mic-state">
          {t(`voice.phase.${phase}`)}
        </span>
        <label
          className="mic-handsfree"
          title={handsFreeOk ? t('voice.handsFreeHint') : t('voice.handsFreeNeedsMode')}
        >
          <input
            type="checkbox"
            checked={handsFree}
            disabled={!ready || !handsFreeOk}
            onChange={(e) => void voice.setHandsFree(e.target.checked)}
            data-testid="hands-free"
          />
          {t('voice.handsFree')}
        </label>
      </span>
      {problem && (
        <p id="mic-problem" className="mic-problem" role="alert" data-testid="mic-problem">
          {t(`voice.problem.${problem}`)}
        </p>
      )}
      {vadNotice && (
        <p className="mic-problem" role="alert" data-testid="mic-vad-problem">
          {t('voice.localVadStopped', { reason: vadNotice })}
        </p>
      )}
    </div>
  );
}
