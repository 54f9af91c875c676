/**
 * Judges a daemon's results against the sandbox's own record (its ledger), Jepsen-style:
 * every result row is checked against the order the service holds for its trxid.
 */
import type { AdminLedger } from '../../src/sandbox/index.js';
import type { ResultRow } from './harness.js';

export interface Verdict {
  /** trxids charged more than once (two charges not both refunded). */
  doubleCharges: string[];
  /** Result rows that are not final. */
  unfinished: number;
  /** Orders in the ledger whose trxid has no result row. */
  chargesWithoutResult: string[];
  /** Result rows whose orderId/status/amount disagree with the ledger. */
  mismatches: { trxid: string; why: string }[];
  /** Rows reported as not charged (rejected/invalid/skipped) that the ledger shows charged. */
  wronglyNotCharged: string[];
  rows: number;
}

const FINAL = new Set(['completed', 'cancelled', 'rejected', 'invalid', 'skipped', 'review']);

export function judge(ledger: AdminLedger, results: ResultRow[]): Verdict {
  const charges = new Map<string, number>();
  const refunds = new Map<string, number>();
  for (const e of ledger.entries) {
    if (!e.trxid) continue;
    if (e.kind === 'charge') charges.set(e.trxid, (charges.get(e.trxid) ?? 0) + 1);
    if (e.kind === 'refund') refunds.set(e.trxid, (refunds.get(e.trxid) ?? 0) + 1);
  }
  const orders = new Map<string, Record<string, unknown>>();
  for (const o of ledger.orders) orders.set(String(o.trxid ?? o.idemKey), o);
  const v: Verdict = { doubleCharges: [], unfinished: 0, chargesWithoutResult: [], mismatches: [], wronglyNotCharged: [], rows: results.length };
  for (const [trxid, n] of charges) if (n - (refunds.get(trxid) ?? 0) > 1 || n > 1) v.doubleCharges.push(trxid);
  const seen = new Set<string>();
  for (const r of results) {
    if (!FINAL.has(r.status ?? '')) v.unfinished++;
    const trxid = r.trxid ?? '';
    if (trxid) seen.add(trxid);
    const o = trxid ? orders.get(trxid) : undefined;
    if (r.status === 'completed' || r.status === 'cancelled') {
      if (!o) {
        v.mismatches.push({ trxid, why: `result says ${r.status} but the service has no order` });
        continue;
      }
      if (String(o.orderId) !== r.orderId) v.mismatches.push({ trxid, why: `orderId ${r.orderId} vs ledger ${String(o.orderId)}` });
      if (o.status !== r.status) v.mismatches.push({ trxid, why: `status ${r.status} vs ledger ${String(o.status)}` });
      if (Math.abs(Number(o.amountUsd) - Number(r.amountUsd)) > 0.005) v.mismatches.push({ trxid, why: `amount ${r.amountUsd} vs ledger ${String(o.amountUsd)}` });
    } else if (o && (r.status === 'rejected' || r.status === 'invalid' || r.status === 'skipped')) {
      v.wronglyNotCharged.push(trxid);
    }
  }
  for (const trxid of orders.keys()) if (!seen.has(trxid)) v.chargesWithoutResult.push(trxid);
  return v;
}
