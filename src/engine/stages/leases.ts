/**
 * Leases: which batches this process drives. Renewal is in one place (keepLeases, on its own
 * timer, so a step waiting on the API never lets a lease lapse); this stage takes the batches
 * nobody else holds, takes over those of processes that died on this host, and watches the wall
 * clock for steps.
 *
 * A step of the wall clock (NTP, a resumed VM) would make stored times lie: stepped back, every
 * `next_try_at` / `next_poll_at` and lease lies in the future by the size of the step (rows wait
 * for hours, dead owners' leases look alive); stepped forward, they all fall due at once (harmless:
 * the rate gate, on the monotonic clock, paces the calls). So when a step back is seen, stored due
 * times move back by the step (a row waiting 30 s for its history check waits 30 s, not an hour
 * more: found by the simulator, sim/found/clock-step-back-searching.json), those still further
 * ahead than any wait could be come to now, leases to one lease length, and the step is logged and
 * reported as an event. (A due time written in the moment between the step and this look moves
 * back too: it falls due early, which only makes a wait shorter — never a second purchase: resends
 * carry the row's trxid and the rate gate paces every call.)
 *
 * The waits counted from a stored "since" (a row's doubt clock, an account pause's start) move back
 * by the step too, and the step is applied once for the home, by whichever process finds the wall
 * clock behind the home's mark first — at a lease renewal, at this stage's first look (a step made
 * while no process ran), or when its StepWatch sees the step (store/wall-mark.ts).
 */
import type { EngineContext, Stage, StepBatches } from '../stage.js';
import { StepWatch } from '../../kernel/clock.js';
import { LEASE_MS } from '../../store/owner.js';
import { noteWallClock, type WallStep } from '../../store/wall-mark.js';
/** How often unfinished batches nobody holds are looked for while idle. */
export const IDLE_LOOK_MS = 30_000;
const BUSY_LOOK_MS = 5_000;

export class LeaseStage implements Stage {
  readonly name = 'leases';
  readonly #e: EngineContext;
  readonly #watch: StepWatch;
  #lastLook = Number.NEGATIVE_INFINITY;
  /** Unfinished batches of the home at the last look (whoever runs them): whether to look often. */
  #unfinishedSeen = 0;
  /** Whether the home's wall-clock mark was compared yet (the first look catches a step made while no process ran). */
  #marked = false;

  constructor(e: EngineContext) {
    this.#e = e;
    this.#watch = new StepWatch(e.clock);
  }

  /** True when the batches this process holds may have changed (one taken, or the clock stepped). */
  tick(now: number): boolean {
    const step = this.#watch.look();
    let marked = false;
    if (!this.#marked) {
      this.#marked = true;
      marked = step === 0 && this.markWallClock(now) !== null;
    }
    if (step !== 0) this.#clockStepped(step, now);
    const took = this.#adopt(now);
    this.#lastLook = now;
    return took || step !== 0 || marked;
  }

  nextDueAt(now: number, b: StepBatches): number {
    // Unfinished batches that are not ours (another process runs them, or left them) are looked
    // at often: one released by a submit that was stopped is taken within seconds. (As of this
    // step's look: its tick has just read them.)
    const busy = b.owned.length > 0 || this.#unfinishedSeen > 0;
    return Math.max(now, this.#lastLook + (busy ? BUSY_LOOK_MS : IDLE_LOOK_MS));
  }

  #adopt(now: number): boolean {
    const { rt, onlyBatch } = this.#e;
    if (!onlyBatch) {
      // Every batch unfinished is ours already (the usual step of a busy daemon): nothing to take.
      const held = rt.batches.unfinishedHeld(rt.owner);
      if (held.others === 0) {
        this.#unfinishedSeen = held.unfinished;
        return false;
      }
    }
    const candidates = onlyBatch ? [rt.batches.get(onlyBatch)].filter((b) => b !== undefined) : rt.batches.unfinished();
    this.#unfinishedSeen = candidates.length;
    let took = false;
    for (const b of candidates) {
      if (b.owner === rt.owner || b.finishedAt !== null) continue;
      // Held by a live process whose lease runs: the UPDATE would refuse it; not even tried (a
      // write every step, by every process, for every batch another one runs).
      if (b.owner !== null && b.leaseUntil >= now && !rt.ownerIsDead(b.owner)) continue;
      const taken =
        rt.batches.acquire(b.id, rt.owner, now, LEASE_MS) ||
        (b.owner !== null && rt.ownerIsDead(b.owner) && rt.batches.takeOver(b.id, rt.owner, b.owner, now, LEASE_MS));
      if (!taken) continue;
      // The previous owner's requests died with it (or were never answered before it let go): the
      // store's batches_taken_over trigger has made its `sending` rows `resending` in the same
      // UPDATE that gave us the lease (store/migrations.ts; store/invariants.ts).
      rt.log.info({ batch: b.id, file: b.sourceName, previousOwner: b.owner }, 'took batch');
      took = true;
    }
    return took;
  }

  /**
   * Compares the wall clock with the home's mark (store/wall-mark.ts): a step back no process has
   * applied yet moves the stored due times, doubt clocks and pause starts back by it, once. Called
   * on every lease renewal (engine/runner.ts) and by tick. Returns what it moved, or null.
   */
  markWallClock(now: number, seenStepBackMs?: number): WallStep | null {
    const { rt } = this.#e;
    const applied = noteWallClock(rt, now, seenStepBackMs);
    if (applied === null) return null;
    const leases = rt.batches.clampLeases(now, LEASE_MS);
    rt.log.warn(
      { stepMs: -applied.stepBackMs, rowsMoved: applied.dueTimes, doubtClocksMoved: applied.doubtClocks, pausesMoved: applied.pauses, leasesMoved: leases },
      'the wall clock is behind the latest time this home has seen (stepped back): stored due times, doubt clocks and pause starts moved back by the step',
    );
    return applied;
  }

  #clockStepped(stepMs: number, now: number): void {
    const { rt } = this.#e;
    if (stepMs < 0) {
      // Applied once for the home (another process may have applied this very step already); the
      // leases are clamped in any case (idempotent).
      if (this.markWallClock(now, -stepMs) === null) rt.batches.clampLeases(now, LEASE_MS);
    } else {
      rt.log.warn({ stepMs }, 'the wall clock stepped forward: waits end early, calls stay paced by the rate gate');
    }
    this.#e.emit('clock-step', stepMs);
  }
}
