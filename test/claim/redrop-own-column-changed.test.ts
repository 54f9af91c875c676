/**
 * Adversarial review (adv2): since "repeats tell customers apart" (7544dc8), a row repeats an
 * earlier purchase only when the reseller's own columns both files share are equal too. That rule
 * is applied to rows WITH a player as well, where the player already tells customers apart. Own
 * columns that change between two saves of one file (a running row number "No" that shifts
 * when a row is inserted; a "Status"/"Note" column filled in after delivery; a Date column that
 * Excel rewrites in the locale's format when it re-saves the CSV) then make every row of
 * the edited re-drop a "new purchase": the same player, pack and quantity bought twice.
 *
 * Expected (money-safe, and what issue 21 asks: "the morning file's edited re-drop is still
 * skipped whole"): the rows bought this morning are skipped; only the inserted row is bought.
 */
import { describe, expect, it } from 'vitest';
import { cliEnv, inProcessSandbox, readResult, runCli, semi, tempHome } from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';

releaseAfterEach();

describe('adv2: an edited re-drop whose own columns changed', () => {
  it('a row inserted at the top of a file with a row-number column: the morning rows are not bought again', async () => {
    const home = tempHome();
    const sb = await inProcessSandbox();
    const env = cliEnv(home, sb);
    home.drop('day.csv', semi([['No', 'pid', 'userId'], ['1', 'PUBG-60', '5123456701'], ['2', 'PUBG-60', '5123456702']]));
    expect((await runCli(['daemon', '--once'], env)).code).toBe(0);
    expect(sb.admin.ledger().orders).toHaveLength(2);

    // The reseller adds a late order at the top; Excel renumbers the "No" column.
    home.drop('day-v2.csv', semi([['No', 'pid', 'userId'], ['1', 'PUBG-60', '5123456799'], ['2', 'PUBG-60', '5123456701'], ['3', 'PUBG-60', '5123456702']]));
    expect((await runCli(['daemon', '--once'], env)).code).toBe(0);
    expect(readResult(home, 'day-v2').map((r) => r.status)).toEqual(['completed', 'skipped', 'skipped']);
    expect(sb.admin.ledger().orders).toHaveLength(3);
  });

  it('a Status column filled in after delivery: the re-drop of the same players is not bought again', async () => {
    const home = tempHome();
    const sb = await inProcessSandbox();
    const env = cliEnv(home, sb);
    home.drop('s.csv', semi([['pid', 'userId', 'Status'], ['PUBG-60', '5123456711', ''], ['PUBG-60', '5123456712', '']]));
    expect((await runCli(['daemon', '--once'], env)).code).toBe(0);
    home.drop('s-v2.csv', semi([['pid', 'userId', 'Status'], ['PUBG-60', '5123456711', 'delivered'], ['PUBG-60', '5123456712', 'delivered']]));
    expect((await runCli(['daemon', '--once'], env)).code).toBe(0);
    // The file's own Status column is kept; ours is named result_status (outbox/results.ts CLASH_PREFIX).
    expect(readResult(home, 's-v2').map((r) => r.result_status)).toEqual(['skipped', 'skipped']);
    expect(sb.admin.ledger().orders).toHaveLength(2);
  });

  it('Excel re-saved the file (its Date column now in the locale\'s format) and a column was added: nothing bought again', async () => {
    const home = tempHome();
    const sb = await inProcessSandbox();
    const env = cliEnv(home, sb);
    home.drop('x.csv', semi([['Date', 'pid', 'userId'], ['2026-11-26 09:14', 'PUBG-60', '5123456721'], ['2026-11-26 09:20', 'PUBG-60', '5123456722']]));
    expect((await runCli(['daemon', '--once'], env)).code).toBe(0);
    // Opened in Excel (German locale), a column added, saved as CSV: Excel rewrote every date.
    home.drop('x-v2.csv', semi([['Date', 'pid', 'userId', 'checked'], ['26.11.2026 09:14', 'PUBG-60', '5123456721', 'x'], ['26.11.2026 09:20', 'PUBG-60', '5123456722', 'x']]));
    expect((await runCli(['daemon', '--once'], env)).code).toBe(0);
    expect(readResult(home, 'x-v2').map((r) => r.status)).toEqual(['skipped', 'skipped']);
    expect(sb.admin.ledger().orders).toHaveLength(2);
  });
});
