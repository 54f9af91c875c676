/**
 * Issue 32, second adversarial review of the restore. Two accounts, `main` in maintenance, a
 * backup; a file's rows fail over and are bought on `second` as `<trxid>-second`. The backup is
 * restored, and then:
 *  - `second` is taken out of accounts.toml and the day's file dropped again: both rows were bought
 *    again on `main` (the window's mark was skipped with one account configured, and the lookup
 *    read only the accounts configured). Now the batch is held for `second` (status names it), and
 *    its rows go to review after TOPUP_RESTORE_LOOKUP_WAIT, or are settled from `second` once it
 *    is put back;
 *  - `second`'s key is revoked: the re-dropped batch waited for its lookup with no end and nothing
 *    said so. Now status and doctor name the wait and the refused key, and the rows go to review
 *    after the wait;
 * and an account taken out long before the restore holds nothing.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { csv, runCli, startDaemon, waitFor, waitForResult, type TempHome } from '../e2e/harness.js';
import { releaseAfterEach, released } from '../e2e/release.js';
import { ledgerTrxids, storedRows, twoAccounts } from '../backup/world.js';
import Database from 'better-sqlite3';

releaseAfterEach();
const FILE = csv([['pid', 'userId', 'trxid'], ['PUBG-60', '5123456001', 'RD-1'], ['PUBG-60', '5123456002', 'RD-2']]);
const OPEN = ['pending', 'sending', 'resending', 'verifying', 'searching'];

/** The rows' state and error as the store has them (error: the review's why). */
function rowsWithWhy(home: TempHome): { state: string; account: string; trxid: string | null; error: string | null }[] {
  const db = new Database(join(home.jobs, 'topup.db'), { readonly: true, fileMustExist: true });
  try {
    return db.prepare('SELECT state, account, trxid, error FROM rows ORDER BY batch_id, idx').all() as { state: string; account: string; trxid: string | null; error: string | null }[];
  } finally {
    db.close();
  }
}

async function prep() {
  const { home, a, b, env } = await twoAccounts('routing = "priority"\nmax_queue_delay = "2s"');
  a.admin.setFaults({ maintenance: { code: 'MAINTENANCE' } });
  const first = startDaemon(env);
  await waitFor('store', () => { try { readFileSync(join(home.jobs, 'topup.db')); return true; } catch { return false; } }, 30_000);
  const bk = await runCli(['backup', '--to', join(home.dir, 'backups'), '--json'], env);
  expect(bk.code, bk.stderr).toBe(0);
  home.drop('rd.csv', FILE);
  await waitForResult(home, 'rd', 60_000);
  await first.stop();
  expect(ledgerTrxids(a)).toEqual([]);
  expect(ledgerTrxids(b).sort()).toEqual(['RD-1-second', 'RD-2-second']);
  a.admin.setFaults({ maintenance: null });
  const rs = await runCli(['restore', JSON.parse(bk.stdout).path], env);
  expect(rs.code, rs.stderr).toBe(0);
  return { home, a, b, env };
}

const accountsFile = (home: TempHome): string => join(home.dir, 'accounts.toml');
function withoutSecond(home: TempHome): string {
  const t = readFileSync(accountsFile(home), 'utf8');
  writeFileSync(accountsFile(home), t.slice(0, t.indexOf('[[account]]\nname = "second"')));
  return t;
}

