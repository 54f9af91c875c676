/**
 * What must hold after every simulated run, judged against the model API's ledger (the truth of
 * what was charged), the store and the result files. Each is one of the invariants of
 * src/store/invariants.ts, seen from outside:
 *
 *  1. no purchase bought twice: the orders charged (and not refunded) for one purchase of the
 *     files are never more than the times it was ordered on purpose (a drop, plus `submit --again`
 *     and `retry --repeats`);
 *  2. every charge belongs to exactly one row: an order the model made for a trxid this home sent is
 *     held by that trxid's row, or that row is in review (a person decides); never a row that says
 *     refused, pending, skipped or invalid;
 *  3. no row holds an order its sends did not make unless it says so: a row holding a foreign order
 *     (the panel's, another shop's) is flagged (its note names the replay), and never a key/card row;
 *  4. codes never on two rows, and every code on a row is its order's;
 *  5. result files = store = ledger: one result row per input line; status, order id and codes as
 *     stored; a placed row's end (completed, cancelled, refunded) as the model's;
 *  6. summary spend = ledger: the batch summary's spentUsd is what the model charged its rows;
 *  7. every row final (the run ended with no batch unfinished: a stall otherwise), and no process
 *     died of an error;
 *  8. one order, one row: no order held by two rows, whatever the letter case of its id (the
 *     unique index sees only one spelling; an operator's typed id is another);
 *  9. a batch is retried once: no two live retry batches of one batch.
 */
import { existsSync, readFileSync } from 'node:fs';
import { parse } from 'csv-parse/sync';
import type { Config } from '../src/config/config.js';
import type { Runtime } from '../src/runtime.js';
import type { Row } from '../src/store/rows.js';
import { outboxPaths } from '../src/outbox/paths.js';
import type { ModelApi, ModelOrder } from './model.js';
import type { SimRow } from './schedule.js';

/** A file as it was dropped or submitted: its rows (line n is rows[n - 2]). */
export interface Drop {
  name: string;
  file: number;
  rows: SimRow[];
  /** The purchase each row is (line n is keys[n - 2]): the same in an edited copy of the file. */
  keys: string[];
  /** Ordered again on purpose (`submit --again`). */
  again: boolean;
}

export interface Judgement {
  ok: boolean;
  violations: string[];
  figures: {
    batches: number;
    rows: number;
    placed: number;
    review: number;
    modelOrders: number;
    engineOrders: number;
    invariantsChecked: number;
    /** Rows by final state. */
    states: Record<string, number>;
  };
}

interface Ctx {
  home: string;
  config: Config;
  observer: Runtime;
  api: ModelApi;
  drops: Drop[];
  failures: string[];
  stall: string | null;
}

const usd = (micros: number): number => Math.round(micros / 10_000) / 100;
/** What an order cost in the end: its price, unless refunded. */
const netMicros = (o: ModelOrder): number => (o.status === 'cancelled' && o.refunded ? 0 : o.amountMicros);

