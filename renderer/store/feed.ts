/**
 * Feeds the stores from the bridge: a whole snapshot whenever the bridge is (re)connected, then
 * the events. Returns a function that detaches everything.
 */
import type { Snapshot } from '../../app/contract/index.js';
import type { Bridge } from '../bridge/types.js';
import { useAudit } from './audit.js';
import { useChat } from './chat.js';
import { useConnections } from './connection.js';
import { useMcpHttp } from './mcpHttp.js';
import { usePrompts } from './prompts.js';
import { useServices } from './services.js';
import { useSettings } from './settings.js';
import { useToasts } from './toasts.js';
import { useUi } from './ui.js';

export function applySnapshot(snap: Snapshot): void {
  useConnections.getState().replace(snap.connections, snap.kinds);
  useServices.getState().replace(snap.services);
  useChat.getState().replace(snap.chat);
  usePrompts.getState().replace(snap.prompts);
  useSettings.getState().replace(snap.settings);
  // A snapshot from an older core has no endpoint state: it is off there.
  useMcpHttp.getState().replace(snap.mcpHttp ?? { status: 'off' });
  useUi.getState().setReady();
}

export function attachFeed(bridge: Bridge): () => void {
  const wasAway = { value: false };
  // The core sends no 'services' event when an "always" answer is remembered; the grant is
  // stored before the call runs, so the call's audit record means it is there: fetch it then.
  let grantsStale = false;
  const refreshServices = () => {
    grantsStale = false;
    void bridge.invoke('snapshot').then(
      (snap) => useServices.getState().replace(snap.services),
      () => {},
    );
  };
  const offs = [
    bridge.onReady((snap) => {
      applySnapshot(snap);
      // Records written while the bridge was away never came as events: reload the table.
      if (wasAway.value && useAudit.getState().generation > 0) useAudit.getState().reload();
      wasAway.value = false;
    }),
    bridge.onStatus((status) => {
      useUi.getState().setBridgeStatus(status);
      if (status !== 'open') wasAway.value = true;
    }),
    bridge.on('connection', (view) => useConnections.getState().upsert(view)),
    bridge.on('connectionRemoved', ({ id }) => useConnections.getState().remove(id)),
    bridge.on('chat', (item) => useChat.getState().upsert(item)),
    bridge.on('mood', ({ connection, emoji }) => useChat.getState().setMood(connection, emoji)),
    bridge.on('services', (list) => useServices.getState().replace(list)),
    bridge.on('prompt', (prompt) => usePrompts.getState().add(prompt)),
    bridge.on('promptResolved', ({ id, resolution }) => {
      if (resolution === 'withdrawn') usePrompts.getState().withdraw(id);
      else usePrompts.getState().remove(id);
      if (resolution === 'always') grantsStale = true;
    }),
    bridge.on('settings', (view) => useSettings.getState().replace(view)),
    bridge.on('mcpHttp', (state) => useMcpHttp.getState().replace(state)),
    bridge.on('audit', (record) => {
      useAudit.getState().live(record);
      if (grantsStale) refreshServices();
    }),
    bridge.on('notice', ({ level, message, connection, kind, words }) => {
      if (kind !== 'protocol')
        return void useToasts
          .getState()
          .push({ level, message, connection: connection?.name, ...(words && { words }) });
      // A protocol line is the dialect's words: the conversation keeps it, folded under a human
      // line. Only a warning interrupts with a toast, and that in words for people.
      if (level === 'info') return;
      useToasts.getState().push({
        level,
        message,
        connection: connection?.name,
        words: { key: 'chat.protocolToast', params: { server: connection?.name ?? '' } },
      });
    }),
  ];
  useUi.getState().setBridgeStatus(bridge.status);
  return () => {
    for (const off of offs) off();
  };
}
