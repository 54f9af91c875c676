/**
 * The benchmark's inputs, generated from a seed: the order file for the daemon run (and the
 * same orders as POST bodies for the naive client), and the big catalog + file of the intake part.
 */
import { createWriteStream, writeFileSync } from 'node:fs';
import { once } from 'node:events';
import type { OrderRequest } from '../src/api/schemas.js';

import { prng as rng } from '../test/e2e/prng.js';

export { rng };

const digits = (r: () => number, n: number): string => {
  let s = String(1 + Math.floor(r() * 9));
  while (s.length < n) s += String(Math.floor(r() * 10));
  return s;
};
const pick = <T>(r: () => number, weighted: [T, number][]): T => {
  let x = r() * weighted.reduce((s, [, w]) => s + w, 0);
  for (const [v, w] of weighted) if ((x -= w) < 0) return v;
  return weighted[weighted.length - 1]![0];
};

const HEADER = ['trxid', 'pid', 'userId', 'zoneId', 'serverId', 'quantity'] as const;

export interface Workload {
  csv: string;
  requests: OrderRequest[];
  mix: Record<string, number>;
}

/**
 * ~10% keys/gift cards (quantity 1–2, complete at once), ~90% top-ups on five order shapes. Which
 * top-ups stay processing, for how long, and which fail is decided by the sandbox from
 * (seed, trxid), so all three contenders see the same fates.
 */
export function batchWorkload(rows: number, seed: number): Workload {
  const r = rng(seed);
  const lines: string[] = [HEADER.join(',')];
  const requests: OrderRequest[] = [];
  const mix: Record<string, number> = {};
  const NAMES = ['Shadow', 'Nova', 'Kestrel', 'Tango', 'Viper', 'Orbit', 'Maple', 'Quartz'];
  for (let i = 0; i < rows; i++) {
    const trxid = `bench-${seed}-${String(i + 1).padStart(6, '0')}`;
    const req: OrderRequest = { pid: '', trxid };
    if (r() < 0.1) {
      req.pid = pick(r, [['KEY-PUBG-60', 5], ['STEAM-5', 3], ['GPLAY-10', 2]]);
      req.quantity = 1 + Math.floor(r() * 2);
    } else {
      req.pid = pick(r, [['PUBG-60', 30], ['FFMENA-100', 25], ['ML-86', 20], ['WW-60', 15], ['VAL-475', 10]]);
      switch (req.pid) {
        case 'PUBG-60': req.userId = digits(r, 9 + Math.floor(r() * 3)); break;
        case 'FFMENA-100': req.userId = digits(r, 5 + Math.floor(r() * 16)); break;
        case 'ML-86': req.userId = digits(r, 8); req.zoneId = digits(r, 4); break;
        case 'WW-60': req.userId = digits(r, 9); req.serverId = 'Europe'; break;
        case 'VAL-475': req.userId = `${NAMES[Math.floor(r() * NAMES.length)]}${digits(r, 3)}#${pick(r, [['EUW', 1], ['NA1', 1], ['TR1', 1]])}`; break;
      }
    }
    mix[req.pid] = (mix[req.pid] ?? 0) + 1;
    requests.push(req);
    lines.push([trxid, req.pid, req.userId ?? '', req.zoneId ?? '', req.serverId ?? '', req.quantity ?? ''].join(','));
  }
  return { csv: `${lines.join('\n')}\n`, requests, mix };
}

// ---------------------------------------------------------------------------------------------
// Intake: a catalog of `products` packs over products/10 lines of every order shape, and a file
// of `rows` orders against it (about 1% of them wrong in some way, so the error paths run too).

interface Line { slug: string; kind: 'player' | 'ff' | 'ml' | 'server' | 'riot' | 'stock' }

