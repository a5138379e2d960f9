import { useMemo, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { PageHeader } from '../../components/PageHeader.js';
import { useConnectionLabel } from '../../lib/names.js';
import { activeConnection, useConnections } from '../../store/connection.js';
import { useChat } from '../../store/chat.js';
import { useUi } from '../../store/ui.js';
import { SpeakBox } from '../voice/SpeakBox.js';
import { Composer } from './Composer.js';
import { ConnectionBanner } from './ConnectionBanner.js';
import { MoodFaceIcon } from '../../components/MoodFaces.js';
import { moodKey } from './mood.js';
import { Timeline } from './Timeline.js';
import { Welcome } from './Welcome.js';

function MoodFace({ connection }: { connection: string | undefined }) {
  const { t } = useTranslation();
  const moods = useChat((s) => s.moods);
  const mood = useMemo(() => {
    if (connection && moods[connection]) return moods[connection];
    // No active connection: the latest mood of any.
    return Object.values(moods).sort((a, b) => b.at - a.at)[0];
  }, [moods, connection]);
  const key = moodKey(mood?.emoji);
  return (
    <span
      className="mood"
      role="img"
      aria-label={t('mood.label', { mood: t(`mood.${key}`) })}
      title={t('mood.label', { mood: t(`mood.${key}`) })}
      data-testid="mood"
      data-mood={key}
      key={`${key}-${mood?.at ?? 0}`}
    >
      <MoodFaceIcon mood={key} />
    </span>
  );
}

export function ChatPage() {
  const { t } = useTranslation();
  const connections = useConnections((s) => s.connections);
  const items = useChat((s) => s.items);
  const active = activeConnection(connections);
  const firstRun = connections.length === 0;
  const label = useConnectionLabel();
  const bridgeOpen = useUi((s) => s.bridgeStatus === 'open');
  const ready = bridgeOpen && active?.state.status === 'ready';
  // The demo button goes away with the welcome panel; the message box is where to go next.
  const [demoStarted, setDemoStarted] = useState(false);

  // Label items with their server only when more than one server is in the conversation.
  const names = useMemo(() => {
    const known = Object.fromEntries(
      connections.map((c) => [c.profile.id, label({ id: c.profile.id, name: c.profile.name })]),
    );
    const ids = new Set(items.map((i) => i.connection).filter((id) => id in known));
    return ids.size < 2 ? undefined : known;
  }, [items, connections, label]);

  return (
    <div className="page page-chat">
      <PageHeader title={t('chat.title')} aside={<MoodFace connection={active?.profile.id} />} />
      {firstRun ? (
        <Welcome onDemoStarted={() => setDemoStarted(true)} />
      ) : (
        <>
          <ConnectionBanner />
          <Timeline items={items} names={names} />
          <Composer active={active} focusWhenReady={demoStarted} />
          <SpeakBox ready={ready} />
        </>
      )}
    </div>
  );
}
