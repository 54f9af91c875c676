/**
 * The sandbox's default catalog: one line per order shape of spec §1, realistic USD prices,
 * and a few rows that exist only to reach error paths (a disabled line, a disabled pack,
 * a card with stock 3, a card out of stock). `loadCatalogFile` replaces it with a catalog
 * exported from a real account.
 */
import { readFileSync } from 'node:fs';
import type { Catalog, CatalogProduct, OptionValue, ServiceLine } from './types.js';

const playerId = [{ field: 'userId', label: 'Player ID' }];
const opts = (...values: string[]): OptionValue[] => values.map((v) => ({ value: v, label: v }));

function line(slug: string, gameName: string, productName: string, required = playerId, extra: Partial<ServiceLine> = {}): ServiceLine {
  return { productName, slug, gameName, required, status: 'active', ...extra };
}

export const STOCK_CATEGORIES: ReadonlySet<string> = new Set(['gamekey', 'giftcard']);

const services: ServiceLine[] = [
  line('pubg', 'PUBG Mobile', 'PUBG Mobile UC (Global)'),
  line('pubgsubscription', 'PUBG Mobile', 'PUBG Mobile Prime & Packs'),
  line('pubgucspecial', 'PUBG Mobile', 'PUBG Mobile UC (card purchase)'),
  line('pubgcncn', 'PUBG Mobile', 'PUBG Mobile UC (CN web)'),
  line('ffmena', 'Free Fire', 'Free Fire Diamonds (MENA)'),
  line('ffcis', 'Free Fire', 'Free Fire Diamonds (CIS)'),
  line('ffbd', 'Free Fire', 'Free Fire Diamonds (Bangladesh)'),
  line('fflatam', 'Free Fire', 'Free Fire Diamonds (LATAM)'),
  line('mobilelegends', 'Mobile Legends', 'Mobile Legends Diamonds', [
    { field: 'userId', label: 'User ID' }, { field: 'zoneId', label: 'Zone ID' },
  ]),
  line('wutheringwaves', 'Wuthering Waves', 'Wuthering Waves Lunite', [
    { field: 'userId', label: 'UID' }, { field: 'serverId', label: 'Server' },
  ], { serverIdOptions: opts('America', 'Europe', 'Asia', 'SEA', 'HMT') }),
  line('identityv', 'Identity V', 'Identity V Echoes', [
    { field: 'userId', label: 'UID' }, { field: 'serverId', label: 'Server' },
  ], { serverIdOptions: opts('Asia', 'NA-EU') }),
  line('oncehuman', 'Once Human', 'Once Human Crystgin', [
    { field: 'userId', label: 'Player ID' }, { field: 'region', label: 'Region' }, { field: 'moreId', label: 'Server ID' },
  ], { regionOptions: opts('Europe', 'North America', 'Asia', 'Southeast Asia', 'South America') }),
  line('valorant', 'Valorant', 'Valorant Points', [{ field: 'userId', label: 'Riot ID (name#tag)' }]),
  line('gamekeypubg', 'PUBG Mobile', 'PUBG Mobile UC Redeem Codes', [{ field: 'quantity', label: 'Quantity' }]),
  line('steamgiftcard', 'Steam', 'Steam Wallet Gift Card (US)', [{ field: 'quantity', label: 'Quantity' }]),
  line('googleplaygiftcard', 'Google Play', 'Google Play Gift Card (US)', [{ field: 'quantity', label: 'Quantity' }]),
  // Exists but is switched off: never listed, ordering its pack answers GAME DISABLED.
  { ...line('genshinimpact', 'Genshin Impact', 'Genshin Impact Genesis Crystals', [
    { field: 'userId', label: 'UID' }, { field: 'serverId', label: 'Server' },
  ], { serverIdOptions: opts('America', 'Europe', 'Asia', 'TW-HK-MO') }), status: 'inactive' },
];

type Row = [id: string, serviceName: string, price: number];

