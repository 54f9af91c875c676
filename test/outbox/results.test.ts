/**
 * Results staff can use (issue 14): the header once with the input's trxid column filled in
 * place, clashing result columns prefixed, netUsd that sums to the summary's spentUsd, the pack
 * name and completion time, the input's delimiter and BOM. Real parts: a runtime with its SQLite
 * store in a temp home, files claimed and stored by the real intake, outcomes recorded through
 * the store's own transitions (the sandbox cannot answer "cancelled, not refunded"), results
 * written by finishBatch.
 */
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { claimFile } from '../../src/claim/claim.js';
import { loadBatch } from '../../src/claim/load.js';
import { loadConfig } from '../../src/config/config.js';
import { silentLogger } from '../../src/kernel/log.js';
import { finishBatch } from '../../src/outbox/finish.js';
import { outboxPaths } from '../../src/outbox/paths.js';
import { resultLayout } from '../../src/outbox/results.js';
import { openRuntime, type Runtime } from '../../src/runtime.js';
import type { Batch } from '../../src/store/batches.js';
import type { OrderFacts } from '../../src/store/rows.js';
import { inProcessSandbox, parseResult, releaseAll, tempHome, TEST_KEY, type TempHome } from '../e2e/harness.js';

let rt: Runtime | undefined;
afterEach(async () => {
  await rt?.close();
  rt = undefined;
  await releaseAll();
});

async function stored(content: string | Buffer, name = 'orders.csv'): Promise<{ rt: Runtime; batch: Batch; home: TempHome }> {
  const home = tempHome('topup-results-');
  const sb = await inProcessSandbox();
  rt = openRuntime(loadConfig({ TOPUP_HOME: home.dir, TOPUP_API_KEY: TEST_KEY, TOPUP_API_URL: sb.url }), silentLogger(), sb.url);
  const file = join(home.dir, name);
  writeFileSync(file, content);
  const claimed = await claimFile(rt, file, { origin: 'submit', own: true, move: false });
  expect(await loadBatch(rt, claimed)).toMatchObject({ loaded: true });
  return { rt, batch: rt.batches.get(claimed.id)!, home };
}

/** Sends row `idx` and records the supplier's answer, as the sender does. */
function answered(rt: Runtime, batchId: string, idx: number, facts: Omit<OrderFacts, 'orderId'>, now = Date.now()): void {
  expect(rt.rows.markSending(batchId, idx, { owner: rt.owner, now: now }, now + 60_000)).toBe(true);
  expect(rt.rows.placed(batchId, idx, { orderId: `ORD-${batchId}-${idx}`, ...facts }, now, now + 60_000)).toBe(true);
}

function resultText(rt: Runtime, batch: Batch): string {
  return readFileSync(outboxPaths(rt, batch).resultFile, 'utf8');
}

const cents = (s: string | undefined) => Math.round(Number((s ?? '').replace(',', '.')) * 100);

describe('the result header', () => {
  it('is written once, exactly, for no clash, a trxid input column, and input columns named like result columns', () => {
    expect(resultLayout(['pid', 'userId', 'name'], false).header).toEqual([
      'pid', 'userId', 'name', 'trxid', 'orderId', 'status', 'packName', 'amountUsd', 'refunded', 'netUsd', 'codes', 'finishedAt', 'error',
    ]);
    expect(resultLayout(['pid', 'userId', 'trxId'], true).header).toEqual([
      'pid', 'userId', 'trxId', 'orderId', 'status', 'packName', 'amountUsd', 'refunded', 'netUsd', 'codes', 'finishedAt', 'error', 'mode',
    ]);
    expect(resultLayout(['pid', 'userId', 'Status', 'error', 'order_id', 'packName', 'Mode'], true).header).toEqual([
      'pid', 'userId', 'Status', 'error', 'order_id', 'packName', 'Mode',
      'trxid', 'result_orderId', 'result_status', 'result_packName', 'amountUsd', 'refunded', 'netUsd', 'codes', 'finishedAt', 'result_error', 'result_mode',
    ]);
    expect(resultLayout(['pid', 'userId', 'status', 'error', 'orderId'], false).header.join(',')).toBe(
      'pid,userId,status,error,orderId,trxid,result_orderId,result_status,packName,amountUsd,refunded,netUsd,codes,finishedAt,result_error',
    );
    // The prefixed name is taken too: the prefix is applied again.
    expect(resultLayout(['pid', 'status', 'Result Status'], false).header.slice(3)).toEqual([
      'trxid', 'orderId', 'result_result_status', 'packName', 'amountUsd', 'refunded', 'netUsd', 'codes', 'finishedAt', 'error',
    ]);
  });

  it("fills the input's own trxid column in place: given trxids kept, blank ones get the derived trxid, one trxid column", async () => {
    const { rt, batch } = await stored('pid,userId,trxid,status\nPUBG-60,5123456789,my-own-1,vip\nPUBG-60,5123456790,,\nNOPE,5123456791,my-own-3,\n');
    answered(rt, batch.id, 0, { status: 'completed', amountUsd: 0.92 });
    answered(rt, batch.id, 1, { status: 'completed', amountUsd: 0.92 });
    await finishBatch(rt, rt.batches.get(batch.id)!);
    const text = resultText(rt, batch);
    const header = text.split('\n')[0]!.split(',');
    expect(header.filter((h) => h.toLowerCase() === 'trxid')).toEqual(['trxid']);
    expect(header.slice(0, 6)).toEqual(['pid', 'userId', 'trxid', 'status', 'orderId', 'result_status']);
    const rows = parseResult(text);
    expect(rows.map((r) => [r.trxid, r.status, r.result_status])).toEqual([
      ['my-own-1', 'vip', 'completed'],
      [rt.rows.get(batch.id, 1)!.trxid, '', 'completed'],
      ['my-own-3', '', 'invalid'],
    ]);
    expect(rows[1]!.trxid).toMatch(/^tu[0-9a-f]{30}$/);
  });
});

