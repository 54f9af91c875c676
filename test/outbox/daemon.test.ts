/**
 * Issue 14's result findings, with the real daemon (dist/cli.js) against the sandbox:
 *  - a semicolon + BOM file with Cyrillic and Arabic names, a trxId column, a `status` column and
 *    phone numbers comes back in the same dialect: BOM, `;`, names intact, the header once, the
 *    trxId column filled in place, `result_status`, phones untouched, netUsd summing to spentUsd;
 *  - a `topup retry` of such a batch answers in the dialect of the file the reseller dropped;
 *  - the partial result appears while the batch runs, one row per input row, and is gone when
 *    the final result is written.
 */
import { readFileSync, statSync, existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { detectDelimiter } from '../../src/intake/formats/csv.js';
import { cliEnv, csv, inProcessSandbox, parseResult, readResult, readSummary, runCli, startDaemon, tempHome, waitFor } from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';

releaseAfterEach();

const cents = (s: string | undefined) => Math.round(Number((s ?? '').replace(',', '.')) * 100);

/** As Excel saves "CSV UTF-8" in a semicolon locale: BOM, `;`, CRLF. */
function excelSemicolon(rows: string[][]): Buffer {
  return Buffer.from(`\uFEFF${rows.map((r) => r.join(';')).join('\r\n')}\r\n`, 'utf8');
}

describe('the result in the input dialect (daemon)', () => {
  it('semicolon + BOM, Cyrillic/Arabic names and a trxId column: the result opens the same way, header once, sums right', async () => {
    const home = tempHome('topup-dialect-');
    const sb = await inProcessSandbox({ fulfilment: { processingMs: [100, 300] } });
    const input = [
      ['pid', 'userId', 'trxId', 'Имя клиента', 'phone', 'status'],
      ['PUBG-60', '5123456789', '', 'Иван Петров', '+62 812-555-0101', 'VIP'],
      ['PUBG-325', '5123456790', 'shop-0002', 'Мария Иванова', '+7 (912) 345-67-89', ''],
      ['PUBG-60', '99999', '', 'محمد علي', '-5', ''],
      ['NOPE-1', '5123456791', '', 'Олег', '', 'new'],
    ];
    writeFileSync(join(home.inbox, 'заказы.csv'), excelSemicolon(input));
    const r = await runCli(['daemon', '--once'], cliEnv(home, sb));
    expect(r.code, r.stdout.slice(-2000)).toBe(0);

    const bytes = readFileSync(join(home.outbox, 'заказы.result.csv'));
    expect([...bytes.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    const text = bytes.toString('utf8').slice(1);
    // Read back the way the intake reads a dropped file: the same delimiter is found.
    expect(detectDelimiter(text).delimiter).toBe(';');
    const header = 'pid;userId;trxId;Имя клиента;phone;status;orderId;result_status;packName;amountUsd;refunded;netUsd;codes;finishedAt;error';
    // CR LF like the input (issue 21, item 8): every line, none with a bare LF.
    expect(text.split('\r\n')[0]).toBe(header);
    expect(text.split('\r\n')).toHaveLength(input.length + 1);
    expect(text.replace(/\r\n/g, '')).not.toMatch(/[\r\n]/);
    expect(text.split('\r\n').filter((l) => l.includes('trxId'))).toHaveLength(1);

    const rows = readResult(home, 'заказы');
    expect(rows.map((x) => [x['Имя клиента'], x.phone, x.status, x.result_status])).toEqual([
      ['Иван Петров', '+62 812-555-0101', 'VIP', 'completed'],
      ['Мария Иванова', '+7 (912) 345-67-89', '', 'completed'],
      ['محمد علي', '-5', '', 'cancelled'],
      ['Олег', '', 'new', 'invalid'],
    ]);
    expect(rows[0]!.trxId).toMatch(/^tu[0-9a-f]{30}$/);
    expect(rows[1]!.trxId).toBe('shop-0002');
    expect(rows.map((x) => [x.packName, x.amountUsd, x.refunded, x.netUsd])).toEqual([
      ['60 UC', '0,92', '', '0,92'],
      ['325 UC', '4,55', '', '4,55'],
      ['60 UC', '0,92', 'true', '0,00'],
      ['', '', '', ''],
    ]);
    expect(rows.slice(0, 3).every((x) => /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/.test(x.finishedAt!))).toBe(true);

    // netUsd adds up to the summary's spend, which is what the supplier's ledger took.
    const summary = readSummary(home, 'заказы');
    const ledger = sb.admin.ledger().entries.filter((e) => e.kind !== 'topup');
    const net = rows.reduce((s, x) => s + (x.netUsd ? cents(x.netUsd) : 0), 0);
    expect(net).toBe(Math.round(summary.spentUsd * 100));
    expect(net).toBe(-Math.round(ledger.reduce((s, e) => s + e.amountUsd, 0) * 100));
    expect(summary.refundedUsd).toBe(0.92);
  }, 60_000);

  it('a `topup retry` of a semicolon + BOM batch answers with a semicolon + BOM result', async () => {
    const home = tempHome('topup-retry-dialect-');
    const sb = await inProcessSandbox({ fulfilment: { failShare: 1, processingMs: [50, 100] } });
    const file = join(home.dir, 'aufträge.csv');
    writeFileSync(file, excelSemicolon([['pid', 'userId', 'Kunde'], ['PUBG-60', '5123456789', 'Jörg Müller'], ['PUBG-325', '5123456790', 'Zoë']]));
    const env = cliEnv(home, sb);
    const first = JSON.parse((await runCli(['submit', file, '--json'], env)).stdout);
    expect(first.counts).toMatchObject({ cancelled: 2 });
    sb.admin.setFulfilment({ failShare: 0 });
    // The sandbox fails them as INVALID PLAYER, which a retry leaves out unless asked.
    const retried = await runCli(['retry', first.batchId, '--run', '--json', '--include-player-failures'], env);
    expect(retried.code, retried.stderr).toBe(0);
    const { resultFile } = JSON.parse(retried.stdout);
    const bytes = readFileSync(resultFile);
    expect([...bytes.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    // The retry file adds its trxid column and retryOfLine (the line in the first file).
    expect(bytes.toString('utf8').split('\r\n')[0]).toBe('\uFEFFpid;userId;Kunde;trxid;retryOfLine;orderId;status;packName;amountUsd;refunded;netUsd;codes;finishedAt;error');
    expect(parseResult(bytes.toString('utf8')).map((x) => [x.Kunde, x.status, x.netUsd])).toEqual([
      ['Jörg Müller', 'completed', '0,92'],
      ['Zoë', 'completed', '4,55'],
    ]);
  }, 60_000);
});

describe('partial results (daemon)', () => {
  it('outbox/<name>.partial.result.csv appears while the batch runs, one row per input row, 0600, and is gone after the final result', async () => {
    const home = tempHome('topup-partial-e2e-');
    const sb = await inProcessSandbox({ fulfilment: { processingShare: 0.5, processingMs: [3_000, 5_000] } });
    const users = Array.from({ length: 8 }, (_, i) => String(5_123_456_700 + i));
    home.drop('slow.csv', csv([['pid', 'userId'], ...users.map((u) => ['PUBG-60', u])]));
    const daemon = startDaemon(cliEnv(home, sb, { TOPUP_PARTIAL_RESULT_MS: '300' }));
    const partialPath = join(home.outbox, 'slow.partial.result.csv');
    const finalPath = join(home.outbox, 'slow.result.csv');

    const partial = await waitFor('the partial result', () => existsSync(partialPath) && readFileSync(partialPath, 'utf8'), 30_000, 50);
    expect(existsSync(finalPath), 'the partial result came before the final one').toBe(false);
    expect(statSync(partialPath).mode & 0o777).toBe(0o600);
    const rows = parseResult(partial);
    expect(rows.map((x) => x.userId)).toEqual(users);
    const statuses = rows.map((x) => x.status);
    expect(statuses.every((s) => ['completed', 'in progress', 'pending'].includes(s!)), statuses.join()).toBe(true);
    expect(statuses).toContain('completed');
    expect(statuses).toContain('in progress');
    for (const x of rows.filter((y) => y.status === 'completed')) expect(x).toMatchObject({ packName: '60 UC', netUsd: '0.92' });

    // The summary is written after the partial file is removed.
    await waitFor('the summary', () => existsSync(join(home.outbox, 'slow.summary.json')), 60_000, 100);
    expect(existsSync(partialPath)).toBe(false);
    expect(readResult(home, 'slow').map((x) => x.status)).toEqual(Array(8).fill('completed'));
    expect(daemon.output()).not.toMatch(/could not write the partial result/);
  }, 90_000);
});