function packs(slug: string, category: string, rows: Row[]): CatalogProduct[] {
  const svc = services.find((s) => s.slug === slug);
  if (!svc) throw new Error(`catalog: no line ${slug}`);
  return rows.map(([id, serviceName, price]) => ({
    id, slug, gameName: svc.gameName, serviceName, category, price, status: 'active',
  }));
}

function stocked(p: CatalogProduct[], stock: number[]): CatalogProduct[] {
  return p.map((x, i) => ({ ...x, quantity: stock[i] ?? 0 }));
}

const products: CatalogProduct[] = [
  ...packs('pubg', 'topup', [
    ['PUBG-60', '60 UC', 0.92], ['PUBG-325', '325 UC', 4.55], ['PUBG-660', '660 UC', 9.1],
    ['PUBG-1800', '1800 UC', 22.75], ['PUBG-3850', '3850 UC', 45.5], ['PUBG-8100', '8100 UC', 91],
  ]),
  ...packs('pubgsubscription', 'subscription', [
    ['PRIME-1M', 'PRIME 1 month', 0.99], ['PRIME-3M', 'PRIME 3 months', 2.9], ['PRIME-6M', 'PRIME 6 months', 5.7],
    ['PRIME-12M', 'PRIME 12 months', 11.2], ['PRIMEPLUS-1M', 'PRIMEPLUS 1 month', 9.5],
    ['PRIMEPLUS-3M', 'PRIMEPLUS 3 months', 28], ['PRIMEPLUS-6M', 'PRIMEPLUS 6 months', 55],
    ['PRIMEPLUS-12M', 'PRIMEPLUS 12 months', 108], ['FIRST-PURCHASE', 'FIRST PURCHASE PACK', 0.99],
    ['MATERIAL-PACK', 'MATERIAL PACK', 1.95], ['MYTHIC-EMBLEM', 'MYTHIC EMBLEM PACK', 4.8],
    ['WEEKLY-EMBLEM', 'WEEKLY EMBLEM', 0.96], ['PRIME-LEGACY', 'PRIME legacy pack', 1.5],
  ]),
  ...packs('pubgucspecial', 'topup', [
    ['PUBGSP-60', '60 UC', 0.88], ['PUBGSP-325', '325 UC', 4.4], ['PUBGSP-660', '660 UC', 8.8],
    ['PUBGSP-1800', '1800 UC', 22], ['PUBGSP-3850', '3850 UC', 44], ['PUBGSP-8100', '8100 UC', 88],
    ['PUBGSP-16200', '16200 UC', 176], ['PUBGSP-24300', '24300 UC', 264], ['PUBGSP-32400', '32400 UC', 352],
    ['PUBGSP-40500', '40500 UC', 440],
  ]),
  ...packs('pubgcncn', 'topup', [
    ['PUBGCN-60', '60 UC', 0.85], ['PUBGCN-325', '325 UC', 4.25], ['PUBGCN-660', '660 UC', 8.5],
    ['PUBGCN-1800', '1800 UC', 21.25], ['PUBGCN-3850', '3850 UC', 42.5], ['PUBGCN-8100', '8100 UC', 85],
  ]),
  ...(['ffmena', 'ffcis', 'ffbd', 'fflatam'] as const).flatMap((slug, r) => {
    const tag = slug.slice(2).toUpperCase();
    const k = [1, 0.97, 0.9, 1.03][r] ?? 1;
    return packs(slug, 'topup', [
      [`FF${tag}-100`, '100 Diamonds', +(0.95 * k).toFixed(2)], [`FF${tag}-310`, '310 Diamonds', +(2.85 * k).toFixed(2)],
      [`FF${tag}-520`, '520 Diamonds', +(4.75 * k).toFixed(2)], [`FF${tag}-1060`, '1060 Diamonds', +(9.5 * k).toFixed(2)],
      [`FF${tag}-2180`, '2180 Diamonds', +(19 * k).toFixed(2)],
    ]);
  }),
  ...packs('mobilelegends', 'topup', [
    ['ML-86', '86 Diamonds', 1.55], ['ML-172', '172 Diamonds', 3.1], ['ML-257', '257 Diamonds', 4.6],
    ['ML-706', '706 Diamonds', 12.4], ['ML-WDP', 'Weekly Diamond Pass', 1.45],
  ]),
  ...packs('wutheringwaves', 'topup', [
    ['WW-60', '60 Lunite', 0.95], ['WW-300', '300 Lunite', 4.6], ['WW-980', '980 Lunite', 14.5],
    ['WW-PASS', 'Lunite Subscription', 4.6],
  ]),
  ...packs('identityv', 'topup', [['IDV-60', '60 Echoes', 0.95], ['IDV-185', '185 Echoes', 2.85], ['IDV-690', '690 Echoes', 9.6]]),
  ...packs('oncehuman', 'topup', [['OH-60', '60 Crystgin', 0.98], ['OH-300', '300 Crystgin', 4.85], ['OH-980', '980 Crystgin', 14.6]]),
  ...packs('valorant', 'topup', [['VAL-475', '475 VP', 4.9], ['VAL-1000', '1000 VP', 9.8], ['VAL-2050', '2050 VP', 19.5]]),
  ...stocked(packs('gamekeypubg', 'gamekey', [
    ['KEY-PUBG-60', '60 UC code', 0.9], ['KEY-PUBG-325', '325 UC code', 4.5], ['KEY-PUBG-660', '660 UC code', 9],
  ]), [1200, 800, 3]),
  ...stocked(packs('steamgiftcard', 'giftcard', [
    ['STEAM-5', 'Steam $5', 5.15], ['STEAM-10', 'Steam $10', 10.3], ['STEAM-20', 'Steam $20', 20.6], ['STEAM-50', 'Steam $50', 51.5],
  ]), [900, 600, 250, 0]),
  ...stocked(packs('googleplaygiftcard', 'giftcard', [['GPLAY-10', 'Google Play $10', 10.4], ['GPLAY-25', 'Google Play $25', 26]]), [400, 150]),
  ...packs('genshinimpact', 'topup', [['GI-60', '60 Genesis Crystals', 0.99], ['GI-330', '300+30 Genesis Crystals', 4.9]]),
];
// A pack switched off on an active line: ordering it answers PRODUCT_DISABLED.
for (const p of products) if (p.id === 'PRIME-LEGACY') p.status = 'inactive';

