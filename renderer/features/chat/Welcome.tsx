/** First run: no saved connection and no demo. Two big doors: the demo, or your own server. */
import { useTranslation } from 'react-i18next';
import { bridge } from '../../bridge/current.js';
import { PlayIcon, ServerIcon } from '../../components/Icons.js';
import { MoodFaceIcon } from '../../components/MoodFaces.js';
import { useAction } from '../../lib/useAction.js';
import { useUi } from '../../store/ui.js';

/** `onDemoStarted`: the demo is on its way and this panel goes; the page moves focus on from here. */
export function Welcome({ onDemoStarted }: { onDemoStarted?: () => void }) {
  const { t } = useTranslation();
  const requestNewProfile = useUi((s) => s.requestNewProfile);
  const { busy, run } = useAction();
  return (
    <section className="welcome" aria-labelledby="welcome-title" data-testid="welcome">
      <div className="welcome-face" aria-hidden="true">
        <MoodFaceIcon mood="happy" size={56} />
      </div>
      <h2 id="welcome-title">{t('welcome.title')}</h2>
      <p className="muted welcome-intro">{t('welcome.intro')}</p>
      <div className="welcome-choices">
        <button
          type="button"
          className="choice choice-primary"
          disabled={busy}
          aria-describedby="welcome-demo-body"
          data-testid="demo-start"
          onClick={() =>
            void run(async () => {
              await bridge().invoke('startDemo');
              onDemoStarted?.();
            })
          }
        >
          <span className="choice-icon" aria-hidden="true">
            <PlayIcon />
          </span>
          <span className="choice-title">
            {busy ? t('welcome.demoStarting') : t('welcome.demoTitle')}
          </span>
          <span className="choice-body" id="welcome-demo-body">
            {t('welcome.demoBody')}
          </span>
        </button>
        <button
          type="button"
          className="choice"
          aria-describedby="welcome-add-body"
          data-testid="add-server"
          onClick={requestNewProfile}
        >
          <span className="choice-icon" aria-hidden="true">
            <ServerIcon />
          </span>
          <span className="choice-title">{t('welcome.addTitle')}</span>
          <span className="choice-body" id="welcome-add-body">
            {t('welcome.addBody')}
          </span>
        </button>
      </div>
    </section>
  );
}
