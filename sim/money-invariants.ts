/**
 * Invariant 25 (issue 29 §3 "every row's money, every summary, report and metric equals the
 * model's ledger to the cent", found missing by `npm run mutate:sim`): every money cell the engine
 * shows, not only netUsd and spentUsd (invariants 5, 6, 22).
 *
 *  a. the result file's `amountUsd` of an ended row holding an order is the price the supplier
 *     charged for that order (the ledger's amount), and empty for a row not ended; its `refunded`
 *     is `true`/`false` as the store holds it for a cancelled row and empty otherwise; `netUsd` is
 *     empty for a row not ended;
 *  b. the summary's `refundedUsd` adds up the refunds of its rows (a cancelled row the store holds
 *     refunded gives back its price) and, when every refund was reported, equals the ledger's; its
 *     counts are the rows' states; its `codesMissing` and `review` lists name exactly the rows so;
 *  c. a batch's progress (`topup status`, the console, `topup cancel`'s report: SQL SPENT) spends
 *     what its summary says, to the cent;
 *  d. what each placed row has taken from the balance as far as the home knows (store/cost.ts
 *     CHARGED: the low-balance runway and the reconcile's balance check add it up) is, for an
 *     order whose refund was reported (or which was never refunded), the ledger's: its price while
 *     it runs or completed, the price less the refund once cancelled;
 *  e. the summary's counts add up to its rows, and its rows are the result file's;
 *  f. `topup retry --repeats` buys again only rows the batch skipped as repeats of earlier
 *     purchases (TOPUP_REPEATED_ROW): never a row a cancel kept from being sent, a duplicate
 *     file's row, or one skipped for any other reason (invariant 1 counts a repeats retry's rows
 *     as bought on purpose, so it cannot see one that was not a repeat).
 *
 * Kept apart from sim/invariants.ts (called from judge()) so that both can change on their own.
 */
import { existsSync, readFileSync } from 'node:fs';
import { parse } from 'csv-parse/sync';
import type { Runtime } from '../src/runtime.js';
import type { Row } from '../src/store/rows.js';
import type { Batch } from '../src/store/batches.js';
import { outboxPaths } from '../src/outbox/paths.js';
import { chargedUsd } from '../src/store/cost.js';
import { REPEAT_CODE } from '../src/store/row-reads.js';
import type { ModelApi, ModelOrder } from './model.js';
import { trxidKey } from '../src/kernel/identity.js';

export interface MoneyCtx {
  rt: Runtime;
  rows: Row[];
  batches: Batch[];
  apiOf: (account: string, trxid?: string | null) => ModelApi;
  check: (ok: boolean, message: () => string) => void;
  where: (r: Row) => string;
  /** `late-lines`: how many lines the run wrote into each batch's claimed file after the claim (invariant 35). */
  lateWritten?: ReadonlyMap<string, number>;
  /** Every supplier host of the schedule: a trxid's last answer is the last host's it was sent to. */
  apis?: readonly ModelApi[];
}

const cents = (micros: number): number => Math.round(micros / 10_000);
/** A money cell as written (a file written with ';' has decimal commas), in cents; NaN if not a number. */
const cellCents = (cell: string | undefined): number => (cell === undefined || cell.trim() === '' ? Number.NaN : Math.round(Number(cell.replace(',', '.')) * 100));
const ENDED = ['completed', 'cancelled'];
const PLACED_LIVE = ['processing', 'unseen'];

/** The supplier said what came back (or nothing did): the engine can know the order's money exactly. */
const knowable = (o: ModelOrder): boolean => !o.refunded || (o.refundForm ?? 'reported') === 'reported';

/**
 * 28. A row refused for want of balance is held, never ended refused (docs/how-it-works.md: "A row
 * refused with INSUFFICIENT BALANCE is held the same way" as a batch the balance cannot cover): its
 * batch waits for a top-up, and the operator tops up and it is bought. Suppliers say it in every
 * shape (test/fixtures/answers/submit.json's balance variants: codes, sentences, other languages,
 * HTTP 200 with `success: false`); a row whose last send the supplier refused for balance, with
 * nothing made under its trxid, that ends `rejected` was read as a refusal of the purchase itself:
 * the operator is told to fix a row that needed only money (and a `topup retry` buys it under a
 * new trxid).
 */
