/**
 * Trial s34, defect 8: a supplier that changed how it spells order ids (the sandbox's answers set
 * to real-world and back: the ledger holds `1000003` or a 19-digit id, the history now lists
 * `ORD1000003`) had reconcile list every such order twice, as `missing-in-history` and as
 * `not-in-ledger`, although both carry the same trxid. Now an order whose id is not in the history
 * is paired by its trxid (on the same account), compared as usual, and the line says the ids differ.
 * A real sandbox, real rows placed by the real CLI, the report job run on the same home.
 */
import { join } from 'node:path';
import { readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { TEST_KEY, cliEnv, csv, inProcessSandbox, readResult, runCli, tempHome } from '../e2e/harness.js';
import { loadConfig } from '../../src/config/config.js';
import { silentLogger } from '../../src/kernel/log.js';
import { openRuntime } from '../../src/runtime.js';
import { runReconcile } from '../../src/reports/reconcile.js';
import { parse } from 'csv-parse/sync';

describe('reconcile when the supplier spells order ids another way', () => {
  it('orders placed under real-world ids, listed now as ORD…: paired by trxid, one line each saying the ids differ, no missing or unknown order', async () => {
    const home = tempHome('reconcile-ids-');
    const sb = await inProcessSandbox();
    try {
      sb.admin.setAnswers({ style: 'real-world' });
      const env = cliEnv(home, sb);
      const file = join(home.dir, 'ids.csv');
      writeFileSync(file, csv([['pid', 'userId', 'trxid'], ...Array.from({ length: 6 }, (_, i) => ['PUBG-60', `51234500${10 + i}`, `IDS-${i + 1}`])]));
      const r = await runCli(['submit', file, '--json'], env, { timeoutMs: 120_000 });
      expect(r.code, r.stderr.slice(-1500)).toBe(0);
      const placed = readResult(home, 'ids');
      expect(placed.every((x) => /^\d+$/.test(String(x.orderId))), JSON.stringify(placed.map((x) => x.orderId))).toBe(true);
      sb.admin.setAnswers({ style: 'spec' });
      const rt = openRuntime(loadConfig({ TOPUP_HOME: home.dir, TOPUP_API_KEY: TEST_KEY, TOPUP_API_URL: sb.url }), silentLogger(), sb.url);
      let text: string;
      try {
        const rep = await runReconcile(rt, { now: Date.now() });
        text = readFileSync(rep.file, 'utf8');
      } finally {
        await rt.close();
      }
      const lines = (parse(text) as string[][]).slice(1);
      const ours = lines.filter((l) => String(l[2]).startsWith('IDS-'));
      expect(ours.filter((l) => l[0] === 'missing-in-history' || l[0] === 'not-in-ledger'), text).toEqual([]);
      const paired = ours.filter((l) => l[0] === 'id-differs');
      expect(paired.map((l) => l[2]).sort(), text).toEqual(['IDS-1', 'IDS-2', 'IDS-3', 'IDS-4', 'IDS-5', 'IDS-6']);
      for (const l of paired) {
        const row = placed.find((x) => x.trxid === l[2])!;
        expect(l[1]).toBe(String(row.orderId));
        expect(l[10]).toMatch(new RegExp(`the history lists this order as ORD\\d+, the ledger as ${row.orderId}: paired by trxid`));
      }
    } finally {
      await sb.close();
    }
  }, 180_000);
});
