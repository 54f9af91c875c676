/**
 * Issue 22, adversarial review round 2: a single-account home that gains accounts.toml.
 *
 * Before the file, a row's purchase fingerprint (claim/repeats.ts, the 24 h repeat window for rows
 * without their own trxid) names the pack by its pid (placement.ts packKey, one account); with the
 * file it names it by `pack:<slug>\0<name>`. The fingerprints stored before the file never match
 * the ones computed after it, so an edited re-drop of a file bought an hour before the reseller
 * added a second account is not a repeat: it is bought again (on the cheaper new account).
 * Real CLI, two real sandboxes.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliEnv, csv, inProcessSandbox, readResult, runCli, tempHome, TEST_KEY } from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';
import { catalogB } from '../accounts/two-sandboxes.js';

releaseAfterEach();

describe('a home that gains accounts.toml', () => {
  it('an edited re-drop of a purchase made before the file existed is still a repeat (not bought again on the new account)', async () => {
    const home = tempHome('adv6-fp-');
    const a = await inProcessSandbox();
    const catB = join(home.dir, 'catalog-b.json');
    writeFileSync(catB, JSON.stringify(catalogB()));
    const b = await inProcessSandbox({ catalogFile: catB });

    // Yesterday's home: one account, the environment's.
    const single = cliEnv(home, a);
    const f1 = join(home.dir, 'evening.csv');
    writeFileSync(f1, csv([['pid', 'userId'], ['PUBG-60', '5123456701']]));
    const r1 = await runCli(['submit', f1, '--json'], single, { timeoutMs: 90_000 });
    expect(r1.code, r1.stderr.slice(-1500)).toBe(0);
    expect(readResult(home, 'evening').map((r) => r.status)).toEqual(['completed']);
    expect(a.admin.ledger().orders).toHaveLength(1);

    // The reseller adds a second supplier, keeping the first under the name `default` as docs/accounts.md advises.
    mkdirSync(join(home.dir, 'keys'), { recursive: true, mode: 0o700 });
    writeFileSync(join(home.dir, 'keys', 'a.key'), TEST_KEY, { mode: 0o600 });
    writeFileSync(join(home.dir, 'keys', 'b.key'), TEST_KEY, { mode: 0o600 });
    writeFileSync(join(home.dir, 'accounts.toml'), `[[account]]\nname = "default"\nurl = "${a.url}"\nkey_file = "keys/a.key"\n\n[[account]]\nname = "second"\nurl = "${b.url}"\nkey_file = "keys/b.key"\n`);
    const two = cliEnv(home, null, { TOPUP_API_KEY: '' });

    // The same evening's file, edited (one more customer): the first row is the purchase made an hour ago.
    const f2 = join(home.dir, 'evening-edited.csv');
    writeFileSync(f2, csv([['pid', 'userId'], ['PUBG-60', '5123456701'], ['PUBG-60', '5123456702']]));
    const r2 = await runCli(['submit', f2, '--json'], two, { timeoutMs: 90_000 });
    const rows = readResult(home, 'evening-edited');
    expect(rows.map((r) => r.status), r2.stderr.slice(-1500)).toEqual(['skipped', 'completed']);
    // Player 5123456701 bought PUBG-60 once across both ledgers.
    const bought = [...a.admin.ledger().orders, ...b.admin.ledger().orders].filter((o) => String(o.userId) === '5123456701');
    expect(bought).toHaveLength(1);
  }, 180_000);
});
