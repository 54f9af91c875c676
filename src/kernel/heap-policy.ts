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
 * every allocation). (It also held the young generation at its size at the command's start: no
 * more, see "Start-up" below.)
 * Measured with the scale bench (with db.ts's smaller page cache): peak RSS 242 → 140 MB at
 * 100,000 rows; side by side at 20,000 rows, 120–139 MB against 200 MB, for a CPU cost within the
 * run-to-run noise on a quiet machine and 7 % on a loaded one (docs/bench.md, "Scale").
 *
 * This caps nothing: no limit is lowered, so a process that needs more memory (a large report or
 * result workbook) gets it as before, only collected sooner. That is why this flag and not
 * `--max-old-space-size`, which would turn a large workbook into an out-of-memory crash
 * mid-batch. Such flags are read by V8 at each collection, so they take effect when set at run time
 * (node's own documentation shows `v8.setFlagsFromString` for a flag of this kind, `--trace-gc`).
 *
 * TOPUP_HEAP=throughput leaves V8's defaults (more memory, slightly less collection work).
 *
 * Start-up (every command): loading the program's ~450 modules makes ~20 MB of objects that live
 * for the whole process, and V8 doubles the young generation at each collection that finds much of
 * it alive, so the imports alone took it from 2 × 1 MB to its largest, 2 × 16 MB. An idle daemon
 * kept that (~14 MB of it resident) until V8's memory reducer shrank it 30 s or more later, or
 * never while nothing collected: 102–114 MB RSS idle, against 91–96 MB with a 1 MB young generation
 * (docs/bench.md, "The idle daemon's memory"). Long-lived objects gain nothing from a large young
 * generation (they are copied out of it either way), so cli.ts sets the growth factor to 1 before
 * it loads the program (startupHeap), and every command then runs with V8's own factor
 * (endStartupHeap, commander's preAction hook): under load the young generation still grows to the
 * same largest size, within the first collections of a batch.
 *
 * That is also why the lean policy no longer sets `--semi-space-growth-factor=1` (it used to keep
 * the young generation "at the size it has when the command starts"): with the imports no longer
 * growing it, that size is 1 MB, and a batch run in a 1 MB young generation cost 12–14 % more CPU
 * per order (scale bench side by side, 2,000 and 20,000 rows, load 17–24) for 16–30 MB less peak
 * RSS. Before, the imports had already taken it to its largest, so the flag held it there: batches
 * now run with the same young generation as before.
 */
import { setFlagsFromString } from 'node:v8';

export const LEAN_HEAP_FLAGS = ['--heap-growing-percent=25'] as const;

export type HeapPolicy = 'lean' | 'throughput';

/** V8's own young generation growth factor (`node --v8-options`: --semi-space-growth-factor=2). */
const V8_SEMI_SPACE_GROWTH_FACTOR = 2;

/** While the program's modules load: the young generation keeps its initial size (see the top). Called by cli.ts before it imports the program. */
export function startupHeap(): void {
  setFlagsFromString('--semi-space-growth-factor=1');
}

/** The modules are loaded: V8's own growth factor again, for every command. */
export function endStartupHeap(): void {
  setFlagsFromString(`--semi-space-growth-factor=${V8_SEMI_SPACE_GROWTH_FACTOR}`);
}

/** Applies the policy (TOPUP_HEAP, validated in config/config.ts) to this process; called once by the commands that run batches. */
export function applyHeapPolicy(policy: HeapPolicy): void {
  if (policy === 'lean') for (const flag of LEAN_HEAP_FLAGS) setFlagsFromString(flag);
}
