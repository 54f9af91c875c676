/**
 * `topup review`: the rows whose outcome the program would not guess (see docs/real-suppliers.md),
 * with the last answer the API gave about each; `topup review resolve` records an operator's
 * decision on one (ops/review.ts).
 */
import { userInfo } from 'node:os';
import type { Command } from 'commander';
import { describeAudit } from '../api/audit.js';
import { orderIdIn } from '../api/order-id.js';
import { UsageError } from '../kernel/errors.js';
import { resolveReview } from '../ops/review.js';
import type { Row } from '../store/rows.js';
import { ownTrxid } from '../store/row-record.js';
import { openCommandContext } from './context.js';
import { addFormatOptions, formatOf, printList, when } from './output.js';

function operator(): string {
  try {
    return userInfo().username;
  } catch {
    return 'operator';
  }
}

/** The table's `why`: one line of at most WHY_MAX characters (the full text is in --json and --csv). */
const WHY_MAX = 120;
export function tableWhy(text: string | null): string {
  if (!text) return '';
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > WHY_MAX ? `${line.slice(0, WHY_MAX - 1)}… (whole: --json)` : line;
}

/**
 * The order id a review row holds: its own, or else the one its last stored answer names, marked
 * as such; never one read from the `why` text or guessed. Read as every answer is read for an
 * order (api/order-id.ts orderIdIn: each key of ORDER_ID_KEYS, at the top, in an envelope, or in a
 * nested `order`; never a bare `id`, a gateway's request id). Empty when the row holds none.
 */
export function heldOrderId(r: Pick<Row, 'orderId' | 'lastAnswer'>): string {
  if (r.orderId) return r.orderId;
  if (!r.lastAnswer) return '';
  try {
    const id = orderIdIn((JSON.parse(r.lastAnswer) as { body?: unknown } | null)?.body);
    return id === undefined ? '' : `${id} (in the last answer)`;
  } catch {
    return '';
  }
}

/** `b261121-1e4309:17` → batch and input line. */
function target(text: string): { batchId: string; line: number } {
  const m = /^(.+):(\d+)$/.exec(text.trim());
  if (!m) throw new UsageError(`"${text}" is not BATCH:LINE (example: b261121-1e4309:17; topup review lists them)`);
  return { batchId: m[1]!, line: Number(m[2]) };
}

export function registerReview(program: Command): void {
  const review = addFormatOptions(
    program
      .command('review')
      .description('List the rows in review (outcome unknown: check before ordering again), with the last answer seen')
      .option('--all', 'also list rows already resolved (by an operator or found by the recheck)'),
  ).action(async (opts: { json?: boolean; csv?: boolean; all?: boolean }, cmd: Command) => {
    const format = formatOf(opts);
    const ctx = await openCommandContext(cmd);
    try {
      const rows = ctx.rt.rows.reviewRows({ resolved: opts.all === true });
      // `trxid` is the row's own (the reseller's key to their records); a row moved to another
      // account was sent there under another, shown beside it: the one the supplier's portal lists.
      const moved = rows.some((r) => r.trxid !== ownTrxid(r));
      printList<Row>(format, rows, [
        { title: 'row', get: (r) => `${r.batchId}:${r.line}` },
        { title: 'trxid', get: (r) => ownTrxid(r) },
        ...(moved || format === 'csv' ? [{ title: 'sent as', get: (r: Row) => r.trxid }] : []),
        ...(rows.some((r) => r.account !== 'default') ? [{ title: 'account', get: (r: Row) => r.account }] : []),
        { title: 'orderId', get: (r) => (format === 'table' ? heldOrderId(r) : r.orderId) },
        { title: 'since UTC', get: (r) => when(r.reviewSince ?? r.updatedAt) },
        { title: 'state', get: (r) => (r.resolution ? `${r.state} (${r.resolution} by ${r.resolvedBy ?? '?'})` : r.state) },
        { title: 'why', get: (r) => (format === 'table' ? tableWhy(r.error) : r.error) },
        { title: 'last answer', get: (r) => describeAudit(r.lastAnswer, format === 'table' ? 160 : 4_000) },
      ], rows.map((r) => ({
        batchId: r.batchId, line: r.line, trxid: ownTrxid(r), sentTrxid: r.trxid, account: r.account, orderId: r.orderId, state: r.state, since: r.reviewSince, why: r.error,
        resolution: r.resolution, resolvedBy: r.resolvedBy, resolvedAt: r.resolvedAt, lastAnswer: r.lastAnswer ? JSON.parse(r.lastAnswer) as unknown : null,
      })));
      if (format === 'table' && rows.length > 0 && !opts.all) {
        process.stderr.write('\nDecide one: topup review resolve BATCH:LINE --charged ORDER_ID   or   --not-charged\n');
      }
    } finally {
      await ctx.close();
    }
  });

  review
    .command('resolve')
    .description('Record what happened to a review row: charged (with its order id) or not charged')
    .argument('<row>', 'BATCH:LINE, as topup review lists it')
    .option('--charged <orderId>', 'the row was bought: this is its order (checked against the API)')
    .option('--not-charged', 'nothing was bought for this row (topup retry may then buy it again)')
    .option('--by <name>', 'who decides (default: your user name)')
    .option('--force', 'record --charged even when the API cannot confirm the order')
    .addHelpText('after', '\nThe results are written again to <name>.reviewed.result.csv, rewritten at each later decision; <name>.result.csv stays as it was.')
    .action(async (rowText: string, opts: { charged?: string; notCharged?: boolean; by?: string; force?: boolean }, cmd: Command) => {
      const { batchId, line } = target(rowText);
      const ctx = await openCommandContext(cmd);
      try {
        const r = await resolveReview(ctx.rt, {
          batchId,
          line,
          ...(opts.charged !== undefined ? { chargedOrderId: opts.charged } : {}),
          notCharged: opts.notCharged === true,
          by: opts.by ?? operator(),
          force: opts.force === true,
        });
        process.stdout.write(`line ${line} of batch ${batchId}: now ${r.row.state}${r.row.orderId ? ` (order ${r.row.orderId})` : ''}\n`);
        process.stdout.write(
          r.summary
            ? `results written again (version ${r.summary.version}): ${r.summary.resultFile}\n`
            : `the daemon follows order ${r.row.orderId} to its end and then writes the results again (<name>.reviewed.result.csv)\n`,
        );
      } finally {
        await ctx.close();
      }
    });
}
