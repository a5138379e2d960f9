/**
 * The Services page's model, apart from its React: what a row's policy menu shows (the policy,
 * or "always allowed" when a remembered grant decides), and how services sort into sections
 * (built-in groups in a fixed order, then imported MCP tools under their server).
 */
import {
  type Policy,
  SERVICE_GROUPS,
  type ServiceGroup,
  type ServiceView,
} from '../../../app/contract/index.js';

/** What the policy menu shows: the policy, or "always allowed" when a prompt's grant decides. */
export type PolicyChoice = Policy | 'granted';

/**
 * The effective answer to "what happens when a server calls it": deny wins over everything; a
 * remembered "always" for the whole service (its own name as the grant key) makes `ask` allow.
 */
export function policyChoice(
  service: Pick<ServiceView, 'name' | 'policy' | 'alwaysGrants'>,
): PolicyChoice {
  if (service.policy === 'ask' && service.alwaysGrants.includes(service.name)) return 'granted';
  return service.policy;
}

/** An imported MCP tool is listed under its server's name. */
function serverOf(service: ServiceView): string | undefined {
  return service.server?.name || undefined;
}

export interface Section {
  key: string;
  group?: ServiceGroup;
  server?: string;
  services: ServiceView[];
}

/** Built-in groups in their fixed order, then one section per MCP server by name. */
export function sectionsOf(services: readonly ServiceView[]): Section[] {
  const byKey = new Map<string, Section>();
  for (const s of services) {
    const server = serverOf(s);
    const group: ServiceGroup = (SERVICE_GROUPS as readonly string[]).includes(s.group)
      ? s.group
      : 'other';
    const key = server ? `server:${server}` : `group:${group}`;
    let section = byKey.get(key);
    if (!section)
      byKey.set(
        key,
        (section = server ? { key, server, services: [] } : { key, group, services: [] }),
      );
    section.services.push(s);
  }
  const groups = SERVICE_GROUPS.map((g) => byKey.get(`group:${g}`)).filter(
    (x): x is Section => !!x,
  );
  const servers = [...byKey.values()]
    .filter((x) => x.server !== undefined)
    .sort((a, b) => (a.server ?? '').localeCompare(b.server ?? ''));
  return [...groups, ...servers];
}
