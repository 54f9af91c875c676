/**
 * The reseller's spreadsheet day, through the real CLI against the sandbox: an .xlsx dropped
 * into the inbox of a running daemon gets a result, a .ods gets an .error.txt (neither waits
 * unnoticed), a "Player ID" header orders, a file lacking a column is refused whole with nothing
 * charged, and a fresh home's folders are tightened to 0700.
 */
import { chmodSync, copyFileSync, existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { ROOT, cliEnv, csv, inProcessSandbox, listOutbox, readResult, runCli, startDaemon, tempHome, waitFor } from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';

releaseAfterEach();
const CORPUS = join(ROOT, 'test', 'fixtures', 'bad-inputs');

describe('files as resellers make them', () => {
  it('a running daemon answers an .xlsx with a result and an .ods with an .error.txt', async () => {
    const home = tempHome();
    const sb = await inProcessSandbox();
    const daemon = startDaemon(cliEnv(home, sb, { TOPUP_SETTLE_MS: '100' }));
    await waitFor('the daemon to start', () => /topup daemon started/.test(daemon.output()), 20_000);
    copyFileSync(join(CORPUS, 'xlsx-good.xlsx'), join(home.inbox, 'march.xlsx'));
    copyFileSync(join(CORPUS, 'libreoffice.ods'), join(home.inbox, 'april.ods'));
    await waitFor('both answers', () => listOutbox(home).includes('march.result.csv') && listOutbox(home).includes('april.ods.error.txt'), 30_000, 100);
    await waitFor('the summary', () => listOutbox(home).includes('march.summary.json'), 10_000, 100);

    const rows = readResult(home, 'march');
    expect(rows.map((r) => r.status)).toEqual(['completed', 'completed', 'completed', 'completed', 'invalid', 'invalid']);
    expect(rows[2]).toMatchObject({ pid: 'ML-86', status: 'completed' });
    expect(rows[4]!.error).toMatch(/formula/);
    const ml = sb.admin.ledger().orders.find((o) => o.pid === 'ML-86');
    expect(ml).toMatchObject({ userId: '777888999', zoneId: '2005' });

    expect(readFileSync(join(home.outbox, 'april.ods.error.txt'), 'utf8')).toMatch(/OpenDocument spreadsheet.*Save As/);
    expect(readdirSync(home.inbox)).toEqual([]);
    await daemon.stop();
  }, 60_000);

  it('"Player ID" as the header orders every row, gift cards included', async () => {
    const home = tempHome();
    const sb = await inProcessSandbox();
    home.drop('players.csv', csv([['pid', 'Player ID', 'quantity'], ['PUBG-60', '5123456789', ''], ['STEAM-5', '', '1'], ['PUBG-325', '5123456790', '']]));
    const r = await runCli(['daemon', '--once'], cliEnv(home, sb));
    expect(r.code, r.stderr).toBe(0);
    expect(readResult(home, 'players').map((x) => x.status)).toEqual(['completed', 'completed', 'completed']);
    expect(sb.admin.ledger().orders.map((o) => [o.pid, o.userId ?? null])).toEqual([
      ['PUBG-60', '5123456789'],
      ['STEAM-5', null],
      ['PUBG-325', '5123456790'],
    ]);
  });

  it('a file lacking a column its orders need is refused whole: one explanation, nothing stored, nothing charged', async () => {
    const home = tempHome();
    const sb = await inProcessSandbox();
    copyFileSync(join(CORPUS, 'missing-column.csv'), join(home.inbox, 'gamers.csv'));
    const v = await runCli(['validate', join(CORPUS, 'missing-column.csv'), '--json'], cliEnv(home, sb));
    expect(v.code).toBe(7);
    const q = JSON.parse(v.stdout) as { fileProblems: string[]; problems: unknown[]; validRows: number; totalUsd: number };
    expect(q.fileProblems).toEqual([expect.stringMatching(/no Player ID column \(userId\).*rename column "Gamer ID" to "userId"/)]);
    expect(q.problems).toEqual([]);
    expect(q).toMatchObject({ validRows: 0, totalUsd: 0 });

    const r = await runCli(['daemon', '--once'], cliEnv(home, sb));
    expect(r.code, r.stderr).toBe(0);
    expect(readFileSync(join(home.outbox, 'gamers.error.txt'), 'utf8')).toMatch(/refused the whole file: no row was ordered[\s\S]*rename column "Gamer ID" to "userId"/);
    expect(existsSync(join(home.outbox, 'gamers.result.csv'))).toBe(false);
    expect(sb.admin.ledger().orders).toEqual([]);
    const db = new Database(join(home.jobs, 'topup.db'), { readonly: true });
    const batch = db.prepare(`SELECT state, (SELECT count(*) FROM rows WHERE rows.batch_id = batches.id) AS n FROM batches WHERE source_name = 'gamers.csv'`).get();
    db.close();
    expect(batch).toEqual({ state: 'failed', n: 0 });
  });

  it('topup submit reads an .xlsx, and refuses an .ods before making a batch of it', async () => {
    const home = tempHome();
    const sb = await inProcessSandbox();
    const s = await runCli(['submit', join(CORPUS, 'xlsx-good.xlsx'), '--quiet'], cliEnv(home, sb));
    expect(s.code, s.stderr).toBe(1); // two rows of the workbook are invalid on purpose
    expect(s.stdout).toMatch(/6 rows: 4 completed, 0 cancelled, 0 rejected, 2 invalid/);
    const o = await runCli(['submit', join(CORPUS, 'libreoffice.ods')], cliEnv(home, sb));
    expect(o.code).toBe(7);
    expect(o.stderr).toMatch(/OpenDocument spreadsheet/);
    expect(listOutbox(home).filter((f) => f.startsWith('libreoffice'))).toEqual([]);
    const before = sb.admin.ledger().orders.length;
    const m = await runCli(['submit', join(CORPUS, 'missing-column.csv'), '--quiet'], cliEnv(home, sb));
    expect(m.code).toBe(7);
    expect(m.stdout).toMatch(/nothing was ordered: the file has no Player ID column/);
    expect(sb.admin.ledger().orders).toHaveLength(before);
  });
});

describe('a fresh home', () => {
  it('inbox/, jobs/ and outbox/ at 0755 are tightened to 0700 by the first command, said once', async () => {
    const home = tempHome();
    const sb = await inProcessSandbox();
    for (const d of [home.inbox, home.jobs, home.outbox]) chmodSync(d, 0o755);
    const env = cliEnv(home, sb);
    const first = await runCli(['daemon', '--once'], env);
    expect(first.code, first.stderr).toBe(0);
    for (const d of [home.inbox, home.jobs, home.outbox]) expect(statSync(d).mode & 0o777).toBe(0o700);
    const said = (first.stdout + first.stderr).split('\n').filter((l) => /tightened/.test(l));
    expect(said).toHaveLength(3);
    expect(said[1]).toMatch(/jobs from mode 755 to 700/);
    expect(first.stdout + first.stderr).not.toMatch(/doctor: folder .*others can read it/);
    const again = await runCli(['daemon', '--once'], env);
    expect(again.stdout + again.stderr).not.toMatch(/tightened/);
  });
});
