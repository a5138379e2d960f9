/**
 * Which services each connection is offered (a voice server may cap how many tools it takes, and a
 * user may want a server to see only some). One selection per connection, kept in settings under
 * the connection's id; every MCP app connected to the agent's own MCP server (ids `mcp:…`) shares
 * the one under `mcp-clients`. No selection means every enabled service.
 *
 * `except` keeps services added later (a new MCP server's tools) flowing to the connection; `only`
 * pins a fixed set. Names that match no service (an MCP server removed) are kept, so the choice
 * holds again when it comes back, and ignored meanwhile. Pure TS: the renderer counts with it too.
 */
import { type Static, Type } from '@sinclair/typebox';

/** The selection key shared by every MCP app (Claude Desktop, Cursor…) connected to the agent. */
export const MCP_CLIENTS_OFFER = 'mcp-clients';
/** Connection ids of MCP apps connected to the agent's own MCP server start with this. */
export const MCP_CLIENT_PREFIX = 'mcp:';

/** Names one selection may list (far above any registry a person could read through). */
export const MAX_OFFER_NAMES = 2000;
/** Selections settings may hold (one per connection profile, plus the MCP apps). */
export const MAX_OFFERS = 500;

const ServiceName = Type.String({ minLength: 1, maxLength: 64, pattern: '^[a-z][a-z0-9_]*$' });
const Names = Type.Array(ServiceName, { maxItems: MAX_OFFER_NAMES, uniqueItems: true });
const closed = { additionalProperties: false } as const;

export const OfferSchema = Type.Union([
  Type.Object({ only: Names }, closed),
  Type.Object({ except: Names }, closed),
]);
export type Offer = Static<typeof OfferSchema>;

/** A connection profile's id, or `mcp-clients`. */
export const OfferKeySchema = Type.String({
  minLength: 1,
  maxLength: 64,
  pattern: '^[A-Za-z0-9_.:-]+$',
});

export const OffersSchema = Type.Record(OfferKeySchema, OfferSchema, {
  maxProperties: MAX_OFFERS,
});
export type Offers = Static<typeof OffersSchema>;

/** The selection key of a connection: its own id, or `mcp-clients` for every MCP app. */
export function offerKeyOf(connectionId: string): string {
  return connectionId.startsWith(MCP_CLIENT_PREFIX) ? MCP_CLIENTS_OFFER : connectionId;
}

/**
 * Whether a selection lets `service` through (whether the service exists or is switched on is
 * the registry's business). No selection lets everything through.
 */
export function offerAllows(offer: Offer | undefined, service: string): boolean {
  if (!offer) return true;
  return 'only' in offer ? offer.only.includes(service) : !offer.except.includes(service);
}

/** The names a selection lists that match none of `known` (kept, ignored, shown as such). */
export function missingNames(offer: Offer | undefined, known: ReadonlySet<string>): string[] {
  if (!offer) return [];
  const listed = 'only' in offer ? offer.only : offer.except;
  return listed.filter((name) => !known.has(name));
}