describe.concurrent('an account the restore lookup cannot read', () => {
  it('second taken out of accounts.toml after the restore, the file dropped again: held (status names second), then put back: settled from second, 0 bought twice', released(async () => {
    const { home, a, b, env } = await prep();
    const whole = withoutSecond(home);
    const d = startDaemon({ ...env, TOPUP_RESTORE_LOOKUP_WAIT: '10m' });
    await waitFor('up', () => /sending starts now/i.test(d.output()), 60_000);
    home.drop('rd.csv', FILE);
    const st = await waitFor('status names the wait for second', async () => {
      const s = await runCli(['status'], env);
      return /waiting for the restore lookup/.test(s.stdout) ? s.stdout : false;
    }, 60_000, 500);
    expect(st).toMatch(/account "second" is no longer in accounts\.toml/);
    expect(st).toMatch(/nothing of (it|these rows) is sent/);
    // Held: nothing sent, on main or anywhere.
    await new Promise((r) => setTimeout(r, 3000));
    expect(ledgerTrxids(a)).toEqual([]);
    expect(storedRows(home).filter((r) => r.trxid?.startsWith('RD-')).every((r) => r.state === 'pending')).toBe(true);
    await d.stop();
    // second back in the file: the next start reads it and settles the rows from it.
    writeFileSync(accountsFile(home), whole);
    const d2 = startDaemon(env);
    await waitFor('settled from second', () => {
      const rows = storedRows(home).filter((r) => r.trxid?.startsWith('RD-'));
      return rows.length === 2 && rows.every((r) => !OPEN.includes(r.state));
    }, 90_000);
    await d2.stop();
    expect(ledgerTrxids(a)).toEqual([]);
    expect(ledgerTrxids(b).sort()).toEqual(['RD-1-second', 'RD-2-second']);
    expect(storedRows(home).map((r) => [r.state, r.account, r.trxid])).toEqual([['completed', 'second', 'RD-1-second'], ['completed', 'second', 'RD-2-second']]);
  }), 240_000);

  it('second taken out, the wait over: the rows go to review naming second, never sent', released(async () => {
    const { home, a, b, env } = await prep();
    withoutSecond(home);
    const d = startDaemon({ ...env, TOPUP_RESTORE_LOOKUP_WAIT: '0' });
    await waitFor('up', () => /sending starts now/i.test(d.output()), 60_000);
    home.drop('rd.csv', FILE);
    await waitFor('rows in review', () => {
      const rows = rowsWithWhy(home);
      return rows.length === 2 && rows.every((r) => r.state === 'review');
    }, 60_000);
    await new Promise((r) => setTimeout(r, 3000));
    await d.stop();
    expect(ledgerTrxids(a)).toEqual([]);
    expect(ledgerTrxids(b).sort()).toEqual(['RD-1-second', 'RD-2-second']);
    for (const r of rowsWithWhy(home)) {
      expect(r.state).toBe('review');
      expect(r.error).toMatch(/account "second" is no longer in accounts\.toml/);
      expect(r.error).toContain(`${r.trxid}-<account>`);
    }
    const rv = await runCli(['review'], env);
    expect(rv.stdout).toMatch(/RD-1/);
  }), 240_000);

  it('second\'s key revoked after the restore: status and doctor name the wait and the 401, then the rows go to review, never sent', released(async () => {
    const { home, a, b, env } = await prep();
    writeFileSync(join(home.dir, 'keys', 'second.key'), 'revoked-key-0123456789abcdef', { mode: 0o600 });
    const d = startDaemon({ ...env, TOPUP_RESTORE_LOOKUP_WAIT: '20s' });
    await waitFor('up', () => /sending starts now/i.test(d.output()), 60_000);
    home.drop('rd.csv', FILE);
    const st = await waitFor('status names the wait', async () => {
      const s = await runCli(['status'], { ...env, TOPUP_RESTORE_LOOKUP_WAIT: '20s' });
      return /waiting for the restore lookup/.test(s.stdout) ? s.stdout : false;
    }, 60_000, 500);
    expect(st).toMatch(/account "second" cannot be read: its key is refused \(401/);
    expect(st).toMatch(/go to review/);
    const doc = await runCli(['doctor'], { ...env, TOPUP_RESTORE_LOOKUP_WAIT: '20s' });
    expect(doc.stdout + doc.stderr).toMatch(/restore lookup.*waiting for the restore lookup.*its key is refused \(401/);
    // The wait ends (20 s, then the next try within 15 s): review, never sent.
    await waitFor('rows in review', () => {
      const rows = rowsWithWhy(home);
      return rows.length === 2 && rows.every((r) => r.state === 'review');
    }, 90_000);
    await d.stop();
    expect(ledgerTrxids(a)).toEqual([]);
    expect(ledgerTrxids(b).sort()).toEqual(['RD-1-second', 'RD-2-second']);
    for (const r of rowsWithWhy(home)) expect(r.error).toMatch(/account "second" cannot be read: its key is refused \(401/);
    const after = await runCli(['status'], env);
    expect(after.stdout).not.toMatch(/waiting for the restore lookup/);
  }), 240_000);

  it('an account taken out of accounts.toml before the backup holds nothing after the restore', released(async () => {
    const { home, a, b, env } = await twoAccounts('routing = "priority"\nmax_queue_delay = "2s"');
    const both = startDaemon(env);
    await waitFor('store', () => { try { readFileSync(join(home.jobs, 'topup.db')); return true; } catch { return false; } }, 30_000);
    await both.stop();
    withoutSecond(home);
    // A start without it records when it went; a backup after that.
    const one = startDaemon(env);
    await waitFor('up', () => /watching|idle|sending/i.test(one.output()), 60_000).catch(() => undefined);
    await new Promise((r) => setTimeout(r, 1500));
    const bk = await runCli(['backup', '--to', join(home.dir, 'backups'), '--json'], env);
    expect(bk.code, bk.stderr).toBe(0);
    await one.stop();
    const rs = await runCli(['restore', JSON.parse(bk.stdout).path], env);
    expect(rs.code, rs.stderr).toBe(0);
    const d = startDaemon({ ...env, TOPUP_RESTORE_LOOKUP_WAIT: '10m' });
    await waitFor('up', () => /sending starts now/i.test(d.output()), 60_000);
    home.drop('rd.csv', FILE);
    await waitForResult(home, 'rd', 60_000);
    const s = await runCli(['status'], env);
    await d.stop();
    expect(s.stdout).not.toMatch(/restore lookup/);
    expect(storedRows(home).map((r) => [r.state, r.account, r.trxid])).toEqual([['completed', 'main', 'RD-1'], ['completed', 'main', 'RD-2']]);
    expect(ledgerTrxids(a).sort()).toEqual(['RD-1', 'RD-2']);
    expect(ledgerTrxids(b)).toEqual([]);
  }), 240_000);
});
