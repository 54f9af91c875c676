/**
 * The false-positive cost of issue 20's "replay on the first send is another purchase" rule: the
 * reseller's database is lost (a new machine, a deleted home) and the SAME file is submitted again
 * from a fresh home against the same account. Every derived trxid is the same, so nothing is bought
 * again; what does each kind of row end as? Real CLI (dist/), in-process sandbox, spec and
 * real-world answers. This test PRINTS the outcome per row and asserts only money safety (nothing
 * bought twice); the cost is read from the printed table (see the report).
 */
import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { cliEnv, inProcessSandbox, readResult, releaseAll, ROOT, runCli, tempHome } from '../e2e/harness.js';

afterEach(releaseAll);

describe('the same file submitted again after the database was lost', () => {
  for (const answers of ['spec', 'real-world'] as const) {
    it(`${answers} answers: nothing bought twice; which rows complete and which go to review`, async () => {
      const sb = await inProcessSandbox({ answers });
      const first = tempHome();
      const file = join(first.dir, 'mixed.csv');
      copyFileSync(join(ROOT, 'examples', 'mixed.csv'), file);
      const r1 = await runCli(['submit', file], cliEnv(first, sb), { timeoutMs: 120_000 });
      expect(r1.code, r1.stderr + r1.stdout).toBe(0);
      const before = sb.admin.ledger().orders.length;
      const firstStatus = readResult(first, 'mixed').map((r) => r.status);

      const second = tempHome(); // the database is gone: a new home, the same account, the same file
      const again = join(second.dir, 'mixed.csv');
      copyFileSync(join(ROOT, 'examples', 'mixed.csv'), again);
      const r2 = await runCli(['submit', again], cliEnv(second, sb), { timeoutMs: 120_000 });
      const rows = readResult(second, 'mixed');
      const table = rows.map((r, i) => `${(r.pid || r.slug || '').padEnd(18)} first: ${firstStatus[i]!.padEnd(10)} again: ${(r.status ?? '').padEnd(10)} ${(r.error ?? '').slice(0, 140)}`);
      console.log(`\n[${answers}] exit ${r2.code}\n${table.join('\n')}`);
      if (process.env.ADV_DUMP) {
        const { default: Database } = await import('better-sqlite3');
        const db = new Database(join(second.jobs, 'topup.db'), { readonly: true });
        console.log(JSON.stringify(db.prepare("SELECT idx, state, attempts, first_sent_at, order_id, error, last_answer FROM rows WHERE pack_name LIKE '%code%' OR pack_name LIKE 'Steam%'").all(), null, 1));
        db.close();
      }
      expect(sb.admin.ledger().orders.length).toBe(before); // nothing bought twice
    });
  }
});
