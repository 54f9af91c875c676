/**
 * A row skipped as a repeat names, in its result's trxid and orderId cells, the purchase it repeats
 * (a new-user trial: both cells were empty; only the error's words named the order, so the reseller
 * could not find it by trxid or filter the file by order id). Both kinds of repeat, with the real
 * CLI and the real sandbox's ledger:
 *  - an edited re-drop without trxids (a fingerprint repeat): the row's trxid and orderId are the
 *    earlier row's, which the sandbox's ledger holds;
 *  - a file with its own trxids dropped again after a cancel part-way (the trxid is held by a row
 *    that bought it): the orderId cell names that order.
 */
import { describe, expect, it } from 'vitest';
import { cliEnv, csv, inProcessSandbox, readResult, runCli, tempHome } from '../e2e/harness.js';

describe('a row skipped as a repeat names the purchase it repeats', () => {
  it('edited re-drop without trxids, and a re-drop with its own trxids: trxid and orderId cells are the earlier purchase\'s', async () => {
    const home = tempHome('repeat-result-');
    const sb = await inProcessSandbox();
    try {
      const env = cliEnv(home, sb);
      home.drop('shop.csv', csv([['pid', 'userId'], ['PUBG-60', '5123456789'], ['PUBG-325', '5123456790']]));
      expect((await runCli(['daemon', '--once'], env)).code).toBe(0);
      const first = readResult(home, 'shop');
      expect(first.map((r) => r.status)).toEqual(['completed', 'completed']);

      home.drop('shop-v2.csv', csv([['pid', 'userId', 'note'], ['PUBG-60', '5123456789', 'again?'], ['PUBG-325', '5123456790', ''], ['PUBG-60', '5123456799', 'new']]));
      expect((await runCli(['daemon', '--once'], env)).code).toBe(0);
      const again = readResult(home, 'shop-v2');
      expect(again.map((r) => r.status)).toEqual(['skipped', 'skipped', 'completed']);
      for (const i of [0, 1]) {
        expect(again[i]!.trxid).toBe(first[i]!.trxid);
        expect(again[i]!.orderId).toBe(first[i]!.orderId);
        expect(again[i]!.error).toContain(`order ${first[i]!.orderId}`);
      }
      const ledger = new Map(sb.admin.ledger().orders.map((o) => [String(o.trxid), String(o.orderId)]));
      expect(ledger.get(again[0]!.trxid!)).toBe(again[0]!.orderId);

      // Own trxids: bought, then the same file again (the trxid rule: the same purchase).
      const own = csv([['trxid', 'pid', 'userId'], ['INV-0101', 'PUBG-60', '5123450001']]);
      home.drop('own.csv', own);
      expect((await runCli(['daemon', '--once'], env)).code).toBe(0);
      const bought = readResult(home, 'own')[0]!;
      expect(bought.status).toBe('completed');
      home.drop('own-again.csv', csv([['trxid', 'pid', 'userId', 'note'], ['INV-0101', 'PUBG-60', '5123450001', 'again?']]));
      expect((await runCli(['daemon', '--once'], env)).code).toBe(0);
      const skipped = readResult(home, 'own-again')[0]!;
      expect(skipped.status).toBe('skipped');
      expect(skipped.trxid).toBe('INV-0101');
      expect(skipped.orderId).toBe(bought.orderId);
      expect(skipped.orderId).not.toBe('');
      expect(sb.admin.ledger().orders).toHaveLength(4);
    } finally {
      await sb.close();
      home.remove();
    }
  }, 120_000);
});
