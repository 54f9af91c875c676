/**
 * Two `topup submit` runs started together on edited copies of one file whose rows carry their OWN
 * trxids (at the end of the file, after filler, so both validate before either opens). The unique
 * trxid index keeps the money safe; this checks what the second run does with its constraint
 * error: every input row must still get one result row, and each purchase is bought once.
 * Real CLI (dist/), in-process sandbox.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { cliEnv, csv, inProcessSandbox, listOutbox, releaseAll, runCli, tempHome } from '../e2e/harness.js';

afterEach(releaseAll);

it('both runs end, each purchase once, each file with a full result', async () => {
  const sb = await inProcessSandbox();
  const home = tempHome();
  const buys = [1, 2, 3, 4, 5].map((i) => ['PUBG-60', `512345670${i}`, `SHOP-${i}`]);
  const filler = Array.from({ length: 20_000 }, (_, i) => ['NOPE-1', String(7_000_000_000 + i), '']);
  const a = join(home.dir, 'a.csv');
  const b = join(home.dir, 'b.csv');
  writeFileSync(a, csv([['pid', 'userId', 'trxid'], ...filler, ...buys]));
  writeFileSync(b, csv([['pid', 'userId', 'trxid', 'note'], ...filler.map((r) => [...r, '']), ...buys.map((r) => [...r, 'edited'])]));
  const env = cliEnv(home, sb);
  const t0 = Date.now();
  const [ra, rb] = await Promise.all([runCli(['submit', a], env, { timeoutMs: 180_000 }), runCli(['submit', b], env, { timeoutMs: 180_000 })]);
  console.log(`a: exit ${ra.code} ${ra.stderr.slice(-300)}\nb: exit ${rb.code} ${rb.stderr.slice(-300)}\n${Date.now() - t0} ms; outbox ${listOutbox(home).join(', ')}`);
  expect(sb.admin.ledger().orders).toHaveLength(5);
  expect(listOutbox(home).filter((f) => f.endsWith('.result.csv'))).toHaveLength(2);
});