export function defaultCatalog(): Catalog {
  return structuredClone({ services, products });
}

/** Reads `{ services, products }` as exported from a real account. Stock fields are optional. */
export function loadCatalogFile(file: string): Catalog {
  const raw: unknown = JSON.parse(readFileSync(file, 'utf8'));
  if (!raw || typeof raw !== 'object') throw new Error(`${file}: not a JSON object`);
  const { services: s, products: p } = raw as { services?: unknown; products?: unknown };
  if (!Array.isArray(s) || !Array.isArray(p)) throw new Error(`${file}: needs arrays "services" and "products"`);
  const lines = s.map((x: ServiceLine) => ({
    ...x,
    required: Array.isArray(x.required) ? x.required : [],
    serverIdOptions: normaliseOptions(x.serverIdOptions),
    regionOptions: normaliseOptions(x.regionOptions),
  }));
  for (const l of lines) {
    if (!l.serverIdOptions) delete l.serverIdOptions;
    if (!l.regionOptions) delete l.regionOptions;
  }
  return { services: lines, products: p.map((x: CatalogProduct) => ({ ...x, id: String(x.id), price: Number(x.price) })) };
}

/** Real exports may hold bare strings; the sandbox answers `{ value, label }` objects. */
function normaliseOptions(o: unknown): OptionValue[] | undefined {
  if (!Array.isArray(o)) return undefined;
  return o.map((v: unknown) => {
    if (typeof v === 'string' || typeof v === 'number') return { value: String(v), label: String(v) };
    const r = v as Record<string, unknown>;
    const value = String(r.value ?? r.id ?? r.code ?? '');
    return { value, label: String(r.label ?? r.name ?? value) };
  });
}
