/**
 * Names the UI shows for connections. The core names two of them itself, in English: the demo
 * ("Demo server (simulated)", id 'demo', `demo: true`) and the user's own runs (LOCAL_CONNECTION,
 * "local"); those are shown in the user's language. Any other name is the user's own words.
 * A profile renamed since a call came is shown by its current name (ids identify, names display).
 */
import type { TFunction } from 'i18next';
import { useCallback } from 'react';
import { useTranslation } from 'react-i18next';
import { type ConnectionView, LOCAL_CONNECTION, textIn } from '../../app/contract/index.js';
import { useConnections } from '../store/connection.js';

/** The id the core gives its demo profile. */
export const DEMO_ID = 'demo';

export interface NamedRef {
  /** Absent in audit records written before ids were recorded. */
  id?: string;
  name: string;
}

export function connectionLabel(
  t: TFunction,
  ref: NamedRef,
  connections: readonly ConnectionView[] = [],
): string {
  const profile = ref.id ? connections.find((c) => c.profile.id === ref.id)?.profile : undefined;
  if (profile) return profile.demo ? t('connections.demoName') : profile.name;
  // Records written before ids were recorded name the user's own runs only by "local".
  if (ref.id === LOCAL_CONNECTION.id || (!ref.id && ref.name === LOCAL_CONNECTION.name))
    return t('connections.localName');
  if (ref.id === DEMO_ID) return t('connections.demoName');
  return ref.name;
}

/** connectionLabel bound to the current language and connections. */
export function useConnectionLabel(): (ref: NamedRef) => string {
  const { t } = useTranslation();
  const connections = useConnections((s) => s.connections);
  return useCallback((ref: NamedRef) => connectionLabel(t, ref, connections), [t, connections]);
}

/** A connection kind's short name ("XiaoZhi", "小智") from its spec, in the UI's language. */
export function useKindShortName(): (kind: string) => string {
  const { i18n } = useTranslation();
  const kinds = useConnections((s) => s.kinds);
  return useCallback(
    (kind: string) => {
      const spec = kinds.find((k) => k.kind === kind);
      return spec ? textIn(spec.short, i18n.language) : kind;
    },
    [kinds, i18n.language],
  );
}
