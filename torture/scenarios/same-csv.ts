/**
 * 9. The same CSV dropped again, and again after its database was deleted: no new order.
 */
import { join } from 'node:path';
import { readdirSync, statSync } from 'node:fs';
import { dataRows, eq0, info, judge, ledgerOf, makeBatch, readResultFile, rmDb, runOnce, type Scenario, world } from '../lib.js';

export const sameCsv: Scenario = {
  name: 'same-csv',
  title: 'The same CSV again, and after the database was deleted',
  async run(ctx) {
    const rows = ctx.quick ? 40 : 150;
    const w = await world(ctx, { sandboxArgs: ['--processing-share', '0.3', '--processing-ms', '200-800'] });
    const text = makeBatch(ctx.rand, { rows, failing: 0.1, keys: 0.2, invalid: 0.05 });
    const once = async () => {
      const r = await runOnce(w, ctx, 120_000);
      if (r.code !== 0) throw new Error(`daemon exited ${r.code}`);
    };
    w.home.drop('same.csv', text);
    await once();
    const n0 = (await ledgerOf(w.sb)).orders.length;
    w.home.drop('same.csv', text);
    await once();
    const n1 = (await ledgerOf(w.sb)).orders.length;
    rmDb(w);
    w.home.drop('same.csv', text);
    await once();
    const ledger = await ledgerOf(w.sb);
    const n2 = ledger.orders.length;
    const files = readResultFileNames(w.home.outbox);
    const last = files.at(-1)!;
    const v = judge(join(w.home.outbox, last), dataRows(text), ledger);
    const dupRows = readResultFile(join(w.home.outbox, files[1] ?? last));
    return [
      info('orders after the first run', n0),
      eq0('new orders: same CSV again', n1 - n0),
      eq0('new orders: same CSV after the database was deleted', n2 - n1),
      info('second drop reported as', [...new Set(dupRows.map((r) => r.status))].join('/')),
      eq0('third drop: results disagreeing with the ledger', v.mismatches),
      eq0('third drop: rows without a result', v.rowsWithoutResult),
    ];
  },
};

/** Result files, oldest first. */
function readResultFileNames(dir: string): string[] {
  return readdirSync(dir).filter((f) => f.endsWith('.result.csv')).sort((a, b) => statSync(join(dir, a)).mtimeMs - statSync(join(dir, b)).mtimeMs);
}