export function checkBalanceRefusals(c: MoneyCtx): void {
  for (const r of c.rows) {
    if (r.state !== 'rejected' || r.trxid === null) continue;
    const m = c.apiOf(r.account, r.trxid);
    if (!m.lastRefusedForBalance(r.trxid) || m.byTrxid(r.trxid)?.origin === 'engine') continue;
    // An account re-pointed in accounts.toml (config-repoint) sends its rows to another host: the
    // supplier's last answer is the one of the host the trxid was last sent to, not the account's first.
    const key = trxidKey(r.trxid);
    const last = (c.apis ?? []).map((a) => ({ a, at: Math.max(-1, ...a.posts.filter((p) => trxidKey(p.trxid) === key).map((p) => p.at)) })).sort((x, y) => y.at - x.at)[0];
    if (last && last.at >= 0 && last.a !== m) continue;
    c.check(false, () => `${c.where(r)}: ended rejected (${r.error ?? 'no reason'}) while the supplier's last answer to it was a refusal for want of balance, nothing made: the row should wait for a top-up (28)`);
  }
}

export function checkMoneyCells(c: MoneyCtx): void {
  const { rt, rows, batches, check, where } = c;
  const orderOf = (r: Row): ModelOrder | undefined => (r.orderId === null ? undefined : c.apiOf(r.account, r.trxid).byId(r.orderId));

  // d. CHARGED per placed row.
  for (const r of rows) {
    if (r.orderId === null || (!ENDED.includes(r.state) && !PLACED_LIVE.includes(r.state))) continue;
    const o = orderOf(r);
    if (!o || !knowable(o)) continue;
    // A row ended before a late refund (after `completed`) is still charged as far as the home knows.
    if (r.state !== 'cancelled' && o.status === 'cancelled') continue;
    const expected = r.state === 'cancelled' ? cents(o.amountMicros - (o.refunded ? (o.refundMicros ?? o.amountMicros) : 0)) : cents(o.amountMicros);
    const got = Math.round(chargedUsd(r) * 100);
    check(got === expected, () => `${where(r)}: charged ${got / 100} USD as far as the home knows (low-balance runway, reconcile); the API's order ${o.orderId} (${o.status}${o.refunded ? ', refunded' : ''}) took ${expected / 100} USD`);
  }

  // f. a repeats retry (a retry batch that records no retryOf) holds only rows skipped as repeats.
  for (const b of batches) {
    const retry = /\.retry-(b\d{6}-[0-9a-f]{6})\.csv$/.exec(b.sourceName);
    if (!retry || b.retryOf !== null) continue;
    const col = (b.header ?? []).findIndex((h) => h === 'retryOfLine');
    for (const r of rows.filter((x) => x.batchId === b.id)) {
      const old = col >= 0 ? rt.rows.byLine(retry[1]!, Number(r.cells[col])) : undefined;
      check(old !== undefined && old.state === 'skipped' && old.rejectCode === REPEAT_CODE, () =>
        `${where(r)}: \`topup retry --repeats\` of batch ${retry[1]} took line ${r.cells[col]}, which ${old ? `was ${old.state}${old.rejectCode ? ` (${old.rejectCode})` : ''}, not skipped as a repeat` : 'is not in that batch'}`);
    }
  }

  for (const b of batches) {
    if (b.state !== 'done' && b.state !== 'duplicate') continue;
    const paths = outboxPaths(rt, b);
    const brows = rows.filter((r) => r.batchId === b.id);
    let resultRows: number | null = null;
    // a. the money columns of the result file.
    if (existsSync(paths.resultFile)) {
      const text = readFileSync(paths.resultFile, 'utf8').replace(/^\ufeff/, '');
      const table = parse(text, { delimiter: b.dialect.delimiter, relax_column_count: true, skip_empty_lines: true }) as string[][];
      const header = table[0] ?? [];
      const col = (name: string): number => {
        const i = header.lastIndexOf(`result_${name}`);
        return i >= 0 ? i : header.lastIndexOf(name);
      };
      const data = table.slice(1);
      resultRows = data.length;
      // 35. lines written into the claimed file after it was read: each has a result row after the
      // batch's own, `skipped` (never ordered); there are as many as were written, or none when the
      // result was being written meanwhile (outbox/late-lines.ts: lines after the result are not in it).
      const late = data.length - brows.length;
      const written = c.lateWritten?.get(b.id) ?? 0;
      check(late === 0 || late === written, () => `batch ${b.id} (${b.sourceName}): its result has ${data.length} rows for ${brows.length} stored rows; ${written} lines were written into its file after the claim (35)`);
      const statusCol = header.lastIndexOf('result_status') >= 0 ? header.lastIndexOf('result_status') : header.lastIndexOf('status');
      for (const cells of data.slice(brows.length)) check(statusCol >= 0 && cells[statusCol] === 'skipped', () => `batch ${b.id} (${b.sourceName}): a result row for a line written after the claim says ${JSON.stringify(statusCol >= 0 ? cells[statusCol] : '(no status column)')}, not skipped (35)`);
      for (const [i, r] of brows.entries()) {
        const cells = data[i];
        if (!cells) continue;
        const amount = cells[col('amountUsd')];
        const refunded = cells[col('refunded')] ?? '';
        const net = cells[col('netUsd')] ?? '';
        if (!ENDED.includes(r.state)) {
          check((amount ?? '') === '' && net === '', () => `${where(r)}: the result shows amountUsd ${JSON.stringify(amount)} and netUsd ${JSON.stringify(net)} for a row whose order did not end`);
        } else {
          const o = orderOf(r);
          if (o) check(cellCents(amount) === cents(o.amountMicros), () => `${where(r)}: the result says its order cost ${JSON.stringify(amount)} USD; the API charged ${cents(o.amountMicros) / 100} USD for ${o.orderId}`);
        }
        const want = r.state === 'cancelled' ? String(r.refunded === true) : '';
        check(refunded === want, () => `${where(r)}: the result's refunded is ${JSON.stringify(refunded)}, the store's ${JSON.stringify(want)}`);
      }
    }
    // b, c. the summary.
    if (existsSync(paths.summaryFile)) {
      const s = JSON.parse(readFileSync(paths.summaryFile, 'utf8')) as {
        rows: number;
        spentUsd: number;
        refundedUsd: number;
        counts: Record<string, number>;
        codesMissing: { line: number }[];
        review: { line: number }[];
      };
      let rowsRefunded = 0;
      let ledgerRefunded = 0;
      let allKnown = true;
      for (const r of brows) {
        if (r.state !== 'cancelled' || r.orderId === null) continue;
        const o = orderOf(r);
        if (r.refunded === true) rowsRefunded += o ? cents(o.amountMicros) : 0;
        if (o?.refunded) ledgerRefunded += cents(o.refundMicros ?? o.amountMicros);
        if (o && !knowable(o)) allKnown = false;
      }
      const refundedCents = Math.round(s.refundedUsd * 100);
      check(refundedCents === rowsRefunded, () => `batch ${b.id} (${b.sourceName}): the summary says ${s.refundedUsd} USD refunded; its cancelled rows held refunded add up to ${rowsRefunded / 100} USD`);
      if (allKnown) check(refundedCents === ledgerRefunded, () => `batch ${b.id} (${b.sourceName}): the summary says ${s.refundedUsd} USD refunded; the API refunded its rows ${ledgerRefunded / 100} USD`);
      for (const state of ['completed', 'cancelled', 'rejected', 'review'] as const) {
        const n = brows.filter((r) => r.state === state).length;
        check(s.counts[state] === n, () => `batch ${b.id} (${b.sourceName}): the summary counts ${s.counts[state]} ${state}, the store holds ${n}`);
      }
      // e. (35) lines written into the file after the claim are counted skipped, beside the store's skipped rows.
      if (resultRows !== null) {
        const storeSkipped = brows.filter((r) => r.state === 'skipped').length;
        const late = Math.max(0, resultRows - brows.length);
        check((s.counts.skipped ?? 0) === storeSkipped + late, () => `batch ${b.id} (${b.sourceName}): the summary counts ${s.counts.skipped ?? 0} skipped; the store holds ${storeSkipped} and the result ${late} lines written after the claim (35)`);
      }
      // e. the counts add up to the rows, which are the result file's.
      const counted = Object.values(s.counts).reduce((n, x) => n + x, 0);
      check(counted === s.rows, () => `batch ${b.id} (${b.sourceName}): the summary's counts ${JSON.stringify(s.counts)} add up to ${counted}, its rows are ${s.rows}`);
      if (resultRows !== null) check(s.rows === resultRows, () => `batch ${b.id} (${b.sourceName}): the summary says ${s.rows} rows, the result file has ${resultRows}`);
      const lines = (xs: { line: number }[]): string => JSON.stringify(xs.map((x) => x.line).sort((p, q) => p - q));
      const missing = brows.filter((r) => r.state === 'completed' && r.note?.startsWith('CODES MISSING') === true);
      check(lines(s.codesMissing) === lines(missing), () => `batch ${b.id} (${b.sourceName}): the summary lists codes missing on lines ${lines(s.codesMissing)}, the store on ${lines(missing)}`);
      const review = brows.filter((r) => r.state === 'review');
      check(lines(s.review) === lines(review), () => `batch ${b.id} (${b.sourceName}): the summary lists lines ${lines(s.review)} to review, the store ${lines(review)}`);
      const progress = Math.round(rt.rows.progress(b.id).spentUsd * 100);
      check(progress === Math.round(s.spentUsd * 100), () => `batch ${b.id} (${b.sourceName}): its progress (topup status, the console) says ${progress / 100} USD spent, its summary ${s.spentUsd} USD`);
    }
  }
}

