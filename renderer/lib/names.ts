/**
 * Names the UI shows for connections. The core names two of them itself, in English: the demo
 * ("Demo server (simulated)", id 'demo', `demo: true`) and the user's own runs (LOCAL_CONNECTION,
 * "local"); those are shown in the user's language. Any other name is the user's own words.
 * A profile renamed since a call came is shown by its current name (ids identify, names display).
 * An MCP app names itself (its clientInfo), so it could take a saved profile's name: it is always
 * marked as an app, by its id, wherever a connection is named.
 */
import type { TFunction } from 'i18next';
import { useCallback } from 'react';
import { useTranslation } from 'react-i18next';
import {
  type ConnectionView,
  LOCAL_CONNECTION,
  MCP_CLIENT_PREFIX,
  textIn,
} from '../../app/contract/index.js';
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
  // Before the profiles: `mcp:` ids are the MCP apps' own (contract offer.ts), never a profile's.
  if (ref.id?.startsWith(MCP_CLIENT_PREFIX)) return t('connections.mcpAppName', { name: ref.name });
  const profile = ref.id ? connections.find((c) => c.profile.id === ref.id)?.profile : undefined;
  if (profile) return profile.demo ? t('connections.demoName') : profile.name;
  // Records written before ids were recorded name the user's own runs only by "local".
  if (ref.id === LOCAL_CONNECTION.id || (!ref.id && ref.name === LOCAL_CONNECTION.name))
    return t('connections.localName');
  if (ref.id === DEMO_ID) return t('connections.demoName');
  return ref.name;
}

/**
 * One choice of the Activity page's connection filter: a connection by id (with the name its
 * records carried before ids were recorded, when known), or, for such older records that no
 * connection here claims, a recorded name alone.
 */
export interface ConnectionChoice {
  /** The select's value: unique among the choices. */
  key: string;
  connectionId?: string;
  connection?: string;
  label: string;
}

/** What the loaded audit records showed: ids with the name last seen, and names of id-less ones. */
export interface SeenConnections {
  ids: ReadonlyMap<string, string>;
  names: ReadonlySet<string>;
}

/**
 * The connection filter's choices: one per connection id (the saved ones, then any other the
 * records name), labelled as the table labels rows, and one per recorded name of older records
 * without an id. Choices that would read alike are told apart by kind, then by id.
 */
export function connectionChoices(
  t: TFunction,
  connections: readonly ConnectionView[],
  seen: SeenConnections,
  kindName: (kind: string) => string = (kind) => kind,
  selected: { connectionId: string; connection: string } = { connectionId: '', connection: '' },
): ConnectionChoice[] {
  const out: (ConnectionChoice & { kind?: string })[] = [];
  const byId = new Set<string>();
  const claimed = new Set<string>();
  const addId = (id: string, name: string, fallback: string | undefined, kind?: string): void => {
    if (byId.has(id)) return;
    byId.add(id);
    if (fallback !== undefined) claimed.add(fallback);
    out.push({
      key: `id:${id}`,
      connectionId: id,
      ...(fallback !== undefined ? { connection: fallback } : {}),
      label: connectionLabel(t, { id, name }, connections),
      ...(kind !== undefined ? { kind } : {}),
    });
  };
  // A saved profile's older records carry the name it has now, if it was not renamed since.
  for (const { profile } of connections)
    addId(profile.id, profile.name, profile.name, profile.kind);
  const others = [...seen.ids].sort(([a, x], [b, y]) => x.localeCompare(y) || a.localeCompare(b));
  for (const [id, name] of others) {
    // The user's own runs were recorded as "local" before ids; nobody else's name is known to be
    // theirs (an MCP app's especially: it picks its own).
    addId(id, name, id === LOCAL_CONNECTION.id ? LOCAL_CONNECTION.name : undefined);
  }
  if (selected.connectionId && !byId.has(selected.connectionId)) {
    addId(
      selected.connectionId,
      selected.connection || selected.connectionId,
      selected.connection || undefined,
    );
  }
  const addName = (name: string): void => {
    claimed.add(name);
    out.push({ key: `name:${name}`, connection: name, label: connectionLabel(t, { name }) });
  };
  for (const name of [...seen.names].sort()) if (!claimed.has(name)) addName(name);
  // A name chosen earlier stays choosable (and shown) while the page is open.
  const key = connectionChoiceKey(selected);
  if (!selected.connectionId && key && !out.some((c) => c.key === key))
    addName(selected.connection);
  for (const same of groupsAlike(out)) {
    // The kind tells them apart when each has its own; otherwise the id does.
    const kinds = new Set(same.map((c) => c.kind));
    const byKind = kinds.size === same.length;
    for (const c of same) {
      const kind = c.kind === undefined ? undefined : kindName(c.kind);
      const detail = !c.connectionId
        ? t('activity.olderRecords')
        : byKind && kind !== undefined
          ? kind
          : [kind, c.connectionId].filter((part) => part !== undefined).join(' · ');
      c.label = t('activity.connectionChoice', { name: c.label, detail });
    }
  }
  return out.map(({ kind: _kind, ...c }) => c);
}

/** The key of the choice a filter's connection fields select ('' for any connection). */
export function connectionChoiceKey(f: { connectionId: string; connection: string }): string {
  if (f.connectionId) return `id:${f.connectionId}`;
  return f.connection ? `name:${f.connection}` : '';
}

/** The groups of two or more choices with the same label. */
function groupsAlike<T extends { label: string }>(choices: readonly T[]): T[][] {
  const byLabel = new Map<string, T[]>();
  for (const c of choices) byLabel.set(c.label, [...(byLabel.get(c.label) ?? []), c]);
  return [...byLabel.values()].filter((g) => g.length > 1);
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
