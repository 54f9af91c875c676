/**
 * Drives one batch to its end in this process (submit, retry --run, cancel): a Runner limited
 * to that batch, its events shown to the operator, notifications sent as the daemon would.
 *
 * Ctrl-C / SIGTERM stops gracefully (the signal handler the daemon uses too, kernel/shutdown.ts): calls
 * in flight finish, the lease is released, and a running daemon (or a later command) carries the
 * batch on from the store. A second signal exits at once, which is as safe as a crash.
 */
import { Runner } from '../engine/runner.js';
import { createOrderDesk } from '../orders/desk.js';
import { recoverFromJournal } from '../orders/journal.js';
import type { Runtime } from '../runtime.js';
import type { BatchSummary } from '../outbox/summary.js';
import type { Notifier } from '../notify/notifier.js';
import { snapshot } from '../ops/batch-view.js';
import { createProgressView } from './progress.js';
import { onStopSignals } from '../kernel/shutdown.js';

export interface ForegroundResult {
  summary: BatchSummary | null;
  interrupted: boolean;
}

export async function runBatchInForeground(rt: Runtime, batchId: string, notifier: Notifier, opts: { quiet?: boolean } = {}): Promise<ForegroundResult> {
  // The first start after a restore may be this one (every process that opens the home checks):
  // its reconcile accepts the order API's journal again (and the lines beside a folder replica) as
  // the daemon's does, or the marker would go with those orders never taken back (their shop's
  // resend then bought on the first account an order that had failed over).
  let desk: ReturnType<typeof createOrderDesk> | null = null;
  const runner: Runner = new Runner(rt, { once: true, onlyBatch: batchId, recoverJournal: () => recoverFromJournal(rt, (desk ??= createOrderDesk(rt, () => runner.wake()))) });
  notifier.follow(runner);
  const view = createProgressView(batchId, process.stderr.isTTY === true && !opts.quiet, opts.quiet ? devNull : process.stderr);
  let summary: BatchSummary | null = null;
  runner.on('batch-finished', (s) => {
    if (s.batchId === batchId) summary = s;
  });
  runner.on('balance-wait', (_b, detail) => view.note(`waiting for balance: ${detail}. Top up the account; sending starts by itself.`));
  runner.on('pause', (kind, code, detail, account) => {
    const on = account !== 'default' ? ` on account ${account}` : '';
    view.note(kind === 'account' ? `sending stopped${on}: account problem ${code} (${detail}); retrying periodically` : `orders paused by the API${on} (${code}); retrying periodically`);
  });
  runner.on('resume', () => view.note('sending resumed'));

  const signals = onStopSignals(
    () => {
      view.note('stopping: letting calls in flight finish (press Ctrl-C again to quit at once)');
      runner.stop();
    },
    () => view.note('quitting at once: the batch is safe on disk and is carried on from there'),
  );
  const timer = setInterval(() => {
    if (rt.batches.get(batchId)?.state !== 'claimed') view.update(snapshot(rt.rows, batchId));
  }, 250);
  try {
    await runner.run();
  } finally {
    clearInterval(timer);
    signals.off();
  }
  const b = rt.batches.get(batchId);
  view.stop(b && b.state !== 'claimed' ? snapshot(rt.rows, batchId) : null);
  await notifier.flush();
  return { summary, interrupted: signals.count > 0 };
}

const devNull = { write: () => true } as unknown as NodeJS.WritableStream;
