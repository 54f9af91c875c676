/**
 * Dispatch: rows the funding stage allows are sent (dispatch/sender.ts), at most TOPUP_MAX_IN_FLIGHT at
 * once (the rate gate is the real limit), one at a time as a probe while orders are paused. Sends
 * run in the background; each one that ends wakes the runner.
 */
import { coerceError } from '../../kernel/errors.js';
import type { EngineContext, Stage, StepBatches } from '../stage.js';
import type { Row } from '../../store/rows.js';
import type { FundingStage } from './funding.js';
import { sendRow } from '../../dispatch/sender.js';

export class DispatchStage implements Stage {
  readonly name = 'dispatch';
  readonly #e: EngineContext;
  readonly #funding: FundingStage;
  /** Sends in flight, by batch then row index: a batch is not finished while one of its sends is open. */
  readonly #inflight = new Map<string, Map<number, Promise<void>>>();
  #count = 0;
  /** The in-flight cap at the last tick (1 while paused). */
  #cap = 1;
  /**
   * The time of the last tick that started every row due by then which was not already on its
   * way (fewer than the cap were in flight after it): rows due by then that are still sendable
   * are waiting in the rate gate, and their sends ending wake the runner. Without it the runner
   * woke every 5 ms while a send waited out a Retry-After hold or the gate (found by profiling the
   * simulator: a third of its events).
   */
  #startedUpTo: number | undefined;

  constructor(e: EngineContext, funding: FundingStage) {
    this.#e = e;
    this.#funding = funding;
  }

  /** Sends in flight, all batches. */
  get inFlight(): number {
    return this.#count;
  }

  inFlightFor(batchId: string): number {
    return this.#inflight.get(batchId)?.size ?? 0;
  }

  running(): Promise<void>[] {
    return [...this.#inflight.values()].flatMap((m) => [...m.values()]);
  }

  tick(now: number, batches?: StepBatches): void {
    const { rt, pauses } = this.#e;
    this.#startedUpTo = undefined;
    if (batches) this.#rescueStranded(batches, now);
    if (this.#e.stopping() || !pauses.canSend()) return;
    // While paused, one order at a time probes whether the pause is over.
    const cap = pauses.current ? 1 : rt.config.maxInFlight;
    this.#cap = cap;
    if (this.#count >= cap) return;
    // Rows whose send started may still be pending (waiting for the rate gate): skipped by the read.
    const busy = { has: (batchId: string, idx: number) => this.#inflight.get(batchId)?.has(idx) === true };
    for (const row of rt.rows.sendable(this.#funding.scope, now, cap - this.#count, busy)) this.#start(row);
    if (this.#count < cap) this.#startedUpTo = now;
  }

  nextDueAt(): number | undefined {
    // Sends finishing wake the runner; a timer is needed only for rows waiting out a back-off.
    if (this.#count >= this.#cap) return undefined;
    const rows = this.#e.rt.rows.nextTryAt(this.#funding.scope, this.#startedUpTo);
    if (rows === undefined) return undefined;
    // While paused, a probe needs both its time and a row that is due: a probe due now with every
    // row held for later (a Retry-After, a clock stepped back) is not work now. (Found by the
    // simulator: the runner woke every 5 ms until the rows fell due.)
    const probe = this.#e.pauses.untilProbe();
    return probe === undefined ? rows : Math.max(rows, this.#e.clock.now() + probe);
  }

  /**
   * A `sending` row of a batch this process holds, with no send of ours working on it, was left by
   * a send that ended without writing an answer (store/invariants.ts: such a row is resent with its
   * trxid). The counters tell in one lookup per batch when one certainly exists: more `sending`
   * rows than sends of ours in flight (some of which may not even have sent yet). That can hide a
   * stranded row while other sends wait for the rate gate, never for long: the batch cannot end
   * while the row is `sending`, and its other sends end. Never a row whose send runs (#inflight).
   */
  #rescueStranded(batches: StepBatches, now: number): void {
    const { rt } = this.#e;
    for (const b of batches.open) {
      const mine = this.#inflight.get(b.id);
      if (rt.rows.counts(b.id).sending <= (mine?.size ?? 0)) continue;
      for (const idx of rt.rows.sendingIdx(b.id)) {
        if (mine?.has(idx)) continue;
        if (rt.rows.strandedSending(b.id, idx, { owner: rt.owner, now })) {
          rt.log.error({ batch: b.id, idx }, 'a row was left sending with no request of this process open: it will be resent with the same trxid');
        }
      }
    }
  }

  #start(row: Row): void {
    const { rt, emit } = this.#e;
    let rows = this.#inflight.get(row.batchId);
    if (!rows) this.#inflight.set(row.batchId, (rows = new Map()));
    const p = sendRow(
      {
        rt,
        pauses: this.#e.pauses,
        onBalanceShort: (batchId, detail) => this.#funding.short(batchId, detail),
        onPause: (kind, code, detail) => {
          rt.log.error({ pause: kind, code, detail }, kind === 'account' ? 'sending stopped: account problem' : 'sending paused by the API');
          emit('pause', kind, code, detail);
        },
      },
      row,
      this.#e.signal,
    )
      .then(() => undefined)
      .catch((err: unknown) => rt.log.error({ batch: row.batchId, line: row.line, err: coerceError(err) }, 'send failed unexpectedly'))
      .finally(() => {
        rows!.delete(row.idx);
        if (rows!.size === 0) this.#inflight.delete(row.batchId);
        this.#count--;
        this.#e.wake();
      });
    rows.set(row.idx, p);
    this.#count++;
  }
}
