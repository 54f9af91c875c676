/**
 * Trial s34, defect 1 "Related": after a restore, with one account that cannot be read (its key
 * refused), every file claimed in the window waited whole for TOPUP_RESTORE_LOOKUP_WAIT (30 min),
 * then its rows went to review, even the rows whose fate the account that was read settles.
 *
 * With money: a row not pinned may have been placed on `second` by the routing of the first claim,
 * or moved there by a failover, and bought there as its trxid or `<trxid>-second`; nothing in
 * `main`'s history rules that out, so such a row still waits for `second`. But a row pinned to
 * `main` never was on `second` (a pin never moves), and a row found bought on `main` is settled
 * from that purchase and never sent: neither waits. Now the batch is held row by row.
 *
 * Two real sandboxes as two accounts, a real backup and restore, the daemon, the CLI's status.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import Database from 'better-sqlite3';
import { TEST_KEY, csv, runCli, startDaemon, waitFor, waitForResult } from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';
import { ledgerTrxids, storedRows, twoAccounts } from '../backup/world.js';

releaseAfterEach();

describe('a file claimed after a restore while one account cannot be read', () => {
  it('rows pinned to the account read, and rows found bought there, go on at once; only the rows that could have been bought on the other wait', async () => {
    const { home, a, b, env } = await twoAccounts('routing = "priority"');
    const first = startDaemon(env);
    await waitFor('store', () => { try { readFileSync(join(home.jobs, 'topup.db')); return true; } catch { return false; } }, 30_000);
    const bk = await runCli(['backup', '--to', join(home.dir, 'backups'), '--json'], env);
    expect(bk.code, bk.stderr).toBe(0);
    await first.stop();
    // Bought on main after the copy was taken (the copy does not know it).
    const r = await fetch(`${a.url}/orders`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': TEST_KEY }, body: JSON.stringify({ pid: 'PUBG-60', trxid: 'M-1', userId: '5123450201' }) });
    expect(r.status, await r.text()).toBeLessThan(300);
    const rs = await runCli(['restore', JSON.parse(bk.stdout).path], env);
    expect(rs.code, rs.stderr).toBe(0);
    // second's key refused from now on: its history cannot be read.
    writeFileSync(join(home.dir, 'keys', 'second.key'), 'revoked-key-0123456789abcdef', { mode: 0o600 });
    const d = startDaemon({ ...env, TOPUP_RESTORE_LOOKUP_WAIT: '10m' });
    try {
      await waitFor('up', () => /sending starts now/i.test(d.output()), 60_000);
      home.drop('day.csv', csv([
        ['pid', 'userId', 'trxid', 'account'],
        ['PUBG-60', '5123450301', 'P-1', 'main'],
        ['PUBG-60', '5123450201', 'M-1', ''],
        ['PUBG-60', '5123450401', 'N-1', ''],
      ]));
      const state = (t: string): string | undefined => storedRows(home).find((x) => x.trxid === t)?.state;
      // Before: all three waited 10 min for second (the batch whole).
      await waitFor('the pinned row bought and the found row settled', () => state('P-1') === 'completed' && state('M-1') === 'completed', 45_000, 250);
      const st = await runCli(['status'], { ...env, TOPUP_RESTORE_LOOKUP_WAIT: '10m' });
      expect(st.stdout).toMatch(/restore lookup: 1 row\(s\) of batch \S+ \(line 4\) are waiting for the restore lookup/);
      expect(st.stdout).toMatch(/account "second" cannot be read: its key is refused \(401/);
      await new Promise((res) => setTimeout(res, 2000));
      expect(state('N-1')).toBe('pending');
      // main: M-1 once (bought after the copy, settled, never sent again), P-1; N-1 nowhere.
      expect(ledgerTrxids(a).sort()).toEqual(['M-1', 'P-1']);
      expect(ledgerTrxids(b)).toEqual([]);
      // Closing the window early is refused while a lookup is unanswered; forced, it closes the
      // window and still sends nothing blind: N-1 keeps waiting for its lookup.
      const refused = await runCli(['restore', '--close-window', '--yes'], env);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(/1 file row\(s\) still wait for their restore lookup/);
      const forced = await runCli(['restore', '--close-window', '--yes', '--force'], env);
      expect(forced.code, forced.stderr).toBe(0);
      expect(forced.stdout).toMatch(/Closed the restore window.*1 lookup\(s\) still unanswered go on/);
      await new Promise((res) => setTimeout(res, 2000));
      expect(state('N-1')).toBe('pending');
      expect(ledgerTrxids(a).sort()).toEqual(['M-1', 'P-1']);
      expect(audit(home.jobs).map((e) => e.outcome)).toEqual(['refused', 'ok']);
    } finally {
      await d.stop();
    }
  }, 240_000);

  it('validate warns while the window is open; topup restore --close-window shows, then with --yes closes it (audited), and the next file is sent at once', async () => {
    const { home, a, b, env } = await twoAccounts('routing = "priority"');
    const first = startDaemon(env);
    await waitFor('store', () => { try { readFileSync(join(home.jobs, 'topup.db')); return true; } catch { return false; } }, 30_000);
    const bk = await runCli(['backup', '--to', join(home.dir, 'backups'), '--json'], env);
    expect(bk.code, bk.stderr).toBe(0);
    await first.stop();
    expect((await runCli(['restore', JSON.parse(bk.stdout).path], env)).code).toBe(0);
    const once = startDaemon(env);
    await waitFor('reconciled', () => /sending starts now/i.test(once.output()), 60_000);
    await once.stop();
    writeFileSync(join(home.dir, 'keys', 'second.key'), 'revoked-key-0123456789abcdef', { mode: 0o600 });
    const file = join(home.dir, 'new.csv');
    writeFileSync(file, csv([['pid', 'userId', 'trxid'], ['PUBG-60', '5123450501', 'NEW-1']]));
    const v1 = await runCli(['validate', file], env);
    expect(v1.stdout).toMatch(/a restore window is open until .* UTC: before they are sent, this file's rows are looked up at every account \(main, second\)/);
    expect(v1.stdout).toMatch(/topup restore --close-window/);
    const shown = await runCli(['restore', '--close-window'], env);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toMatch(/A restore window is open until/);
    expect(shown.stdout).toMatch(/Nothing changed\. To close it: topup restore --close-window --yes/);
    expect((await runCli(['validate', file], env)).stdout).toMatch(/a restore window is open/);
    const closed = await runCli(['restore', '--close-window', '--yes'], env);
    expect(closed.code, closed.stderr).toBe(0);
    expect(closed.stdout).toMatch(/Closed the restore window.*Recorded in the audit log/);
    expect(audit(home.jobs)).toEqual([expect.objectContaining({ action: 'restore window close', outcome: 'ok' })]);
    expect((await runCli(['validate', file], env)).stdout).not.toMatch(/restore window/);
    expect((await runCli(['status'], env)).stdout).toMatch(/restore window closed early/);
    const again = await runCli(['restore', '--close-window', '--yes'], env);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/no restore window is open/);
    // second's key still refused: the new file is not held for it any more.
    const d = startDaemon(env);
    try {
      home.drop('new.csv', readFileSync(file, 'utf8'));
      await waitForResult(home, 'new', 60_000);
    } finally {
      await d.stop();
    }
    expect(ledgerTrxids(a)).toEqual(['NEW-1']);
    expect(ledgerTrxids(b)).toEqual([]);
  }, 240_000);
});

function audit(jobs: string): { action: string; outcome: string; detail: string }[] {
  const db = new Database(join(jobs, 'topup.db'), { readonly: true, fileMustExist: true });
  try {
    return db.prepare("SELECT action, outcome, detail FROM audit WHERE action = 'restore window close' ORDER BY id").all() as { action: string; outcome: string; detail: string }[];
  } finally {
    db.close();
  }
}
