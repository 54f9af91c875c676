/**
 * Defect 2 through a crash: a gift-card row reuses trxid SHOP-1001, which the account used
 * yesterday (Steam $5 x1, one code). `topup submit` is killed (SIGKILL) after the first send's
 * answer arrived but before it was stored (TOPUP_CRASH_AT=response-received:1), the same as a kill
 * while the first request is open. The next process resends (the row was `sending`): the replay of
 * yesterday's order arrives on a RESEND, so "a replay on the first send" no longer catches it, and
 * with real-world answers (no createdAt) nothing else does. Real CLI (dist/), in-process sandbox.
 */
import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { cliEnv, csv, inProcessSandbox, readResult, releaseAll, runCli, tempHome } from '../e2e/harness.js';

afterEach(releaseAll);

describe('a reused trxid on a card row, the first answer lost to a crash', () => {
  for (const answers of ['spec', 'real-world'] as const) {
    it(`${answers} answers: the row never completes with yesterday's order and code`, async () => {
      let offset = -26 * 3_600_000; // the sandbox's clock: yesterday
      const sb = await inProcessSandbox({ answers, now: () => Date.now() + offset, realWorld: { htmlShare: 0, lateCodesShare: 0 } });
      // Yesterday, from another home (another tool, the panel, a lost database): SHOP-1001, one $5 card.
      const other = tempHome();
      const y = join(other.dir, 'yesterday.csv');
      writeFileSync(y, csv([['pid', 'quantity', 'trxid'], ['STEAM-5', '1', 'SHOP-1001']]));
      // (Its own run may end in review with spec answers: the sandbox clock is 26 h behind this host's, see A1.)
      const manual = sb.admin.ledger().orders.length; // real-world answers start with panel orders
      await runCli(['submit', y], cliEnv(other, sb));
      expect(sb.admin.ledger().orders).toHaveLength(manual + 1);
      const oldOrder = sb.admin.ledger().orders.at(-1);
      offset = 0;

      const home = tempHome();
      const f = join(home.dir, 'today.csv');
      writeFileSync(f, csv([['pid', 'quantity', 'trxid'], ['STEAM-5', '3', 'SHOP-1001']]));
      const killed = await runCli(['submit', f], cliEnv(home, sb, { TOPUP_CRASH_AT: 'response-received:1' }));
      expect(killed.signal).toBe('SIGKILL');
      const r = await runCli(['daemon', '--once'], cliEnv(home, sb), { timeoutMs: 120_000 });
      const [row] = readResult(home, 'today');
      console.log(`[${answers}] exit ${r.code}; result: ${JSON.stringify(row)}; ledger orders: ${sb.admin.ledger().orders.length}; old order ${JSON.stringify(oldOrder).slice(0, 200)}`);
      expect(row!.status).not.toBe('completed');
    });
  }
});
