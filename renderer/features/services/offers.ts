/**
 * What each connection is offered, as the Services page counts it: the same rule the core
 * applies (app/contract/offer.ts), over the services the page already has.
 */
import {
  MCP_CLIENTS_OFFER,
  type Offer,
  type Offers,
  type ServiceView,
  missingNames,
  offerAllows,
} from '../../../app/contract/index.js';

/** A row of the "Offered to each connection" list: a saved connection or the MCP apps. */
export interface OfferTarget {
  key: string;
  /** The connection's name as people see it ('' for the MCP apps: the page names them). */
  name: string;
  kind?: string;
  limit?: number;
}

/** Services a server could be offered (user-only ones never reach servers). */
export function offerable(services: readonly ServiceView[]): ServiceView[] {
  return services.filter((s) => !s.userOnly);
}

/** How many enabled services the selection gives the connection, what is over its limit. */
export function offerSummary(
  services: readonly ServiceView[],
  offer: Offer | undefined,
  limit: number | undefined,
): { count: number; over: boolean; missing: string[] } {
  const count = offerable(services).filter((s) => s.enabled && offerAllows(offer, s.name)).length;
  const known = new Set(services.map((s) => s.name));
  return {
    count,
    over: limit !== undefined && count > limit,
    missing: missingNames(offer, known),
  };
}

/**
 * The selection to save from what the dialog shows: the checked services, whether services added
 * later flow in (`except`) or not (`only`), and the names of services not here now that the user
 * kept. No selection at all when it says "everything".
 */
export function offerFrom(
  choosable: readonly string[],
  checked: ReadonlySet<string>,
  autoNew: boolean,
  keptMissing: readonly string[],
): Offer | null {
  if (autoNew) {
    const except = [...choosable.filter((n) => !checked.has(n)), ...keptMissing];
    return except.length === 0 ? null : { except };
  }
  return { only: [...choosable.filter((n) => checked.has(n)), ...keptMissing] };
}

export const MCP_APPS_KEY = MCP_CLIENTS_OFFER;

/** The selection saved under `key` (own keys only: an id is data, not a property path). */
export function offerFor(offers: Offers | undefined, key: string): Offer | undefined {
  return offers && Object.hasOwn(offers, key) ? offers[key] : undefined;
}