export function intakeCatalog(products: number, seed: number): { services: unknown[]; products: unknown[]; lines: Line[]; pids: string[] } {
  const r = rng(seed);
  const kinds: Line['kind'][] = ['player', 'ff', 'ml', 'server', 'riot', 'stock'];
  const services: unknown[] = [];
  const prods: unknown[] = [];
  const lines: Line[] = [];
  const pids: string[] = [];
  const nLines = Math.max(1, Math.ceil(products / 10));
  for (let l = 0; l < nLines; l++) {
    const kind = kinds[l % kinds.length]!;
    const slug = kind === 'ff' ? `ffbench${l}` : kind === 'riot' ? `valorantbench${l}` : `${kind}bench${l}`;
    const required =
      kind === 'ml' ? [{ field: 'userId', label: 'User ID' }, { field: 'zoneId', label: 'Zone ID' }]
      : kind === 'server' ? [{ field: 'userId', label: 'UID' }, { field: 'serverId', label: 'Server' }]
      : kind === 'riot' ? [{ field: 'userId', label: 'Riot ID (name#tag)' }]
      : kind === 'stock' ? [{ field: 'quantity', label: 'Quantity' }]
      : [{ field: 'userId', label: 'Player ID' }];
    services.push({
      productName: `Bench line ${l}`, slug, gameName: `Bench Game ${l}`, required, status: 'active',
      ...(kind === 'server' ? { serverIdOptions: ['America', 'Europe', 'Asia', 'SEA'].map((v) => ({ value: v, label: v })) } : {}),
    });
    lines.push({ slug, kind });
    for (let p = 0; p < 10 && prods.length < products; p++) {
      const id = `B${l}-${p}`;
      pids.push(id);
      prods.push({
        id, slug, gameName: `Bench Game ${l}`, serviceName: `Pack ${p}`, category: kind === 'stock' ? 'giftcard' : 'topup',
        price: Math.round((0.5 + r() * 50) * 100) / 100, status: 'active',
        ...(kind === 'stock' ? { quantity: 100_000, inStock: true, quantityMin: 1, quantityMax: 500 } : {}),
      });
    }
  }
  return { services, products: prods, lines, pids };
}

export async function writeIntakeFiles(dir: string, rows: number, products: number, seed: number): Promise<{ csvPath: string; catalogPath: string; bytes: number }> {
  const cat = intakeCatalog(products, seed);
  const catalogPath = `${dir}/catalog.json`;
  writeFileSync(catalogPath, JSON.stringify({ services: cat.services, products: cat.products }));
  const kindOf = new Map(cat.lines.map((l) => [l.slug, l.kind]));
  const slugOf = (pid: string): string => cat.lines[Number(/^B(\d+)-/.exec(pid)![1])]!.slug;
  const r = rng(seed + 1);
  const csvPath = `${dir}/intake-${rows}.csv`;
  const out = createWriteStream(csvPath);
  let bytes = 0;
  const write = async (s: string): Promise<void> => {
    bytes += Buffer.byteLength(s);
    if (!out.write(s)) await once(out, 'drain');
  };
  await write('trxid,pid,userId,zoneId,serverId,quantity,note\n');
  let chunk = '';
  for (let i = 0; i < rows; i++) {
    const pid = cat.pids[Math.floor(r() * cat.pids.length)]!;
    const kind = kindOf.get(slugOf(pid))!;
    let userId = '', zoneId = '', serverId = '', quantity = '';
    switch (kind) {
      case 'player': userId = digits(r, 9); break;
      case 'ff': userId = digits(r, 10); break;
      case 'ml': userId = digits(r, 8); zoneId = digits(r, 4); break;
      case 'server': userId = digits(r, 9); serverId = 'europe'; break;
      case 'riot': userId = `Player${digits(r, 3)}#EUW`; break;
      case 'stock': quantity = String(1 + Math.floor(r() * 3)); break;
    }
    if (r() < 0.01) userId = kind === 'stock' ? userId : '1.23457E+11'; // a spreadsheet-mangled id
    const note = r() < 0.05 ? '"customer, VIP ""gold"""' : '';
    chunk += `T${seed}-${i + 1},${pid},${userId},${zoneId},${serverId},${quantity},${note}\n`;
    if (chunk.length > 64 * 1024) {
      await write(chunk);
      chunk = '';
    }
  }
  await write(chunk);
  out.end();
  await once(out, 'close');
  return { csvPath, catalogPath, bytes };
}
