/**
 * This daemon's spending over the last hour, for the overview's runway, per supplier account (each
 * account's balance pays for its own rows): from the runner's events
 * (a row that ended completed, or cancelled without a refund), so showing it reads nothing but
 * the rows that just ended. A rate over less than MIN_SPAN_MS of history would make one batch
 * finishing in a minute look like a torrent, so the span counted is at least that long.
 */
import { systemClock } from '../kernel/clock.js';
import type { RunnerEvents } from '../engine/events.js';
import type { Runtime } from '../runtime.js';
import { rowMoney } from '../store/cost.js';
import type { RowState } from '../store/rows.js';

const WINDOW_MS = 3_600_000;
const MIN_SPAN_MS = 10 * 60_000;

export class SpendWindow {
  readonly #rt: Pick<Runtime, 'rows'>;
  readonly #since: number;
  readonly #spent: { at: number; cents: number; account: string }[] = [];
  #off: (() => void) | null = null;

  constructor(rt: Pick<Runtime, 'rows'>, since = systemClock.now()) {
    this.#rt = rt;
    this.#since = since;
  }

  follow(runner: RunnerEvents): void {
    const moved = (m: { batchId: string; idx: number; to: RowState }): void => {
      if (m.to !== 'completed' && m.to !== 'cancelled') return;
      const row = this.#rt.rows.get(m.batchId, m.idx);
      const cents = row ? rowMoney(row).netCents ?? 0 : 0;
      if (row && cents > 0) this.add(cents, systemClock.now(), row.account);
    };
    runner.on('row-moved', moved);
    this.#off = () => runner.off('row-moved', moved);
  }

  close(): void {
    this.#off?.();
  }

  add(cents: number, at = systemClock.now(), account = 'default'): void {
    this.#spent.push({ at, cents, account });
  }

  /** USD an hour at the pace of the last hour (or since start), or 0; with `account`, that account's rows only. */
  perHour(now = systemClock.now(), account?: string): number {
    return this.pace(now, account).usdPerHour;
  }

  /**
   * The pace and the span it was measured over: the last hour, or, for a daemon started less than
   * an hour ago, the time since it started (at least MIN_SPAN_MS). The overview names the span,
   * so "over the last hour" is never said of ten minutes.
   */
  pace(now = systemClock.now(), account?: string): { usdPerHour: number; spanMs: number } {
    while (this.#spent.length > 0 && this.#spent[0]!.at < now - WINDOW_MS) this.#spent.shift();
    const cents = this.#spent.reduce((s, e) => s + (account === undefined || e.account === account ? e.cents : 0), 0);
    const spanMs = Math.max(MIN_SPAN_MS, Math.min(WINDOW_MS, now - this.#since));
    return { usdPerHour: (cents / 100) * (WINDOW_MS / spanMs), spanMs };
  }
}
