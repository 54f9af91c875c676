/**
 * Adversarial review (adv4): dates in a key/card row's own columns are compared by their parts
 * (claim/repeats.ts readDate), but a time written with AM/PM (`11/26/2026 9:14 PM`, how a POS or a
 * US-locale sheet exports it) is not read as a date: it is compared as text. Excel, re-saving the
 * CSV, writes the same instant in its default 24-hour form (`11/26/2026 21:14`); the texts differ,
 * the rows disagree, and every card of the re-saved file is bought a second time.
 *
 * Expected (money-safe): the Excel-re-saved copy of a file already bought buys nothing again.
 */
import { describe, expect, it } from 'vitest';
import { cliEnv, inProcessSandbox, readResult, runCli, semi, tempHome } from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';

releaseAfterEach();

describe('adv4: a timestamp written with AM/PM, re-saved by Excel in 24-hour form', () => {
  it('the cards are not bought again', async () => {
    const home = tempHome();
    const sb = await inProcessSandbox();
    const env = cliEnv(home, sb);
    home.drop('cards.csv', semi([['pid', 'quantity', 'Customer', 'Ordered at'], ['STEAM-5', '1', 'alice', '11/26/2026 9:14 PM'], ['STEAM-5', '1', 'bob', '11/26/2026 9:20 PM']]));
    expect((await runCli(['daemon', '--once'], env)).code).toBe(0);
    expect(sb.admin.ledger().orders).toHaveLength(2);

    // Opened in Excel (en-US), a column ticked, saved as CSV: the timestamps as Excel shows them.
    home.drop('cards-v2.csv', semi([['pid', 'quantity', 'Customer', 'Ordered at', 'sent'], ['STEAM-5', '1', 'alice', '11/26/2026 21:14', 'x'], ['STEAM-5', '1', 'bob', '11/26/2026 21:20', 'x']]));
    expect((await runCli(['daemon', '--once'], env)).code).toBe(0);
    expect(readResult(home, 'cards-v2').map((r) => r.status)).toEqual(['skipped', 'skipped']);
    expect(sb.admin.ledger().orders).toHaveLength(2);
  });
});