describe('money, pack and time', () => {
  it('netUsd is charged minus refunded and sums to spentUsd exactly; amountUsd is the price of every placed order', async () => {
    const lines = ['pid,userId', ...[0, 1, 2, 3, 4, 5, 6].map((i) => `PUBG-60,${5_123_456_789 + i}`), 'NOPE,5123456700'];
    const { rt, batch } = await stored(`${lines.join('\n')}\n`);
    const t0 = Date.parse('2025-03-01T10:04:05.678Z');
    answered(rt, batch.id, 0, { status: 'completed', amountUsd: 0.92 }, t0);
    answered(rt, batch.id, 1, { status: 'cancelled', amountUsd: 4.55, refunded: true, error: 'INVALID PLAYER' }, t0);
    answered(rt, batch.id, 2, { status: 'cancelled', amountUsd: 1.11, refunded: false, error: 'INVALID PLAYER' }, t0);
    // "refunded" missing: read as charged (money safety), like the summary does.
    answered(rt, batch.id, 3, { status: 'cancelled', amountUsd: 2, error: 'SOMETHING' }, t0);
    answered(rt, batch.id, 4, { status: 'completed', amountUsd: 0.1 }, t0);
    rt.rows.markSending(batch.id, 5, { owner: rt.owner, now: t0 }, t0);
    rt.rows.toReview('mismatch', batch.id, 5, { owner: rt.owner, now: t0 }, 'no definite answer');
    rt.rows.markSending(batch.id, 6, { owner: rt.owner, now: t0 }, t0);
    rt.rows.refused(batch.id, 6, { owner: rt.owner, now: t0 }, { error: 'INSUFFICIENT BALANCE', code: 'X', verifyAt: t0, answer: null });
    const summary = (await finishBatch(rt, rt.batches.get(batch.id)!))!;
    const rows = parseResult(resultText(rt, batch));
    expect(rows.map((r) => [r.status, r.amountUsd, r.refunded, r.netUsd])).toEqual([
      ['completed', '0.92', '', '0.92'],
      ['cancelled', '4.55', 'true', '0.00'],
      ['cancelled', '1.11', 'false', '1.11'],
      ['cancelled', '2.00', 'false', '2.00'],
      ['completed', '0.10', '', '0.10'],
      ['review', '', '', ''],
      ['rejected', '', '', ''],
      ['invalid', '', '', ''],
    ]);
    const net = rows.reduce((s, r) => s + cents(r.netUsd), 0);
    expect(net).toBe(Math.round(summary.spentUsd * 100));
    expect(summary.spentUsd).toBe(4.13);
    expect(summary.refundedUsd).toBe(4.55);
    // What the product owner summed before: the price of every placed order, refunds included.
    expect(rows.reduce((s, r) => s + (r.amountUsd ? cents(r.amountUsd) : 0), 0)).toBe(868);
    // The pack and when each row reached its status (UTC, to the second).
    expect(rows.slice(0, 7).map((r) => r.packName)).toEqual(Array(7).fill('60 UC'));
    expect(rows.slice(0, 7).map((r) => r.finishedAt)).toEqual(Array(7).fill('2025-03-01T10:04:05Z'));
    expect(rows[7]!.finishedAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(rows[7]!.packName).toBe('');
  });
});

describe('dialect', () => {
  it("a semicolon + BOM input gets a semicolon + BOM result, Cyrillic intact, money with a decimal comma", async () => {
    const { rt, batch } = await stored(Buffer.from('\uFEFFpid;userId;имя;phone\nPUBG-325;5123456789;Иван Петров;+62 812-555-0101\n', 'utf8'));
    expect(rt.batches.get(batch.id)!.dialect).toEqual({ delimiter: ';', bom: true, xlsx: false });
    answered(rt, batch.id, 0, { status: 'completed', amountUsd: 4.55 });
    await finishBatch(rt, rt.batches.get(batch.id)!);
    const bytes = readFileSync(outboxPaths(rt, batch).resultFile);
    expect([...bytes.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    const text = bytes.toString('utf8').slice(1);
    expect(text.split('\n')[0]).toBe('pid;userId;имя;phone;trxid;orderId;status;packName;amountUsd;refunded;netUsd;codes;finishedAt;error');
    const [row] = parseResult(bytes.toString('utf8'));
    expect(row).toMatchObject({ имя: 'Иван Петров', phone: '+62 812-555-0101', status: 'completed', amountUsd: '4,55', netUsd: '4,55' });
  });

  it('tab stays tab; a UTF-16 input with a BOM gets a UTF-8 result with a BOM; a plain comma file stays plain', async () => {
    const tab = await stored('pid\tuserId\nPUBG-60\t5123456789\n');
    expect(tab.rt.batches.get(tab.batch.id)!.dialect).toEqual({ delimiter: '\t', bom: false, xlsx: false });
    answered(tab.rt, tab.batch.id, 0, { status: 'completed', amountUsd: 0.92 });
    await finishBatch(tab.rt, tab.rt.batches.get(tab.batch.id)!);
    expect(resultText(tab.rt, tab.batch).split('\n')[0]!.split('\t').slice(0, 4)).toEqual(['pid', 'userId', 'trxid', 'orderId']);
    await rt!.close();
    rt = undefined;
    const utf16 = await stored(Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('pid,userId\r\nPUBG-60,5123456789\r\n', 'utf16le')]));
    expect(utf16.rt.batches.get(utf16.batch.id)!.dialect).toEqual({ delimiter: ',', bom: true, xlsx: false, eol: '\r\n' });
    answered(utf16.rt, utf16.batch.id, 0, { status: 'completed', amountUsd: 0.92 });
    await finishBatch(utf16.rt, utf16.rt.batches.get(utf16.batch.id)!);
    const bytes = readFileSync(outboxPaths(utf16.rt, utf16.batch).resultFile);
    expect([...bytes.subarray(0, 4)]).toEqual([0xef, 0xbb, 0xbf, 0x70]); // UTF-8 BOM, then "p"
    expect(bytes.toString('utf8').split('\r\n')).toHaveLength(3); // its CR LF, in UTF-16, kept
    expect(parseResult(bytes.toString('utf8'))[0]).toMatchObject({ pid: 'PUBG-60', status: 'completed', netUsd: '0.92' });
    await rt!.close();
    rt = undefined;
    const plain = await stored('pid,userId\nPUBG-60,5123456789\n');
    answered(plain.rt, plain.batch.id, 0, { status: 'completed', amountUsd: 0.92 });
    await finishBatch(plain.rt, plain.rt.batches.get(plain.batch.id)!);
    const text = resultText(plain.rt, plain.batch);
    expect(text.startsWith('pid,userId,trxid,')).toBe(true);
    expect(text).not.toContain('\r'); // LF in, LF out
    expect(statSync(outboxPaths(plain.rt, plain.batch).resultFile).mode & 0o777).toBe(0o600);
  });

  it('a batch stored before the dialect was recorded is written comma-separated without a BOM', async () => {
    const { rt, batch } = await stored(Buffer.from('\uFEFFpid;userId\nPUBG-60;5123456789\n', 'utf8'));
    rt.db.prepare('UPDATE batches SET dialect_json = NULL WHERE id = ?').run(batch.id);
    answered(rt, batch.id, 0, { status: 'completed', amountUsd: 0.92 });
    await finishBatch(rt, rt.batches.get(batch.id)!);
    expect(resultText(rt, batch).startsWith('pid,userId,trxid,orderId,status,')).toBe(true);
  });
});
