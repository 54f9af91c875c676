/**
 * Trial D6 (issue 30's leftovers): a file whose trxid column is headed by one of the spellings the
 * intake reads (`ID Transaksi`, `Transaction ID`, `Trx ID` …) got a second, appended `trxid`
 * column in its result, filled only for the rows stored for sending: its invalid rows showed an
 * empty trxid there although the file gave them one. Every row's result must carry the trxid the
 * file gave it (or the one derived for it), in the column the file named, whatever its spelling,
 * as docs/results.md says ("any spelling the intake accepts: filled in place").
 *
 * Real parts: the daemon (dist/cli.js, `daemon --once`) against the in-process sandbox.
 */
import { describe, expect, it } from 'vitest';
import { cliEnv, csv, inProcessSandbox, readResult, runCli, tempHome } from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';

releaseAfterEach();

describe('D6: the trxid column under another spelling is filled in place for every row', () => {
  for (const heading of ['ID Transaksi', 'Transaction ID', 'No Trx']) {
    it(`"${heading}": valid and invalid rows each carry their trxid there, and no second trxid column is added`, async () => {
      const home = tempHome('topup-trxid-alias-');
      const sb = await inProcessSandbox();
      home.drop('pesanan.csv', csv([
        ['pid', 'userId', heading, 'Pelanggan'],
        ['PUBG-60', '5123456789', 'TOKO-1', 'Budi'], // valid, its own trxid
        ['PUBG-60', '5123456790', '', 'Sari'], // valid, a derived trxid
        ['NOPE-1', '5123456791', 'TOKO-3', 'Andi'], // invalid: no such pack
        ['PUBG-60', 'abc', 'TOKO-4', 'Dewi'], // invalid: not a player id
        ['PUBG-60', '', 'TOKO-5', 'Eko'], // invalid: no player id
      ]));
      const r = await runCli(['daemon', '--once'], cliEnv(home, sb));
      expect(r.code, r.stdout.slice(-2000) + r.stderr.slice(-2000)).toBe(0);

      const rows = readResult(home, 'pesanan');
      expect(rows.map((x) => x.status)).toEqual(['completed', 'completed', 'invalid', 'invalid', 'invalid']);
      // The file's own trxid on every row that had one, valid or not; the derived one where it gave none.
      expect(rows.map((x) => x[heading])).toEqual(['TOKO-1', expect.stringMatching(/^tu[0-9a-f]{30}$/), 'TOKO-3', 'TOKO-4', 'TOKO-5']);
      // One trxid column: the file's, not a second one beside it (blank for the rows never stored for sending).
      expect(Object.keys(rows[0]!)).not.toContain('trxid');
      expect(Object.keys(rows[0]!).slice(0, 6)).toEqual(['pid', 'userId', heading, 'Pelanggan', 'orderId', 'status']);
      // The supplier saw the same trxids the result shows.
      const sent = sb.admin.ledger().entries.filter((e) => e.kind !== 'topup').map((e) => e.trxid).sort();
      expect(sent).toEqual([rows[0]![heading], rows[1]![heading]].sort());
    }, 60_000);
  }
});
