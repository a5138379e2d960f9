import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './App.js';
import { setBridge } from './bridge/current.js';
import { startBridge } from './bridge/index.js';
import { attachReminders } from './features/reminders/reminders.js';
import { warmUpVoices, windowSpeaker } from './features/reminders/window-speech.js';
import { attachScreenRequests } from './features/screen/screen.js';
import { voice } from './features/voice/voice.js';
import { startI18n } from './i18n/index.js';
import { attachFeed } from './store/feed.js';
import './styles.css';

startI18n();
const bridge = startBridge();
setBridge(bridge);
attachFeed(bridge);
voice.attach(bridge);
warmUpVoices();
attachReminders(bridge, windowSpeaker);
attachScreenRequests(bridge);

const root = document.getElementById('root');
if (root)
  createRoot(root).render(
    <StrictMode>
      <App />
    </StrictMode>,
  );
