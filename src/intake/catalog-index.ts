/**
 * The live catalog, indexed for row validation, with each pack's order shape worked out once.
 *
 * Shape of a pack (spec section 1 table), first match wins:
 *  - stock:         category "gamekey"/"giftcard" (any case, spaces/_/- ignored), or stock fields
 *                   (`quantityMax`/`inStock`) on a pack whose line asks for no userId;
 *  - riot-id:       a required label mentioning "Riot ID", or slug valorant / lol… / riot…;
 *  - region-server: the line requires `region` or lists regionOptions;
 *  - uid-server:    the line requires `serverId` or lists serverIdOptions;
 *  - ml:            the line requires `zoneId`;
 *  - player-id:     everything else.
 * The fields an order needs are the shape's fields plus whatever the line's `required` names.
 */
import type { Product, ServiceLine } from '../api/schemas.js';
import { canonicalField, type OrderField } from './columns.js';
import { foldPackName } from '../api/pack-id.js';

export type LineKind = 'player-id' | 'ml' | 'uid-server' | 'region-server' | 'riot-id' | 'stock';

/** A field an order for this pack must carry, with the label the supplier shows for it. */
export interface RequiredField {
  field: Extract<OrderField, 'userId' | 'zoneId' | 'serverId' | 'region' | 'moreId'>;
  label: string;
}

export interface CatalogEntry {
  product: Product;
  line: ServiceLine | undefined;
  kind: LineKind;
  /** Fields the order body carries besides pid, trxid and quantity. */
  required: readonly RequiredField[];
  /** `required[].field` names of the line that this tool cannot send (reported per row). */
  unsupported: readonly string[];
}

export interface CatalogIndex {
  byPid(pid: string): CatalogEntry | undefined;
  /** The one active pack with this slug and pack name (case-insensitive), else undefined. */
  bySlugPack(slug: string, pack: string): CatalogEntry | undefined;
  /** Every pack with this slug and pack name, active or not: tells "unknown" from "ambiguous". */
  slugPackCandidates(slug: string, pack: string): readonly CatalogEntry[];
  line(slug: string): ServiceLine | undefined;
  products: readonly Product[];
  services: readonly ServiceLine[];
}

const SHAPE_FIELDS: Readonly<Record<LineKind, readonly RequiredField['field'][]>> = {
  'player-id': ['userId'],
  ml: ['userId', 'zoneId'],
  'uid-server': ['userId', 'serverId'],
  'region-server': ['userId', 'region', 'moreId'],
  'riot-id': ['userId'],
  stock: [],
};

const DEFAULT_LABELS: Readonly<Record<RequiredField['field'], string>> = {
  userId: 'Player ID',
  zoneId: 'Zone ID',
  serverId: 'Server',
  region: 'Region',
  moreId: 'Server ID',
};

/** Fields the order body never takes from `required` (sent separately, or not at all). */
const NOT_FROM_REQUIRED: ReadonlySet<OrderField> = new Set(['pid', 'trxid', 'quantity', 'slug', 'pack', 'maxPriceUsd']);

/** The one fold of a slug and a pack name (api/pack-id.ts). */
const fold = foldPackName;
const key = (slug: string, pack: string): string => `${fold(slug)}\u0000${fold(pack)}`;

export function isActive(status: string): boolean {
  return fold(status) === 'active';
}

export function buildCatalogIndex(services: ServiceLine[], products: Product[]): CatalogIndex {
  const lines = new Map<string, ServiceLine>();
  for (const s of services) if (!lines.has(fold(s.slug))) lines.set(fold(s.slug), s);

  const byPid = new Map<string, CatalogEntry>();
  const bySlugPack = new Map<string, CatalogEntry[]>();
  for (const product of products) {
    const entry = describe(product, lines.get(fold(product.slug)));
    // A pid listed twice: keep the active one, since that is the one the API will sell.
    const prior = byPid.get(product.id);
    if (!prior || (!isActive(prior.product.status) && isActive(product.status))) byPid.set(product.id, entry);
    const k = key(product.slug, product.serviceName);
    bySlugPack.set(k, [...(bySlugPack.get(k) ?? []), entry]);
  }

  return {
    byPid: (pid) => byPid.get(pid.trim()),
    bySlugPack: (slug, pack) => {
      const active = (bySlugPack.get(key(slug, pack)) ?? []).filter((e) => isActive(e.product.status));
      return active.length === 1 ? active[0] : undefined;
    },
    slugPackCandidates: (slug, pack) => bySlugPack.get(key(slug, pack)) ?? [],
    line: (slug) => lines.get(fold(slug)),
    products: Object.freeze([...products]),
    services: Object.freeze([...services]),
  };
}

function describe(product: Product, line: ServiceLine | undefined): CatalogEntry {
  const kind = kindOf(product, line);
  const labels = new Map<RequiredField['field'], string>();
  const unsupported: string[] = [];
  for (const r of line?.required ?? []) {
    const field = canonicalField(r.field);
    if (field === undefined) unsupported.push(r.field);
    else if (!NOT_FROM_REQUIRED.has(field) && !labels.has(field as RequiredField['field'])) {
      labels.set(field as RequiredField['field'], r.label || DEFAULT_LABELS[field as RequiredField['field']]);
    }
  }
  for (const field of SHAPE_FIELDS[kind]) {
    if (!labels.has(field)) labels.set(field, kind === 'riot-id' && field === 'userId' ? 'Riot ID (name#tag)' : DEFAULT_LABELS[field]);
  }
  const required = [...labels].map(([field, label]) => ({ field, label }));
  return { product, line, kind, required, unsupported };
}

function kindOf(product: Product, line: ServiceLine | undefined): LineKind {
  const needs = new Set((line?.required ?? []).map((r) => canonicalField(r.field)));
  const category = product.category.toLowerCase().replace(/[\s_-]+/g, '');
  const hasStockFields = product.quantityMax !== undefined || product.inStock !== undefined;
  if (/^(gamekey|giftcard)s?$/.test(category) || (hasStockFields && !needs.has('userId'))) return 'stock';

  const slug = fold(product.slug);
  const riotLabel = (line?.required ?? []).some((r) => /riot\s*id/i.test(r.label));
  if (riotLabel || /^(valorant|lol|riot)/.test(slug)) return 'riot-id';
  if (needs.has('region') || (line?.regionOptions?.length ?? 0) > 0) return 'region-server';
  if (needs.has('serverId') || (line?.serverIdOptions?.length ?? 0) > 0) return 'uid-server';
  if (needs.has('zoneId')) return 'ml';
  return 'player-id';
}
