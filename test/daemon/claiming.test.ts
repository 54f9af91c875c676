import { existsSync, readdirSync, writeFileSync, appendFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import {
  cliEnv, csv, inProcessSandbox, listOutbox, readResult, runCli, startDaemon, tempHome, waitFor, waitForResult,
  type DaemonProcess, type TempHome,
} from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';
import type { RunningSandbox } from '../../src/sandbox/index.js';

let home: TempHome;
let sb: RunningSandbox;
let daemon: DaemonProcess | undefined;
releaseAfterEach();

const ORDERS = csv([['pid', 'userId'], ['PUBG-60', '5123456789'], ['PUBG-325', '5123456790']]);

describe('§1 claiming', () => {
  it('claims *.csv in any case, moves it to jobs/<batch>/, and ignores dotfiles, lock files and files still being written', async () => {
    home = tempHome();
    sb = await inProcessSandbox();
    writeFileSync(join(home.inbox, 'UPPER.CSV'), ORDERS);
    // (A .txt is read as delimited text now, and any other file is answered with an .error.txt:
    // test/daemon/spreadsheets.test.ts.)
    for (const name of ['.hidden.csv', 'draft.csv.tmp', 'upload.csv.part', '~$lock.csv', 'orders.xlsx.crdownload']) writeFileSync(join(home.inbox, name), ORDERS);
    const r = await runCli(['daemon', '--once'], cliEnv(home, sb));
    expect(r.code, r.stderr).toBe(0);
    expect(readResult(home, 'UPPER').map((x) => x.status)).toEqual(['completed', 'completed']);
    expect(readdirSync(home.inbox).sort()).toEqual(['.hidden.csv', 'draft.csv.tmp', 'orders.xlsx.crdownload', 'upload.csv.part', '~$lock.csv']);
    const batches = readdirSync(home.jobs).filter((d) => d.startsWith('b'));
    expect(batches).toHaveLength(1);
    // Beside the file, where it came from (for a database that loses the batch: src/claim/orphans.ts),
    // and how its columns were read (for the summary: src/outbox/summary.ts).
    expect(readdirSync(join(home.jobs, batches[0]!)).sort()).toEqual(['.claim.json', '.columns.json', 'UPPER.CSV']);
    expect(JSON.parse(readFileSync(join(home.jobs, batches[0]!, '.claim.json'), 'utf8'))).toMatchObject({ batch: batches[0], origin: 'inbox', file: 'UPPER.CSV' });
    expect(sb.admin.ledger().orders).toHaveLength(2);
  });

  it('takes a file only once it is fully written (a file growing in place is not cut in half)', async () => {
    home = tempHome();
    sb = await inProcessSandbox();
    // Appends come every 250 ms, well inside the settle time. (This test used to fail now and then:
    // a file written while chokidar's first scan was still running was reported at once, half
    // written; watch.ts now checks such files itself. See test/intake/watch.test.ts.)
    daemon = startDaemon(cliEnv(home, sb, { TOPUP_SETTLE_MS: '2000' }));
    await waitFor('daemon start', () => daemon!.output().includes('topup daemon started'));
    const path = join(home.inbox, 'growing.csv');
    writeFileSync(path, 'pid,userId\nPUBG-60,51234');
    for (let i = 0; i < 4; i++) {
      await sleep(250);
      appendFileSync(path, i === 0 ? '56789\n' : `PUBG-60,51234567${i}0\n`);
    }
    await waitForResult(home, 'growing');
    const rows = readResult(home, 'growing');
    expect(rows.map((r) => r.userId)).toEqual(['5123456789', '5123456710', '5123456720', '5123456730']);
    expect(rows.every((r) => r.status === 'completed')).toBe(true);
    expect(await daemon.stop()).toBe(0);
  });

  it('a file identical to one already processed is never ordered again; its result names the earlier batch', async () => {
    home = tempHome();
    sb = await inProcessSandbox();
    home.drop('orders.csv', ORDERS);
    expect((await runCli(['daemon', '--once'], cliEnv(home, sb))).code).toBe(0);
    const first = readdirSync(home.jobs).find((d) => d.startsWith('b'))!;
    home.drop('orders.csv', ORDERS);
    expect((await runCli(['daemon', '--once'], cliEnv(home, sb))).code).toBe(0);
    expect(sb.admin.ledger().orders).toHaveLength(2);
    // The first result is kept; the duplicate's result goes beside it under its batch id.
    expect(readResult(home, 'orders').map((r) => r.status)).toEqual(['completed', 'completed']);
    const dupResult = listOutbox(home).find((f) => f.startsWith('orders.b') && f.endsWith('.result.csv'))!;
    expect(dupResult).toBeDefined();
    const dup = readResult(home, dupResult.replace(/\.result\.csv$/, ''));
    expect(dup.map((r) => r.status)).toEqual(['skipped', 'skipped']);
    expect(dup[0]!.error).toContain(`duplicate of batch ${first}`);
    expect(dup[0]!.error).toContain('topup submit --again');
  });

  it('a file that is not a CSV gets outbox/<name>.error.txt, stays in jobs/, and does not stop the daemon', async () => {
    home = tempHome();
    sb = await inProcessSandbox();
    daemon = startDaemon(cliEnv(home, sb));
    await waitFor('daemon start', () => daemon!.output().includes('topup daemon started'));
    home.drop('noise.csv', '\u0000\u0001\u0002binary\u0000noise');
    home.drop('good.csv', ORDERS);
    await waitFor('error file', () => existsSync(join(home.outbox, 'noise.error.txt')));
    await waitForResult(home, 'good');
    expect(readFileSync(join(home.outbox, 'noise.error.txt'), 'utf8')).toMatch(/could not read noise\.csv/);
    const kept = readdirSync(home.jobs).filter((d) => d.startsWith('b')).flatMap((d) => readdirSync(join(home.jobs, d)));
    expect(kept).toContain('noise.csv');
    expect(daemon.child.exitCode).toBeNull();
    expect(await daemon.stop()).toBe(0);
  });
});
