/**
 * Drives one batch to its end in this process (submit, retry --run, cancel): a Runner limited
 * to that batch, its events shown to the operator, notifications sent as the daemon would.
 *
 * Ctrl-C / SIGTERM stops gracefully: calls in flight finish, the lease is released, and the
 * daemon (or a later command) carries the batch on from the store. A second signal exits at once,
 * which is as safe as a crash.
 */
import { Runner } from '../engine/runner.js';
import type { Runtime } from '../runtime.js';
import type { BatchSummary } from '../outbox/summary.js';
import type { Notifier } from '../notify/notifier.js';
import { snapshot } from './batch-view.js';
import { createProgressView } from './progress.js';

export interface ForegroundResult {
  summary: BatchSummary | null;
  interrupted: boolean;
}

export async function runBatchInForeground(rt: Runtime, batchId: string, notifier: Notifier, opts: { quiet?: boolean } = {}): Promise<ForegroundResult> {
  const runner = new Runner(rt, { once: true, onlyBatch: batchId });
  notifier.follow(runner);
  const view = createProgressView(batchId, process.stderr.isTTY === true && !opts.quiet, opts.quiet ? devNull : process.stderr);
  let summary: BatchSummary | null = null;
  runner.on('batch-finished', (s) => {
    if (s.batchId === batchId) summary = s;
  });
  runner.on('balance-wait', (_b, detail) => view.note(`waiting for balance: ${detail}. Top up the account; sending starts by itself.`));
  runner.on('pause', (kind, code, detail) =>
    view.note(kind === 'account' ? `sending stopped: account problem ${code} (${detail}); retrying periodically` : `orders paused by the API (${code}); retrying periodically`),
  );
  runner.on('resume', () => view.note('sending resumed'));

  let signals = 0;
  const onSignal = (): void => {
    signals++;
    if (signals > 1) process.exit(130);
    view.note('stopping: letting calls in flight finish (press Ctrl-C again to quit at once)');
    runner.stop();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const timer = setInterval(() => {
    if (rt.batches.get(batchId)?.state !== 'claimed') view.update(snapshot(rt.rows, batchId));
  }, 250);
  try {
    await runner.run();
  } finally {
    clearInterval(timer);
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
  const b = rt.batches.get(batchId);
  view.stop(b && b.state !== 'claimed' ? snapshot(rt.rows, batchId) : null);
  await notifier.flush();
  return { summary, interrupted: signals > 0 };
}

const devNull = { write: () => true } as unknown as NodeJS.WritableStream;
