/**
 * What a row cost: two rules, because two questions are asked, each written once here, as a
 * function of a row and as the same expression in SQL, built from the state lists of row-states.ts.
 *
 *  - SPENT, what a row cost in the end: its order completed, or was cancelled without a refund
 *    the supplier reported ("refunded" missing is read as charged); its price as charged (the
 *    answer's amount, else our own price check's). Nothing else: a row never placed cost nothing,
 *    a `review` row's charge is unknown (the summary lists it), and an order still processing may
 *    yet be cancelled and refunded. Results (amountUsd, netUsd), the summary's spentUsd, a batch's
 *    progress (status, the console, the progress log, cancel's report) and the spend counters
 *    (/metrics, the console's pace) use it: they report what was spent.
 *
 *  - CHARGED, what has left the balance as far as this home knows: SPENT, plus the price of every
 *    placed order not ended yet (processing, unseen). The supplier takes the price when it accepts
 *    an order and gives it back if the order fails (spec: "a failed order after placement is
 *    usually refunded"), so those orders have already moved the balance. Reconciliation's balance
 *    check (does the balance movement match the ledger) uses it: it compares with the balance
 *    itself. (The runway is a week's average pace, reports/runway.ts, from the roll-up of SPENT.)
 */
import { roundCents } from '../kernel/money.js';
import type { Row } from './row-record.js';
import { PLACED_STATES, type RowState } from './row-states.js';

const SPENT_END: RowState = 'completed';
/** Placed, then failed: spent unless the supplier reported a refund. */
const REFUNDABLE_END: RowState = 'cancelled';

/** A row's money in cents: the price of its order (ended orders only), what it cost in the end, what came back. */
export function rowMoney(row: Pick<Row, 'state' | 'amountUsd' | 'expectedUsd' | 'refunded'>): { amountCents: number | null; netCents: number | null; refundedCents: number } {
  if (row.state !== SPENT_END && row.state !== REFUNDABLE_END) return { amountCents: null, netCents: null, refundedCents: 0 };
  const amountCents = priceCents(row);
  const refunded = row.state === REFUNDABLE_END && row.refunded === true;
  return { amountCents, netCents: refunded ? 0 : (amountCents ?? 0), refundedCents: refunded ? (amountCents ?? 0) : 0 };
}

/** SPENT, in USD. */
export function spentUsd(row: Pick<Row, 'state' | 'amountUsd' | 'expectedUsd' | 'refunded'>): number {
  return (rowMoney(row).netCents ?? 0) / 100;
}

/** CHARGED, in USD: spent, or the price of an order placed and not ended. */
export function chargedUsd(row: Pick<Row, 'state' | 'amountUsd' | 'expectedUsd' | 'refunded'>): number {
  if (PLACED_STATES.includes(row.state)) return (priceCents(row) ?? 0) / 100;
  return spentUsd(row);
}

function priceCents(row: Pick<Row, 'amountUsd' | 'expectedUsd'>): number | null {
  const price = row.amountUsd ?? row.expectedUsd;
  return price === null ? null : Math.round(roundCents(price) * 100);
}

const q = (s: string): string => `'${s}'`;
/** The price as charged, in SQL (columns of `rows`). */
const PRICE_SQL = 'coalesce(amount_usd, expected_usd, 0)';
const SPENT_WHEN = `state = ${q(SPENT_END)} OR (state = ${q(REFUNDABLE_END)} AND coalesce(refunded, 0) = 0)`;

/** SPENT of one row of `rows`, in SQL: sum() it for a batch. */
export const SPENT_USD_SQL = `CASE WHEN ${SPENT_WHEN} THEN ${PRICE_SQL} ELSE 0 END`;
