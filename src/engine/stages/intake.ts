/**
 * Intake: settled files offered by the watcher are claimed (a batch record, then the move into
 * jobs/<batch>/), and claimed batches this process holds are parsed, validated and stored
 * (claim/load.ts). A batch that must wait for the catalog is tried again every CATALOG_RETRY_MS.
 */
import { coerceError } from '../../kernel/errors.js';
import type { EngineContext, Stage, StepBatches } from '../stage.js';
import type { Batch } from '../../store/batches.js';
import { ChangedSinceSettled, claimFile, claimMoving } from '../../claim/claim.js';
import { loadBatch } from '../../claim/load.js';

const CATALOG_RETRY_MS = 10_000;
/** A batch whose load found it no longer ours: after the next lease renewal (runner.ts renews every 5 s). */
const NOT_OURS_RETRY_MS = 6_000;

export class IntakeStage implements Stage {
  readonly name = 'intake';
  readonly #e: EngineContext;
  /** Files offered and not claimed yet, in the order they came, with the hash each settled with. */
  readonly #queue: { path: string; hash: string | undefined }[] = [];
  /** When a batch that could not be stored (catalog unreachable …) is tried again (wall ms). */
  readonly #nextTry = new Map<string, number>();

  constructor(e: EngineContext) {
    this.#e = e;
  }

  /** A settled file in the inbox (from the watcher); offered twice, claimed once. */
  offer(path: string, hash?: string): void {
    const queued = this.#queue.find((q) => q.path === path);
    if (queued) queued.hash = hash;
    else this.#queue.push({ path, hash });
  }

  get queued(): number {
    return this.#queue.length;
  }

  /** True when a batch of this process changed (claimed, stored, refused). */
  async tick(now: number, b: StepBatches): Promise<boolean> {
    // A file just claimed is a batch for the leases stage to take: step again at once.
    const claimed = await this.#claimQueued();
    if (claimed) this.#e.wake();
    let stored = false;
    for (const batch of b.owned) if (batch.state === 'claimed' && (await this.#load(batch, now))) stored = true;
    // A batch just stored changes what the next stages do: step again at once.
    if (stored) this.#e.wake();
    return claimed || stored;
  }

  nextDueAt(now: number, b: StepBatches): number | undefined {
    if (this.#queue.length > 0) return 0;
    const due = b.owned.filter((x) => x.state === 'claimed').map((x) => this.#nextTry.get(x.id) ?? 0);
    if (due.length === 0) return undefined;
    // While an account problem stops lookups a load cannot start: due when the probe may go, not
    // at once (found by profiling the simulator: the runner woke every 5 ms through the pause).
    const { pauses } = this.#e;
    const held = pauses.pollable().length > 0 ? 0 : (pauses.untilPollProbe() ?? 0);
    return Math.max(Math.min(...due), now + held);
  }

  /** Claims every queued file; true when at least one became a batch. */
  async #claimQueued(): Promise<boolean> {
    const { rt } = this.#e;
    let claimed = false;
    while (this.#queue.length > 0 && !this.#e.stopping()) {
      const { path, hash } = this.#queue.shift()!;
      try {
        await claimFile(rt, path, { settledHash: hash });
        claimed = true;
      } catch (err) {
        const e = err as NodeJS.ErrnoException;
        if (e.code === 'ENOENT') continue; // taken by another process, or removed by the user
        if (err instanceof ChangedSinceSettled) {
          // Written to again between settling and this claim: it stays in the inbox and settles
          // anew (the watcher offers it again once it holds still).
          rt.log.info({ file: path }, err.message);
          continue;
        }
        rt.log.error({ file: path, err: coerceError(err) }, 'could not claim a file');
      }
    }
    return claimed;
  }

  /** Parses, validates and stores a claimed batch. True when its state changed. */
  async #load(b: Batch, now: number): Promise<boolean> {
    const { rt, pauses } = this.#e;
    // A load reads the catalogs: it waits only while no account can be asked (an account problem on each).
    if ((this.#nextTry.get(b.id) ?? 0) > now || pauses.pollable().length === 0) return false;
    // The order API's claim of it (in this process) has not moved its file in yet: loaded at the
    // step its handler wakes the runner for, never now (it would find no file and fail the batch).
    if (claimMoving(rt, b.id)) return false;
    try {
      const outcome = await loadBatch(rt, b);
      if (!outcome.loaded && outcome.reason === 'not-ours') {
        // Our lease lapsed (a stall, the wall clock stepped forward) or another process took the
        // batch: nothing changed here. Looked at again after the leases are renewed, never at once
        // (found by the simulator: it was retried in a tight loop until the renewal came).
        this.#nextTry.set(b.id, now + NOT_OURS_RETRY_MS);
        return false;
      }
      if (!outcome.loaded && outcome.reason === 'player-checks') {
        // Checks still owed: the batch stays claimed (nothing of it can be sent). Loaded again at
        // once while answers come in, after the catalog's pause when none did.
        const after = rt.batches.get(b.id);
        if (after) this.#e.emit('batch-changed', after);
        this.#nextTry.set(b.id, outcome.soon ? now : now + CATALOG_RETRY_MS);
        if (!outcome.soon) rt.log.warn({ batch: b.id, why: outcome.message }, 'batch waits for player checks');
        return false;
      }
      if (outcome.loaded || outcome.reason !== 'catalog') {
        this.#nextTry.delete(b.id);
        const after = rt.batches.get(b.id);
        if (after) this.#e.emit('batch-changed', after);
        return true;
      }
      rt.log.warn({ batch: b.id, why: outcome.message }, 'batch waits for the catalog');
    } catch (err) {
      // Not the file's fault (it would be a file error): keep the daemon up and try again.
      rt.log.error({ batch: b.id, err: coerceError(err) }, 'could not store the batch; will try again');
    }
    this.#nextTry.set(b.id, now + CATALOG_RETRY_MS);
    return false;
  }
}
