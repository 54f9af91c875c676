/**
 * How much memory the long-running commands (`daemon`, `submit`) let V8 keep.
 *
 * V8 sizes its heap for throughput: after each full collection it lets the old generation grow to
 * up to 4 × what is live, and it doubles the young generation (up to 2 × 16 MB) whenever a
 * collection finds much of it alive. Storing a 100,000-row file makes a few hundred MB of
 * short-lived rows at a high rate, so both grow to their maximum although only ~25 MB is ever
 * live: the daemon peaked at 242 MB, and kept that memory for the rest of the batch
 * (docs/bench.md, "Scale"). A reseller's server often runs this next to other services.
 *
 * The policy below asks for more frequent collections instead: the old generation may grow by
 * 25 % over what is live (V8 still grows it by a few MB at least, so a collection never runs on
 * every allocation), and the young generation stays at the size it has when the command starts.
 * Measured with the scale bench (with db.ts's smaller page cache): peak RSS 242 → 140 MB at
 * 100,000 rows; side by side at 20,000 rows, 120–139 MB against 200 MB, for a CPU cost within the
 * run-to-run noise on a quiet machine and 7 % on a loaded one (docs/bench.md, "Scale").
 *
 * This caps nothing: no limit is lowered, so a process that needs more memory (a large report or
 * result workbook) gets it as before, only collected sooner. That is why these two flags and not
 * `--max-old-space-size`, which would turn a large workbook into an out-of-memory crash
 * mid-batch. Both are read by V8 at each collection, so they take effect when set at run time
 * (node's own documentation shows `v8.setFlagsFromString` for a flag of this kind, `--trace-gc`).
 *
 * TOPUP_HEAP=throughput leaves V8's defaults (more memory, slightly less collection work).
 */
import { setFlagsFromString } from 'node:v8';

export const LEAN_HEAP_FLAGS = ['--heap-growing-percent=25', '--semi-space-growth-factor=1'] as const;

export type HeapPolicy = 'lean' | 'throughput';

/** Applies the policy (TOPUP_HEAP, validated in config/config.ts) to this process; called once by the commands that run batches. */
export function applyHeapPolicy(policy: HeapPolicy): void {
  if (policy === 'lean') for (const flag of LEAN_HEAP_FLAGS) setFlagsFromString(flag);
}
