/**
 * How long a file takes from the inbox to the API: a one-row file renamed into the inbox of a
 * running daemon (default settings, built-in timings), timed until the sandbox holds its order.
 * Also, optionally, a file written in place (opened in the inbox, written, closed), which must
 * wait out TOPUP_SETTLE_MS of quiet (intake/watch.ts).
 *
 *   npx tsx bench/inbox-latency.ts [--runs N] [--in-place] [--cold]
 *
 * Needs dist/ built (npm run build). Prints one figure per run and the median.
 */
import { writeFileSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { cliEnv, inProcessSandbox, releaseAll, startDaemon, tempHome, waitFor } from '../test/e2e/harness.js';

const argv = process.argv.slice(2);
const runs = Number(argv[argv.indexOf('--runs') + 1] ?? 5) || 5;
const inPlace = argv.includes('--in-place');
/** Drop the file as soon as the daemon says it started (its first catalog read still to come). */
const cold = argv.includes('--cold');

async function once(i: number): Promise<number> {
  const home = tempHome('topup-latency-');
  const sb = await inProcessSandbox();
  const env = cliEnv(home, sb);
  delete env.TOPUP_SETTLE_MS; // the default, as a reseller runs it
  const daemon = startDaemon(env);
  await waitFor('daemon start', () => daemon.output().includes('topup daemon started'));
  // Let the daemon's first catalog read and its start-up work pass, as on a daemon that has been running.
  if (!cold) await new Promise((r) => setTimeout(r, 1500));
  const body = `pid,userId\nPUBG-60,51234${String(10000 + i)}\n`;
  const dest = join(home.inbox, `one-${i}.csv`);
  const started = performance.now();
  if (inPlace) writeFileSync(dest, body);
  else {
    const tmp = join(home.dir, `.one-${i}.csv.writing`);
    writeFileSync(tmp, body);
    renameSync(tmp, dest);
  }
  await waitFor('the order at the API', () => sb.admin.ledger().orders.length >= 1, 60_000, 10);
  const ms = performance.now() - started;
  await daemon.stop();
  await releaseAll();
  return ms;
}

const figures: number[] = [];
for (let i = 0; i < runs; i++) {
  const ms = await once(i);
  figures.push(ms);
  process.stdout.write(`run ${i + 1}: ${(ms / 1000).toFixed(2)} s\n`);
}
figures.sort((a, b) => a - b);
process.stdout.write(`${inPlace ? 'written in place' : 'renamed in'}${cold ? ', cold' : ''}: median ${(figures[Math.floor(figures.length / 2)]! / 1000).toFixed(2)} s over ${runs} runs (min ${(figures[0]! / 1000).toFixed(2)}, max ${(figures[figures.length - 1]! / 1000).toFixed(2)})\n`);
