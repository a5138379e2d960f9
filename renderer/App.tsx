import { type ReactNode, useEffect, useRef } from 'react';
import { useTranslation } from 'react-i18next';
import { BridgeRefused, BridgeStatusBar } from './components/BridgeStatus.js';
import {
  ActivityIcon,
  ChatIcon,
  ConnectionsIcon,
  McpIcon,
  ReminderIcon,
  ServicesIcon,
  SettingsIcon,
} from './components/Icons.js';
import { Toasts } from './components/Toasts.js';
import { ActivityPage } from './features/audit/ActivityPage.js';
import { ChatPage } from './features/chat/ChatPage.js';
import { ConnectionsPage } from './features/connections/ConnectionsPage.js';
import { McpPage } from './features/mcp/McpPage.js';
import { PromptModal } from './features/permissions/PromptModal.js';
import { RemindersPage } from './features/reminders/RemindersPage.js';
import { ScreenRequestDialog } from './features/screen/ScreenRequestDialog.js';
import { ServicesPage } from './features/services/ServicesPage.js';
import { SettingsPage } from './features/settings/SettingsPage.js';
import { applyLanguage } from './i18n/index.js';
import { applyTheme } from './lib/theme.js';
import { usePrompts } from './store/prompts.js';
import { useSettings } from './store/settings.js';
import { isPage, type Page, useUi } from './store/ui.js';

const NAV: { page: Page; icon: () => ReactNode }[] = [
  { page: 'chat', icon: ChatIcon },
  { page: 'services', icon: ServicesIcon },
  { page: 'mcp', icon: McpIcon },
  { page: 'reminders', icon: ReminderIcon },
  { page: 'activity', icon: ActivityIcon },
  { page: 'connections', icon: ConnectionsIcon },
  { page: 'settings', icon: SettingsIcon },
];

function pageFromHash(): Page | undefined {
  const name = window.location.hash.replace(/^#\/?/, '').split(/[/?]/)[0] ?? '';
  return isPage(name) ? name : undefined;
}

/** The page in the URL hash (#/activity), so reloads and the back button keep the place. */
function useHashRouting(): Page {
  const page = useUi((s) => s.page);
  const go = useUi((s) => s.go);
  useEffect(() => {
    const sync = () => {
      const p = pageFromHash();
      if (p) go(p);
    };
    sync();
    window.addEventListener('hashchange', sync);
    return () => window.removeEventListener('hashchange', sync);
  }, [go]);
  useEffect(() => {
    if (pageFromHash() !== page) window.history.pushState(null, '', `#/${page}`);
  }, [page]);
  return page;
}

/** Settings decide language and theme; both apply the moment they change. */
function useAppearance(): void {
  const language = useSettings((s) => s.settings?.language);
  const theme = useSettings((s) => s.settings?.theme);
  useEffect(() => {
    if (language) applyLanguage(language);
  }, [language]);
  useEffect(() => {
    if (theme) applyTheme(theme);
  }, [theme]);
}

function Nav({ page }: { page: Page }) {
  const { t } = useTranslation();
  const pending = usePrompts((s) => s.prompts.length);
  return (
    <nav className="nav" aria-label={t('nav.label')}>
      <div className="brand">
        <span className="brand-mark" aria-hidden="true">
          A
        </span>
        <span className="brand-name">{t('app.name')}</span>
      </div>
      <ul>
        {NAV.map(({ page: p, icon: Icon }) => (
          <li key={p}>
            <a
              href={`#/${p}`}
              className="nav-link"
              aria-current={p === page ? 'page' : undefined}
              data-testid={`nav-${p}`}
            >
              <Icon />
              <span>{t(`nav.${p}`)}</span>
              {p === 'chat' && pending > 0 && (
                <span
                  className="nav-count"
                  aria-label={t('nav.pendingPrompts', { count: pending })}
                >
                  {pending}
                </span>
              )}
            </a>
          </li>
        ))}
      </ul>
    </nav>
  );
}

function CurrentPage({ page }: { page: Page }) {
  switch (page) {
    case 'chat':
      return <ChatPage />;
    case 'services':
      return <ServicesPage />;
    case 'mcp':
      return <McpPage />;
    case 'reminders':
      return <RemindersPage />;
    case 'activity':
      return <ActivityPage />;
    case 'connections':
      return <ConnectionsPage />;
    case 'settings':
      return <SettingsPage />;
  }
}

export function App() {
  const { t } = useTranslation();
  const page = useHashRouting();
  useAppearance();
  const modalOpen = usePrompts((s) => s.prompts.length > 0);
  const ready = useUi((s) => s.ready);
  const refused = useUi((s) => s.bridgeStatus === 'refused');
  const mainRef = useRef<HTMLElement>(null);
  const first = useRef(true);

  // After navigating, put keyboard and screen reader focus at the new page's heading.
  useEffect(() => {
    if (first.current) {
      first.current = false;
      return;
    }
    mainRef.current?.querySelector<HTMLElement>('h1')?.focus();
  }, [page]);

  return (
    <>
      <div className="shell" inert={modalOpen}>
        <a
          className="skip-link"
          href="#main"
          onClick={(e) => {
            e.preventDefault();
            mainRef.current?.querySelector<HTMLElement>('h1')?.focus();
          }}
        >
          {t('app.skip')}
        </a>
        <Nav page={page} />
        <main id="main" className="main" ref={mainRef}>
          <BridgeStatusBar />
          {ready ? (
            <CurrentPage page={page} />
          ) : refused ? (
            <BridgeRefused />
          ) : (
            <div className="page-loading" aria-busy="true">
              <span className="spinner" aria-hidden="true" />
              {t('app.loading')}
            </div>
          )}
        </main>
      </div>
      <PromptModal />
      <ScreenRequestDialog />
      <Toasts />
    </>
  );
}
