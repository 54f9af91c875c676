/**
 * The daemon's progress in its log, from the runner's `progress` event (every 10 s per running
 * batch): on a terminal ONE sentence per batch (done/rows, sent, the counts, USD, ETA); otherwise
 * one JSON line with the same facts as fields, for log tools.
 *
 * A batch that has not moved since its last line (waiting for balance, paused by the API) is not
 * repeated on every tick: once QUIET_REPEAT_MS has passed it is said again, so a log that stops
 * showing a batch means it ended, not that it is stuck.
 */
import { systemClock } from '../kernel/clock.js';
import type { RunnerEvents } from '../engine/events.js';
import type { Logger } from '../kernel/log.js';
import type { RowStore, StateCounts } from '../store/rows.js';
import type { Batch } from '../store/batches.js';
import { EtaBook, durationText, snapshot, storedEtaMs } from '../ops/batch-view.js';
import { describe } from './progress.js';

const QUIET_REPEAT_MS = 5 * 60_000;

/** Follows `runner`'s progress events until the returned function is called (a releaser). */
export function logProgress(runner: RunnerEvents, rows: RowStore, log: Logger, opts: { text: boolean }): () => void {
  const etas = new EtaBook();
  const said = new Map<string, { line: string; at: number; moved: string }>();
  const onProgress = (b: Batch, counts: StateCounts): void => {
    const now = systemClock.now();
    // A batch that has not moved says nothing until QUIET_REPEAT_MS: decided from the counters
    // before rows.progress(), which reads every row of the batch (its spend is not a counter).
    const moved = `${Object.values(counts).join(',')}|${b.waitReason ?? ''}`;
    const last = said.get(b.id);
    if (last && last.moved === moved && now - last.at < QUIET_REPEAT_MS) return;
    const s = snapshot(rows, b.id, counts);
    const { done } = s;
    // Until this process has seen the batch move, the pace since it started sending.
    const eta = etas.eta(b.id, s, now) ?? storedEtaMs(b, s, null, now);
    const line = `progress ${b.id} (${b.sourceName}): ${done}/${s.rows} done; ${describe(s)}${b.waitReason ? `; waiting: ${b.waitReason}` : ''}`;
    if (last && last.line === line && now - last.at < QUIET_REPEAT_MS) return;
    said.set(b.id, { line, at: now, moved });
    if (opts.text) log.info(`${line}; ETA ${durationText(eta)}`);
    else log.info({ batch: b.id, file: b.sourceName, rows: s.rows, done, sent: s.sent, counts, spentUsd: s.spentUsd, etaSec: eta === null ? null : Math.round(eta / 1000), waiting: b.waitReason }, 'progress');
  };
  const onFinished = (summary: { batchId: string }): void => {
    etas.forget(summary.batchId);
    said.delete(summary.batchId);
  };
  runner.on('progress', onProgress);
  runner.on('batch-finished', onFinished);
  return () => {
    runner.off('progress', onProgress);
    runner.off('batch-finished', onFinished);
  };
}
