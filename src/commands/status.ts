/**
 * `topup status [BATCH]`: batches with their progress and why any is waiting; for one batch,
 * its rows. Reads the store only — no API call — so it answers while the API is down.
 */
import { systemClock } from '../kernel/clock.js';
import type { Command } from 'commander';
import { NotFoundError } from '../kernel/errors.js';
import { Pauses } from '../account/pauses.js';
import type { Row } from '../store/rows.js';
import { commandConfig } from './context.js';
import { openStoreOnly } from './store-only.js';
import { durationText, heldByLiveProcess, runState, snapshot, storedEtaMs, waitingWhy } from '../ops/batch-view.js';
import { addFormatOptions, formatOf, printList, usd, when, wholeNumber } from './output.js';

export function registerStatus(program: Command): void {
  addFormatOptions(
    program
      .command('status')
      .description('Show batches, their progress and why any is waiting; with BATCH, that batch and its rows (works while the API is down)')
      .argument('[batch]', 'a batch id (from submit, status, or a result file name)')
      .option('--limit <n>', 'newest N batches (list only)', wholeNumber('--limit', 1, 100_000), 20)
      .option('--active', 'only batches that are not finished'),
  ).action((batchId: string | undefined, opts: { limit: number; active?: boolean; json?: boolean; csv?: boolean }, cmd: Command) => {
    const format = formatOf(opts);
    const store = openStoreOnly(commandConfig(cmd, { requireKey: false }));
    try {
      const pause = Pauses.read(store.meta);
      const now = systemClock.now();
      if (batchId) {
        const b = store.batches.get(batchId);
        if (!b) throw new NotFoundError(`no batch ${batchId} (see topup status for the list)`);
        const s = snapshot(store.rows, b.id);
        const rows = [...store.rows.iterate(b.id)];
        const eta = storedEtaMs(b, s, pause, now);
        const info = {
          id: b.id, file: b.sourceName, origin: b.origin, state: runState(b, pause, now), why: waitingWhy(b, pause, now), etaSec: eta === null ? null : Math.round(eta / 1000),
          retryOf: b.retryOf, duplicateOf: b.duplicateOf, cancelRequested: b.cancelRequested, heldByLiveProcess: heldByLiveProcess(b, now),
          ...s, resultFile: b.finishedAt ? b.resultFile : null, createdAt: when(b.createdAt), finishedAt: when(b.finishedAt),
        };
        if (format === 'json') {
          process.stdout.write(`${JSON.stringify({ batch: info, pause, rows: rows.map(rowJson) }, null, 2)}\n`);
          return;
        }
        if (format === 'table') {
          process.stdout.write(
            `batch ${b.id} (${b.sourceName}, ${b.origin}${b.retryOf ? `, retry of ${b.retryOf}` : ''}): ${info.state}; ${s.done}/${s.rows} done; sent ${s.sent}; ` +
              `${s.counts.completed} completed, ${s.counts.cancelled} cancelled, ${s.counts.rejected} rejected, ${s.counts.invalid} invalid, ${s.counts.skipped} skipped; spent ${usd(s.spentUsd)} USD${eta === null ? '' : `; ETA ${durationText(eta)}`}\n` +
              `${info.why ? `why: ${info.why}\n` : ''}${info.resultFile ? `results: ${info.resultFile}\n` : ''}\n`,
          );
        }
        printList(format, rows, [
          { title: 'line', get: (r) => r.line, right: true },
          { title: 'state', get: (r) => r.state },
          { title: 'trxid', get: (r) => r.trxid },
          { title: 'orderId', get: (r) => r.orderId },
          { title: 'pack', get: (r) => r.packName },
          { title: 'usd', get: (r) => usd(r.amountUsd ?? r.expectedUsd), right: true },
          { title: 'error', get: (r) => r.error },
        ]);
        return;
      }
      const batches = store.batches.list(opts.active ? { states: ['claimed', 'open', 'duplicate'], limit: opts.limit } : { limit: opts.limit });
      const list = batches
        .filter((b) => !opts.active || b.finishedAt === null)
        .map((b) => ({ b, s: snapshot(store.rows, b.id) }))
        .map(({ b, s }) => ({ b, s, eta: storedEtaMs(b, s, pause, now) }))
        .map(({ b, s, eta }) => ({
          id: b.id, file: b.sourceName, origin: b.origin, state: runState(b, pause, now), cancelRequested: b.cancelRequested, rows: s.rows, done: s.done, sent: s.sent,
          etaSec: eta === null ? null : Math.round(eta / 1000),
          completed: s.counts.completed, cancelled: s.counts.cancelled, rejected: s.counts.rejected, invalid: s.counts.invalid,
          skipped: s.counts.skipped, review: s.counts.review, spentUsd: s.spentUsd, why: waitingWhy(b, pause, now),
          createdAt: when(b.createdAt), resultFile: b.finishedAt ? b.resultFile : null,
        }));
      if (format === 'table' && pause) {
        process.stdout.write(pause.kind === 'account'
          ? `SENDING STOPPED: account problem ${pause.code} (${pause.detail}) since ${when(pause.since)}\n\n`
          : `Orders paused by the API: ${pause.code} since ${when(pause.since)}\n\n`);
      }
      printList(format, list, [
        { title: 'batch', get: (r) => r.id },
        { title: 'file', get: (r) => r.file },
        // "done 500/500" of a cancelled batch would read as if every row had been bought.
        { title: 'state', get: (r) => `${r.state}${r.cancelRequested ? (r.state === 'done' ? ' (cancelled)' : ' (cancelling)') : ''}` },
        { title: 'done', get: (r) => `${r.done}/${r.rows}`, right: true },
        { title: 'sent', get: (r) => r.sent, right: true },
        { title: 'ok', get: (r) => r.completed, right: true },
        { title: 'cancelled', get: (r) => r.cancelled, right: true },
        { title: 'rejected', get: (r) => r.rejected, right: true },
        { title: 'invalid', get: (r) => r.invalid, right: true },
        { title: 'skipped', get: (r) => r.skipped, right: true },
        { title: 'review', get: (r) => r.review, right: true },
        { title: 'usd', get: (r) => usd(r.spentUsd), right: true },
        { title: 'eta', get: (r) => (r.etaSec === null ? '' : durationText(r.etaSec * 1000)), right: true },
        { title: 'created UTC', get: (r) => r.createdAt },
        { title: 'why', get: (r) => r.why },
      ], { pause, batches: list });
    } finally {
      store.close();
    }
  });
}

/** Never the delivered codes: status output ends up in terminals and logs. */
function rowJson(r: Row): Record<string, unknown> {
  return {
    line: r.line, state: r.state, trxid: r.trxid, orderId: r.orderId, pid: r.productId, pack: r.packName, quantity: r.quantity,
    expectedUsd: r.expectedUsd, amountUsd: r.amountUsd, refunded: r.refunded, error: r.error, attempts: r.attempts, codesDelivered: r.codes.length,
  };
}
