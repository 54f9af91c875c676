import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliEnv, csv, inProcessSandbox, runCli, tempHome, TEST_KEY } from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';
import { judge, type Ledger } from '../../torture/lib.js';

releaseAfterEach();

const batch = (n: number) => csv([['pid', 'userId'], ...Array.from({ length: n }, (_, i) => ['PUBG-60', `7${String(1_000_000 + i)}`])]);

describe('limits learned from 429s (issue 22 item 6), the real CLI against a sandbox enforcing less than the spec', () => {
  it('TOPUP_RATE_LIMITS not given, the API allows 5 calls a second: a 40-row batch gets few 429s, the learned limit is stored and `topup doctor` shows it', async () => {
    const home = tempHome();
    const sb = await inProcessSandbox({ rateLimits: [{ limit: 5, windowMs: 1_000 }], fulfilment: { processingShare: 0, processingMs: [0, 0], failShare: 0 } });
    home.drop('learn.csv', batch(40));
    const env = cliEnv(home, sb); // no TOPUP_RATE_LIMITS: the gate starts from 40/1s,200/1m and learns
    const r = await runCli(['daemon', '--once'], env, { timeoutMs: 120_000 });
    expect(r.code, r.stderr).toBe(0);
    const v = judge(join(home.outbox, 'learn.result.csv'), 40, sb.admin.ledger() as unknown as Ledger);
    expect(v).toMatchObject({ resultRows: 40, doubleCharges: 0, rowsWithoutResult: 0, mismatches: 0 });
    // Without learning the gate bursts at 40/s into every second's budget of 5: a 429 (or more) each second.
    const refused = sb.admin.rateStats().rateLimited;
    expect(refused).toBeGreaterThanOrEqual(1);
    expect(refused).toBeLessThanOrEqual(3);
    const doctor = await runCli(['doctor', '--json'], env);
    const check = (JSON.parse(doctor.stdout) as { checks: { name: string; detail: string }[] }).checks.find((c) => c.name === 'rate limits');
    // The count in our log at the 429 less one: 4 when the API's 5 fell in one of our seconds; 5
    // when one of the calls our log puts in that second reached the API after it (the slow start
    // spaces calls by their answers, and on a loaded machine admission and arrival drift apart).
    expect(check?.detail).toMatch(/^[45]\/1s,200\/1m, learned from 429 at .*[45]\/1s \(was 40\/1s/);
  }, 180_000);

  it('TOPUP_RATE_LIMITS given: kept as given, nothing learned', async () => {
    const home = tempHome();
    const sb = await inProcessSandbox({});
    const doctor = await runCli(['doctor', '--json'], cliEnv(home, sb, { TOPUP_RATE_LIMITS: '40/1s,200/1m' }));
    const check = (JSON.parse(doctor.stdout) as { checks: { name: string; detail: string }[] }).checks.find((c) => c.name === 'rate limits');
    expect(check?.detail).toBe('40/1s,200/1m, given in TOPUP_RATE_LIMITS (kept; not learned)');
  }, 60_000);
  it('rate_limits of an account in accounts.toml: doctor names that account\'s rate_limits, not TOPUP_RATE_LIMITS', async () => {
    // A new-user trial read "10/1s,80/1m, given in TOPUP_RATE_LIMITS" with no such setting anywhere.
    const home = tempHome();
    const sb = await inProcessSandbox({});
    mkdirSync(join(home.dir, 'keys'), { recursive: true, mode: 0o700 });
    writeFileSync(join(home.dir, 'keys', 'main.key'), TEST_KEY, { mode: 0o600 });
    writeFileSync(join(home.dir, 'accounts.toml'), `[[account]]\nname = "main"\nurl = "${sb.url}"\nkey_file = "keys/main.key"\nrate_limits = "10/1s,80/1m"\n`);
    const doctor = await runCli(['doctor', '--json'], cliEnv(home, null, { TOPUP_API_KEY: '' }));
    const check = (JSON.parse(doctor.stdout) as { checks: { name: string; detail: string }[] }).checks.find((c) => c.name.startsWith('rate limits'));
    expect(check?.detail, doctor.stdout + doctor.stderr).toBe('10/1s,80/1m, given in accounts.toml: account "main": rate_limits (kept; not learned)');
  }, 60_000);
});