export function judge(c: Ctx): Judgement {
  const v: string[] = [...c.failures];
  let checked = 0;
  const check = (ok: boolean, message: () => string): void => {
    checked++;
    if (!ok) v.push(message());
  };
  if (c.stall) v.push(`STALL: ${c.stall}`);
  const rt = c.observer;
  const batches = rt.batches.list();
  const rows: Row[] = batches.flatMap((b) => [...rt.rows.iterate(b.id)]);
  const byTrxid = new Map(rows.filter((r) => r.trxid !== null).map((r) => [r.trxid!.toLowerCase(), r]));
  const where = (r: Row): string => `row ${r.line} of batch ${r.batchId} (${batches.find((b) => b.id === r.batchId)?.sourceName}, trxid ${r.trxid}, ${r.state})`;

  // 2. every charge made for a trxid of ours is held by its row, or its row is in review.
  for (const o of c.api.orders.filter((x) => x.origin === 'engine')) {
    const r = o.trxid === null ? undefined : byTrxid.get(o.trxid.toLowerCase());
    check(r !== undefined, () => `order ${o.orderId} was made for trxid ${o.trxid}, which no row holds`);
    if (!r) continue;
    const held = r.orderId === o.orderId && ['processing', 'unseen', 'completed', 'cancelled'].includes(r.state);
    const inReview = r.state === 'review' && r.resolution === null;
    check(held || inReview || (r.state === 'review' && r.orderId === o.orderId) || (r.resolution === 'charged' && r.orderId === o.orderId), () =>
      `order ${o.orderId} (${o.status}, ${usd(o.amountMicros)} USD${o.refunded ? ', refunded' : ''}) was made for ${where(r)}, which ${r.orderId ? `holds ${r.orderId}` : 'holds no order'}: a charge read as ${r.state}`);
  }

  // 3, 4, 5 (store against ledger): what each row holds is its order's truth.
  const codeOwner = new Map<string, string>();
  for (const r of rows) {
    if (r.orderId === null) continue;
    const o = c.api.byId(r.orderId);
    check(o !== undefined, () => `${where(r)} holds order ${r.orderId}, which the API never made`);
    if (!o) continue;
    if (o.origin === 'foreign') {
      check(r.note !== null && r.request?.quantity === undefined, () =>
        `${where(r)} holds order ${o.orderId}, made before the run (${o.trxid === null ? 'no trxid' : `trxid ${o.trxid}`}) and not by its sends, ${r.request?.quantity !== undefined ? 'on a key/card row' : 'without saying so'}`);
    } else {
      check(o.trxid !== null && r.trxid !== null && o.trxid.toLowerCase() === r.trxid.toLowerCase(), () => `${where(r)} holds order ${o.orderId}, which was made for trxid ${o.trxid}`);
    }
    if (r.state === 'completed' || r.state === 'cancelled') {
      check(o.status === r.state, () => `${where(r)} says ${r.state}; the API's order ${o.orderId} is ${o.status}`);
      if (r.state === 'cancelled') check((r.refunded === true) === o.refunded, () => `${where(r)}: refunded ${r.refunded}, the API's order ${o.refunded}`);
    }
    for (const code of r.codes) {
      check(o.codes.includes(code), () => `${where(r)} shows code ${code}, which is not its order ${o.orderId}'s`);
      const prev = codeOwner.get(code);
      check(prev === undefined, () => `code ${code} is on two rows: ${prev} and ${where(r)}`);
      codeOwner.set(code, where(r));
    }
    if (r.state === 'completed' && o.pack.card && r.codes.length === 0) {
      check(r.note?.startsWith('CODES MISSING') === true || (r.note ?? '').includes('CODES MISSING'), () => `${where(r)} completed a key/card order without codes and without saying so`);
    }
  }

  // 8. one order, one row, in any letter case.
  const orderHolder = new Map<string, string>();
  for (const r of rows) {
    if (r.orderId === null) continue;
    const k = r.orderId.trim().toLowerCase();
    const prev = orderHolder.get(k);
    check(prev === undefined, () => `order ${r.orderId} is held by two rows: ${prev} and ${where(r)}`);
    orderHolder.set(k, where(r));
  }
  // 9. a batch is retried once.
  const retries = new Map<string, string[]>();
  for (const b of batches) if (b.retryOf !== null && b.state !== 'failed') retries.set(b.retryOf, [...(retries.get(b.retryOf) ?? []), b.id]);
  for (const [of, ids] of retries) check(ids.length === 1, () => `batch ${of} was retried ${ids.length} times: ${ids.join(', ')}`);

  // 1. no purchase bought twice.
  const purchaseOf = (r: Row, depth = 0): { key: string; onPurpose: boolean } | undefined => {
    const b = batches.find((x) => x.id === r.batchId);
    if (!b || depth > 5) return undefined;
    const retry = /\.retry-(b\d{6}-[0-9a-f]{6})\.csv$/.exec(b.sourceName);
    if (retry) {
      const col = (b.header ?? []).findIndex((h) => h === 'retryOfLine');
      const line = Number(r.cells[col]);
      const old = rt.rows.byLine(retry[1]!, line);
      const p = old ? purchaseOf(old, depth + 1) : undefined;
      // A retry of the repeats buys on purpose; an ordinary retry tries the same purchase again.
      return p && { key: p.key, onPurpose: b.retryOf === null };
    }
    const d = c.drops.find((x) => x.name === b.sourceName);
    const key = d?.keys[r.line - 2];
    if (!d || key === undefined) return undefined;
    return { key, onPurpose: d.again || b.contentHash.includes(':again:') };
  };
  // Ordered once per row a file has for it (equal rows share a key), plus once per row ordered again on purpose.
  const written = new Map<string, number>();
  for (const d of c.drops) {
    const n = new Map<string, number>();
    for (const k of d.keys) n.set(k, (n.get(k) ?? 0) + 1);
    for (const [k, m] of n) written.set(k, Math.max(written.get(k) ?? 0, m));
  }
  const intended = new Map<string, number>();
  const charged = new Map<string, ModelOrder[]>();
  const seenPurchase = new Set<string>();
  for (const r of rows) {
    const p = purchaseOf(r);
    if (!p) continue;
    if (!seenPurchase.has(p.key)) {
      seenPurchase.add(p.key);
      intended.set(p.key, written.get(p.key) ?? 1);
    }
    if (p.onPurpose && r.request !== null) intended.set(p.key, (intended.get(p.key) ?? 1) + 1);
  }
  for (const o of c.api.orders.filter((x) => x.origin === 'engine' && netMicros(x) > 0)) {
    const r = o.trxid === null ? undefined : byTrxid.get(o.trxid.toLowerCase());
    const p = r ? purchaseOf(r) : undefined;
    if (!p) continue;
    charged.set(p.key, [...(charged.get(p.key) ?? []), o]);
  }
  for (const [key, orders] of charged) {
    const want = intended.get(key) ?? 1;
    check(orders.length <= want, () => `purchase ${key} was bought ${orders.length} times (${orders.map((o) => `${o.orderId} for ${o.trxid}`).join(', ')}), ordered ${want} time(s) on purpose`);
  }

  // 5, 6: result files and summaries of every finished batch.
  for (const b of batches) {
    if (b.state !== 'done' && b.state !== 'duplicate') continue;
    const paths = outboxPaths(rt, b);
    const brows = rows.filter((r) => r.batchId === b.id);
    check(existsSync(paths.resultFile), () => `batch ${b.id} (${b.sourceName}) finished without ${paths.resultFile}`);
    if (existsSync(paths.resultFile)) {
      const text = readFileSync(paths.resultFile, 'utf8').replace(/^\ufeff/, '');
      const delimiter = b.dialect.delimiter;
      const table = parse(text, { delimiter, relax_column_count: true, skip_empty_lines: true }) as string[][];
      const header = table[0] ?? [];
      const col = (name: string): number => {
        const i = header.lastIndexOf(name);
        return i >= 0 ? i : header.lastIndexOf(`result_${name}`);
      };
      const data = table.slice(1);
      check(data.length === brows.length, () => `batch ${b.id} (${b.sourceName}): ${brows.length} rows stored, ${data.length} result rows`);
      const drop = c.drops.find((d) => d.name === b.sourceName);
      if (drop) check(data.length === drop.rows.length, () => `batch ${b.id} (${b.sourceName}): ${drop.rows.length} input lines, ${data.length} result rows`);
      for (const [i, r] of brows.entries()) {
        const cells = data[i];
        if (!cells) continue;
        check(cells[col('status')] === r.state, () => `${where(r)}: the result file says ${cells[col('status')]}`);
        check((cells[col('orderId')] ?? '') === (r.orderId ?? ''), () => `${where(r)}: the result file says order ${cells[col('orderId')]}`);
        const codes = (cells[col('codes')] ?? '').split(' ').filter((x) => x !== '').map((x) => x.replace(/^'/, ''));
        check(JSON.stringify(codes) === JSON.stringify(r.codes), () => `${where(r)}: the result file shows codes ${codes.join(' ')}, the store ${r.codes.join(' ')}`);
      }
    }
    if (existsSync(paths.summaryFile)) {
      const summary = JSON.parse(readFileSync(paths.summaryFile, 'utf8')) as { spentUsd: number };
      let truth = 0;
      for (const r of brows) {
        if (r.orderId === null || (r.state !== 'completed' && r.state !== 'cancelled')) continue;
        const o = c.api.byId(r.orderId);
        if (o) truth += netMicros(o);
      }
      check(Math.abs(summary.spentUsd - usd(truth)) < 0.005, () => `batch ${b.id} (${b.sourceName}): the summary says ${summary.spentUsd} USD spent; the API charged its rows ${usd(truth)} USD`);
    }
  }

  return {
    ok: v.length === 0,
    violations: v,
    figures: {
      batches: batches.length,
      rows: rows.length,
      placed: rows.filter((r) => r.orderId !== null).length,
      review: rows.filter((r) => r.state === 'review').length,
      modelOrders: c.api.orders.length,
      engineOrders: c.api.orders.filter((o) => o.origin === 'engine').length,
      invariantsChecked: checked,
      states: rows.reduce<Record<string, number>>((m, r) => ((m[r.state] = (m[r.state] ?? 0) + 1), m), {}),
    },
  };
}
