/**
 * Intake alone: a catalog of 1,000 packs and an order file of 100,000 rows (and one of 20,000,
 * to show that memory does not grow with the file), each parsed and validated in a fresh child
 * process running bench/intake-worker.mjs against the built code.
 */
import { join } from 'node:path';
import { BENCH_DIR, removeDir, startChild, tempDir, waitForOutput } from './lib.js';
import { writeIntakeFiles } from './workload.js';

export interface IntakeRun {
  rows: number;
  fileMb: number;
  valid: number;
  invalid: number;
  seconds: number;
  rowsPerSec: number;
  peakRssMb: number;
  before: { rssMb: number; heapMb: number };
  checkpoints: { rows: number; rssMb: number; heapMb: number }[];
}

async function runWorker(csvPath: string, catalogPath: string): Promise<Omit<IntakeRun, 'fileMb'>> {
  const child = startChild(process.execPath, [join(BENCH_DIR, 'intake-worker.mjs'), csvPath, catalogPath]);
  const m = await waitForOutput(child, /^(\{.*\})\s*$/m, 300_000);
  return JSON.parse(m[1]!);
}

export async function measureIntake(opts: { rows: number[]; products: number; seed: number; repeats: number }): Promise<IntakeRun[]> {
  const dir = tempDir('topup-bench-intake-');
  try {
    const out: IntakeRun[] = [];
    for (const rows of opts.rows) {
      const files = await writeIntakeFiles(dir, rows, opts.products, opts.seed);
      // Best of `repeats` for the speed (the machine is shared); the peak RSS of that same run.
      let best: Omit<IntakeRun, 'fileMb'> | undefined;
      for (let i = 0; i < opts.repeats; i++) {
        const r = await runWorker(files.csvPath, files.catalogPath);
        if (!best || r.rowsPerSec > best.rowsPerSec) best = r;
      }
      out.push({ ...best!, fileMb: Math.round((files.bytes / 1048576) * 10) / 10 });
    }
    return out;
  } finally {
    removeDir(dir);
  }
}
