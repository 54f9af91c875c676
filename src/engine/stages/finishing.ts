/**
 * Finishing: a batch whose every row reached an end, with no send of it still in flight, gets its
 * result and summary written (outbox/finish.ts) and is marked done; a duplicate file's batch likewise.
 * Progress (counts per state) is reported every PROGRESS_EVERY_MS while batches run, as the
 * `progress` event (the daemon logs it: commands/progress-log.ts), and the partial result (outbox/partial.ts,
 * throttled inside) is rewritten while a batch runs.
 */
import { coerceError } from '../../kernel/errors.js';
import type { EngineContext, Stage, StepBatches } from '../stage.js';
import type { Batch } from '../../store/batches.js';
import { LIVE_STATES, type StateCounts } from '../../store/rows.js';
import { finishBatch } from '../../outbox/finish.js';
import { PartialResults } from '../../outbox/partial.js';
import { apiBatchClosesAt, apiBatchOpenForOrders } from '../../orders/api-batch.js';

const PROGRESS_EVERY_MS = 10_000;

export class FinishingStage implements Stage {
  readonly name = 'finishing';
  readonly #e: EngineContext;
  readonly #inFlightFor: (batchId: string) => number;
  #lastProgress = 0;
  readonly #partials: PartialResults;
  /** Open batches still running after the last tick. */
  unfinished = 0;

  constructor(e: EngineContext, inFlightFor: (batchId: string) => number) {
    this.#e = e;
    this.#inFlightFor = inFlightFor;
    this.#partials = new PartialResults(() => e.clock.now());
  }

  async tick(now: number, b: StepBatches): Promise<void> {
    for (const batch of b.owned) if (batch.state === 'duplicate') await this.#finish(batch);
    const progress = now - this.#lastProgress >= PROGRESS_EVERY_MS;
    let unfinished = 0;
    for (const batch of b.open) {
      const counts = this.#e.rt.rows.counts(batch.id);
      const live = LIVE_STATES.reduce((n, st) => n + counts[st], 0);
      // The order API's batch of a day still taking orders (orders/api-batch.ts) is not finished
      // however many of its orders ended: more may come until its day is over. It counts as
      // unfinished only while an order in it is live (`daemon --once` may stop between orders).
      // A cancelled one takes no order any more (orders/desk.ts refuses them until tomorrow's
      // batch): it is finished like a file's once its sent orders end (adv9: `topup cancel` of the
      // open day's API batch waited for a day's end and timed out).
      const openForOrders = !batch.cancelRequested && apiBatchOpenForOrders(batch, now);
      if (live === 0 && this.#inFlightFor(batch.id) === 0 && !openForOrders) await this.#finish(batch);
      else {
        if (live > 0 || this.#inFlightFor(batch.id) > 0) unfinished++;
        await this.#partials.update(this.#e.rt, batch, counts, now);
      }
      if (progress) this.#progress(batch, counts);
    }
    if (progress) this.#lastProgress = now;
    this.unfinished = unfinished;
  }

  nextDueAt(now: number, b: StepBatches): number | undefined {
    if (b.open.length === 0) return undefined;
    let due = this.#lastProgress + PROGRESS_EVERY_MS;
    // A day's API batch may be finished once its day is over; a closing time already past is not
    // work now (its orders still live end by sends and polls, which wake the runner: found by the
    // simulator, the runner woke every 5 ms after midnight while queued orders waited for balance).
    for (const batch of b.open) {
      const closes = apiBatchClosesAt(batch);
      if (closes !== undefined && closes > now) due = Math.min(due, closes);
    }
    return due;
  }

  async #finish(b: Batch): Promise<void> {
    const { rt, emit } = this.#e;
    try {
      const summary = await finishBatch(rt, rt.batches.get(b.id)!);
      if (summary === null) return; // its file is still being written: tried again at a later step
      const after = rt.batches.get(b.id)!;
      emit('batch-finished', summary, after);
      emit('batch-changed', after);
    } catch (err) {
      rt.log.error({ batch: b.id, err: coerceError(err) }, 'could not write the results; will try again');
    }
  }

  #progress(b: Batch, counts: StateCounts): void {
    this.#e.emit('progress', b, counts);
  }
}
