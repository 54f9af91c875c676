/**
 * The whole daemon against a sandbox that answers like a real deployment (issue 11): numbers as
 * strings, status aliases, 19-digit ids, null fields, codes in three shapes and late, HTML 502
 * pages (some after the order was charged), failures at submit, cancels without refund, and a
 * manual order with an unknown status in the account's history. Everything is judged against the
 * sandbox's ledger, never against what the daemon believes.
 */
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliEnv, csv, inProcessSandbox, readResult, readSummary, runCli, tempHome, type ResultRow } from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';
import { publicIdOf } from '../../src/sandbox/order-ids.js';

releaseAfterEach();

const HEADER = ['pid', 'userId', 'zoneId', 'serverId', 'region', 'moreId', 'quantity', 'note'];
type Shape = 'topup' | 'key' | 'failing';
const ROWS: [Shape, string[]][] = [
  ['topup', ['PUBG-60', '5123456701', '', '', '', '', '', 'player id']],
  ['topup', ['PUBG-325', '5123456702', '', '', '', '', '', 'player id']],
  ['topup', ['PRIME-1M', '5123456703', '', '', '', '', '', 'subscription']],
  ['topup', ['PUBGCN-60', '5123456704', '', '', '', '', '', 'cn web']],
  ['topup', ['PUBGSP-325', '5123456705', '', '', '', '', '', 'card purchase']],
  ['topup', ['FFMENA-100', '55667788', '', '', '', '', '', 'free fire']],
  ['topup', ['FFBD-310', '00412345678', '', '', '', '', '', 'leading zero']],
  ['topup', ['ML-86', '123456789', '2001', '', '', '', '', 'ml zone']],
  ['topup', ['ML-WDP', '223456789', '8012', '', '', '', '', 'ml zone']],
  ['topup', ['WW-60', '800123456', '', 'Europe', '', '', '', 'uid + server']],
  ['topup', ['IDV-60', '31234567', '', 'NA-EU', '', '', '', 'uid + server']],
  ['topup', ['OH-60', '7001234', '', '', 'Europe', 'S-12', '', 'region + server']],
  ['topup', ['OH-300', '7001235', '', '', 'na', 'S-40', '', 'region shortcut']],
  ['topup', ['VAL-475', 'Player#EUW', '', '', '', '', '', 'riot id']],
  ['topup', ['VAL-1000', 'Night Owl#1234', '', '', '', '', '', 'riot id']],
  ['key', ['KEY-PUBG-60', '', '', '', '', '', '2', 'keys']],
  ['key', ['KEY-PUBG-325', '', '', '', '', '', '3', 'keys']],
  ['key', ['STEAM-5', '', '', '', '', '', '1', 'gift card']],
  ['key', ['STEAM-10', '', '', '', '', '', '4', 'gift card']],
  ['key', ['GPLAY-10', '', '', '', '', '', '2', 'gift card']],
  ['key', ['KEY-PUBG-60', '', '', '', '', '', '5', 'keys again']],
  ...Array.from({ length: 10 }, (_, i): [Shape, string[]] => ['failing', [i % 2 ? 'PUBG-60' : 'FFCIS-100', '99999', '', '', '', '', '', `failing ${i}`]]),
  ...Array.from({ length: 10 }, (_, i): [Shape, string[]] => ['topup', [['PUBG-60', 'PUBG-660', 'FFLATAM-100'][i % 3]!, String(5_200_000_100 + i), '', '', '', '', '', `more ${i}`]]),
];

interface Truth {
  orders: { orderId: string; publicId: string; trxid?: string; status: string; amountUsd: number; codes?: string[]; source: string }[];
  entries: { kind: string; orderId: string | null; trxid: string | null; amountUsd: number }[];
  balance: number;
}

/** Judges one batch's result rows against the ledger. */
function judgeBatch(rows: ResultRow[], shapes: Shape[], truth: Truth): void {
  expect(rows).toHaveLength(shapes.length);
  const refunded = new Set(truth.entries.filter((e) => e.kind === 'refund').map((e) => e.orderId));
  rows.forEach((row, i) => {
    const what = `row ${i + 2} (${row.note}): ${JSON.stringify(row)}`;
    // Every row final and placed; failing players cancelled (the ledger says how the rest ended).
    expect(['completed', 'cancelled'], what).toContain(row.status);
    if (shapes[i] === 'failing') expect(row.status, what).toBe('cancelled');
    const orders = truth.orders.filter((o) => o.source === 'api' && o.trxid === row.trxid);
    const charges = truth.entries.filter((e) => e.kind === 'charge' && e.trxid === row.trxid);
    expect(orders, what).toHaveLength(1); // one order per purchase
    expect(charges, what).toHaveLength(1); // no double charge
    const o = orders[0]!;
    // The id as the supplier wrote it, every digit (19-digit ids included), or the spec id.
    expect([o.publicId, o.orderId], what).toContain(row.orderId);
    expect(o.status, what).toBe(row.status);
    expect(Number(row.amountUsd), what).toBeCloseTo(o.amountUsd, 6);
    if (row.status === 'cancelled') expect(row.refunded, what).toBe(String(refunded.has(o.orderId)));
    if (shapes[i] === 'key') {
      expect(o.codes?.length, what).toBe(Number(row.quantity));
      for (const code of o.codes!) expect(row.codes, what).toContain(code);
    }
  });
}