/**
 * Invariant 27 (issue 29's third turn, `price-cap`; found missing by `npm run mutate:sim`: a
 * failover that dropped the row's cap survived): no row is bought above its `maxPriceUsd`, on any
 * account. The cap is per unit (routing.ts compares a pack's price with it); what the supplier
 * charged per unit (the ledger of the account the row holds its order on) is at most the cap. A
 * row's cap rides with it when it moves, so a row moved to a dearer account must not be bought there
 * (a), and a row never moves to an account whose catalog sells its pack above its cap (b).
 */
export function checkPriceCaps(c: MoneyCtx): void {
  for (const r of c.rows) {
    if (r.maxPriceUsd === null) continue;
    // b. a row moves only to an account that sells its pack within its cap (routing.ts excludes the
    // others): the sender's own re-check (dispatch/sender.ts) would then end it `invalid` with "the
    // catalog price rose", a false reason, where staying would have told the truth (the model's
    // prices do not change). What `npm run mutate:sim` showed unobserved: a failover without the cap.
    if (r.moves.length > 0 && r.productId !== null) {
      const pack = c.apiOf(r.account, r.trxid).account.packs.find((p) => p.id === r.productId);
      c.check(pack === undefined || pack.price <= r.maxPriceUsd + 1e-9, () =>
        `${c.where(r)}: moved from ${r.moves.map((m) => m.from).join(', ')} to account ${r.account}, which sells ${r.productId} at ${pack!.price} USD, above the row's maxPriceUsd ${r.maxPriceUsd}`);
    }
    if (r.orderId === null) continue;
    const o = c.apiOf(r.account, r.trxid).byId(r.orderId);
    if (!o || o.origin !== 'engine') continue;
    const unitMicros = o.amountMicros / (o.quantity ?? 1);
    c.check(unitMicros <= Math.round(r.maxPriceUsd * 1e6) + 1, () =>
      `${c.where(r)}: bought above its cap: order ${o.orderId} on account ${r.account} cost ${unitMicros / 1e6} USD a unit, the row's maxPriceUsd is ${r.maxPriceUsd}${r.moves.length > 0 ? ` (moved from ${r.moves.map((m) => m.from).join(', ')})` : ''}`);
  }
}
