/**
 * Trial s34, defect 6: `topup status` counted as `sent` the rows whose send the supplier turned
 * away plainly (maintenance: nothing created), so a cancelled batch read `sent 2` while the
 * cancel said "2 rows skipped (never sent)". Real CLI, real daemon, real sandbox, temp home.
 */
import { describe, expect, it } from 'vitest';
import { cliEnv, inProcessSandbox, runCli, startDaemon, tempHome, waitFor } from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';

releaseAfterEach();

describe('topup status: sent counts sends that may have made an order, not plain refusals (trial s34, 6)', () => {
  it('rows refused for maintenance and then cancelled are not counted as sent', async () => {
    const home = tempHome();
    const sb = await inProcessSandbox();
    const env = cliEnv(home, sb);
    sb.admin.setFaults({ maintenance: { code: 'MAINTENANCE' } });
    home.drop('m.csv', 'pid,userId,trxid\nPUBG-60,5123450101,M-1\nPUBG-60,5123450102,M-2\n');
    const daemon = startDaemon(env);
    try {
      const batch = await waitFor('a refused send', async () => {
        const list = JSON.parse((await runCli(['status', '--json'], env)).stdout);
        const id = list.batches?.[0]?.id ?? list[0]?.id;
        if (!id) return undefined;
        const one = JSON.parse((await runCli(['status', id, '--json'], env)).stdout);
        return one.rows.some((r: any) => r.attempts > 0) ? (id as string) : undefined;
      }, 60_000, 300);
      expect(sb.admin.ledger().orders).toHaveLength(0);
      const cancel = await runCli(['cancel', batch], env);
      expect(cancel.code, cancel.stdout + cancel.stderr).toBe(0);
      expect(cancel.stdout).toMatch(/2 rows skipped \(never sent\)/);
      const one = JSON.parse((await runCli(['status', batch, '--json'], env)).stdout);
      expect(one.batch).toMatchObject({ rows: 2, sent: 0, counts: { skipped: 2 } });
      const text = await runCli(['status', batch], env);
      expect(text.stdout).toMatch(/; sent 0;/);
    } finally {
      await daemon.stop();
    }
  }, 400000);
});