/** Net money the ledger moved for these trxids (charges less refunds), in USD. */
const netCharge = (truth: Truth, trxids: Set<string>): number =>
  -truth.entries.filter((e) => e.trxid !== null && trxids.has(e.trxid)).reduce((s, e) => s + e.amountUsd, 0);

describe('the daemon against real-world answers', () => {
  it('a mixed batch of every order shape ends with every row final, no double charge, exact ids, codes, and the ledger\'s spend', async () => {
    const home = tempHome();
    const sb = await inProcessSandbox({
      answers: 'real-world',
      fulfilment: { processingShare: 0.5, processingMs: [300, 1500], failShare: 0, seed: 7 },
      // More proxy pages than the default 2.5 % so a 41-row batch surely meets some, before and after a charge.
      realWorld: { htmlShare: 0.06, lateCodesMs: [500, 2500], seed: 7 },
    });
    home.drop('mixed.csv', csv([HEADER, ...ROWS.map(([, r]) => r)]));
    const r = await runCli(['daemon', '--once'], cliEnv(home, sb), { timeoutMs: 120_000 });
    expect(r.code, `${r.stdout.slice(-3000)}\n${r.stderr.slice(-3000)}`).toBe(0);

    const ledger = sb.admin.ledger();
    const truth: Truth = { orders: ledger.orders as never, entries: ledger.entries, balance: Object.values(ledger.balances)[0]! };
    const rows = readResult(home, 'mixed');
    judgeBatch(rows, ROWS.map(([s]) => s), truth);

    // The sandbox really did answer like a real deployment while the batch ran.
    const calls = sb.admin.calls();
    expect(calls.filter((c) => c.status === 502).length, 'HTML 502 pages met').toBeGreaterThan(0);
    const api = truth.orders.filter((o) => o.source === 'api');
    expect(api.some((o) => o.publicId.length === 19), 'some 19-digit ids').toBe(true);
    const failing = api.filter((o) => o.status === 'cancelled');
    const refunds = new Set(truth.entries.filter((e) => e.kind === 'refund').map((e) => e.orderId));
    expect(failing.some((o) => !refunds.has(o.orderId)), 'some cancels kept the money').toBe(true);
    expect(failing.some((o) => refunds.has(o.orderId)), 'some cancels were refunded').toBe(true);
    expect(truth.orders.filter((o) => o.source === 'manual'), 'the manual order is in the history').toHaveLength(1);

    // No order the batch did not ask for, and the summary's spend is the ledger's net charge.
    const trxids = new Set(rows.map((x) => x.trxid!));
    expect(api.filter((o) => !trxids.has(o.trxid!))).toEqual([]);
    const s = readSummary(home, 'mixed');
    expect(s.counts).toMatchObject({ completed: 31, cancelled: 10, rejected: 0, invalid: 0, review: 0 });
    expect(s.spentUsd).toBeCloseTo(netCharge(truth, trxids), 6);
    expect(s.balanceAfterUsd).toBeCloseTo(truth.balance, 6);
  }, 150_000);

  it('TOPUP_SANDBOX_ANSWERS=real-world: the daemon\'s own sandbox answers like a real deployment, and a batch still ends true to its ledger', async () => {
    const home = tempHome();
    const rows = [ROWS[0]!, ROWS[7]!, ROWS[9]!, ROWS[13]!, ROWS[15]!, ROWS[17]!, ROWS[21]!, ROWS[22]!];
    home.drop('small.csv', csv([HEADER, ...rows.map(([, r]) => r)]));
    const r = await runCli(['daemon', '--once'], cliEnv(home, null, { TOPUP_SANDBOX_ANSWERS: 'real-world' }), { timeoutMs: 90_000 });
    expect(r.code, `${r.stdout.slice(-3000)}\n${r.stderr.slice(-3000)}`).toBe(0);
    // The in-process sandbox kept its state in jobs/sandbox.db: read its ledger there.
    const db = new Database(join(home.jobs, 'sandbox.db'), { readonly: true });
    try {
      const orders = (db.prepare('SELECT order_id, trxid, status, amount_micros, codes, source FROM orders ORDER BY seq').all() as any[]);
      const truth: Truth = {
        orders: orders.map((o) => ({
          orderId: o.order_id, publicId: publicIdOf(o.order_id), trxid: o.trxid, status: o.status, amountUsd: o.amount_micros / 1e6,
          codes: o.codes ? JSON.parse(o.codes) : undefined, source: o.source,
        })),
        entries: (db.prepare('SELECT kind, order_id AS orderId, trxid, amount_micros FROM ledger ORDER BY seq').all() as any[])
          .map((e) => ({ kind: e.kind, orderId: e.orderId, trxid: e.trxid, amountUsd: e.amount_micros / 1e6 })),
        balance: NaN,
      };
      expect(truth.orders.filter((o) => o.source === 'manual')).toHaveLength(1); // real-world mode was on
      const result = readResult(home, 'small');
      judgeBatch(result, rows.map(([s]) => s), truth);
      expect(readSummary(home, 'small').spentUsd).toBeCloseTo(netCharge(truth, new Set(result.map((x) => x.trxid!))), 6);
    } finally {
      db.close();
    }
  }, 120_000);
});
