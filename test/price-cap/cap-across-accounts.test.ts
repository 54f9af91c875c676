/**
 * Trial s35 M1: a row's price cap (`maxPriceUsd`, `Harga Maks`) was judged against the first
 * account's price before routing, so a row another account sells under the cap was refused (a lost
 * sale): PUBG-60 is 0.92 at `main`, 0.80 at `second`; a cap of 0.90 ended `invalid`. A row is
 * refused for its cap only when no account it may be placed on sells within it; a row pinned to an
 * account is judged against that account; routing (every rule) never places a capped row on an
 * account above its cap, and failover never moves it to one. Two real sandboxes, the real CLI.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { csv, readResult, releaseAll, runCli, startDaemon } from '../e2e/harness.js';
import { twoAccountHome } from '../e2e/accounts.js';

afterEach(async () => {
  await releaseAll();
});

const FILE = csv([
  ['pid', 'userId', 'trxid', 'Harga Maks', 'account'],
  ['PUBG-60', '5200000101', 'CAP-1', '0.90', ''], // second sells it at 0.80: placed there
  ['PUBG-60', '5200000102', 'CAP-2', '0.90', 'main'], // pinned to main, which asks 0.92: refused, naming main
  ['PUBG-60', '5200000103', 'CAP-3', '0.70', ''], // no account sells within 0.70
  ['PUBG-325', '5200000104', 'CAP-4', '4.80', ''], // main 4.55, second 5.00: main
]);

describe('a price cap is judged per account', () => {
  for (const routing of ['cheapest', 'priority', 'spread']) {
    it(`routing ${routing}: validate and submit place a capped row on an account within its cap, refuse it only when none is`, async () => {
      const t = await twoAccountHome({ routing });
      const file = join(t.home.dir, 'cap.csv');
      writeFileSync(file, FILE);

      const v = await runCli(['validate', file, '--json'], t.env, { timeoutMs: 60_000 });
      const q = JSON.parse(v.stdout) as { problems: { line: number; column: string; problem: string }[]; byPack: { account: string; pid: string; rows: number }[] };
      expect(q.problems.map((p) => p.line)).toEqual([3, 4]);
      expect(q.problems.find((p) => p.line === 3)!.problem).toMatch(/main.*0\.92.*0\.9\b/);
      expect(q.problems.find((p) => p.line === 4)!.problem).toMatch(/0\.8\b.*0\.7\b/);
      expect(q.byPack.map((p) => [p.account, p.pid, p.rows])).toEqual([['main', 'PUBG-325', 1], ['second', 'B-PUBG-60', 1]]);

      await runCli(['submit', file, '--json'], t.env, { timeoutMs: 120_000 });
      const rows = readResult(t.home, 'cap');
      expect(rows.map((r) => [r.trxid, r.status])).toEqual([['CAP-1', 'completed'], ['CAP-2', 'invalid'], ['CAP-3', 'invalid'], ['CAP-4', 'completed']]);
      expect(t.second.admin.ledger().orders.map((o) => [o.trxid, o.pid])).toEqual([['CAP-1', 'B-PUBG-60']]);
      expect(t.main.admin.ledger().orders.map((o) => [o.trxid, o.pid])).toEqual([['CAP-4', 'PUBG-325']]);
    }, 180_000);
  }

  it('failover never moves a capped row to an account above its cap: it waits for its own account', async () => {
    const t = await twoAccountHome();
    const toml = join(t.home.dir, 'accounts.toml');
    writeFileSync(toml, `max_queue_delay = "1s"\n${readFileSync(toml, 'utf8')}`);
    const env = { ...t.env, TOPUP_POLL_INTERVAL_MS: '200' };
    const daemon = startDaemon(env);
    try {
      // second (the cheaper) in maintenance before anything reaches it.
      t.second.admin.setFaults({ maintenance: { code: 'MAINTENANCE' } });
      t.home.drop('fo.csv', csv([
        ['pid', 'userId', 'trxid', 'maxPriceUsd'],
        ['PUBG-60', '5200000111', 'FO-1', '0.90'], // main asks 0.92: must not move there
        ['PUBG-60', '5200000112', 'FO-2', ''], // no cap: moves to main after max_queue_delay
      ]));
      await expect.poll(() => t.main.admin.ledger().orders.map((o) => String(o.trxid)), { timeout: 60_000, interval: 200 }).toEqual(['FO-2-main']);
      // Well past the grace and several move rounds (every 5 s): the capped row is still on second, unsent.
      await new Promise((r) => setTimeout(r, 12_000));
      expect(t.main.admin.ledger().orders.map((o) => String(o.trxid))).toEqual(['FO-2-main']);
      const db = new Database(join(t.home.dir, 'jobs', 'topup.db'), { readonly: true });
      try {
        expect(db.prepare("SELECT account, state, trxid FROM rows WHERE trxid LIKE 'FO-1%'").all()).toEqual([{ account: 'second', state: 'pending', trxid: 'FO-1' }]);
      } finally {
        db.close();
      }
      t.second.admin.setFaults({ maintenance: null });
      // The moved row keeps its own trxid; the one sent is sentTrxid (outbox/results.ts).
      await expect.poll(() => { try { return readResult(t.home, 'fo').map((r) => [r.trxid, r.status, r.account, r.sentTrxid]); } catch { return []; } }, { timeout: 90_000, interval: 300 })
        .toEqual([['FO-1', 'completed', 'second', 'FO-1'], ['FO-2', 'completed', 'main', 'FO-2-main']]);
      expect(t.second.admin.ledger().orders.map((o) => String(o.trxid))).toEqual(['FO-1']);
    } finally {
      await daemon.stop();
    }
  }, 180_000);
});
