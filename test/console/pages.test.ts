/**
 * Issue 13, "The console": each page of a real daemon's console over HTTP, doing what an
 * operator does — upload, check, submit, follow, download, reveal, cancel, retry, resolve a
 * review row, run a report — and what each leaves in the store, the outbox and the audit table.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { csv, parseResult, waitFor } from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';
import { Client, EXAMPLE_MIXED, startConsoleDaemon, type ConsoleUnderTest } from './helpers.js';

releaseAfterEach();

function db<T>(t: ConsoleUnderTest, fn: (d: Database.Database) => T): T {
  const d = new Database(join(t.home.jobs, 'topup.db'), { readonly: true, fileMustExist: true });
  try {
    return fn(d);
  } finally {
    d.close();
  }
}
const auditOf = (t: ConsoleUnderTest) => db(t, (d) => d.prepare('SELECT action, outcome, batch_id AS batchId, line, detail, actor FROM audit ORDER BY id').all() as {
  action: string; outcome: string; batchId: string | null; line: number | null; detail: string | null; actor: string;
}[]);

/** Upload → check page → Submit → the new batch's page. Returns the batch id. */
async function submitFile(c: Client, name: string, content: Blob, expectOnCheck: RegExp[] = []): Promise<string> {
  await c.get('/upload');
  const form = new FormData();
  form.set('file', content, name);
  const up = await c.post('/upload', form);
  expect(up.status, up.text).toBe(303);
  const check = up.headers.get('location')!;
  const page = await c.get(check);
  for (const re of expectOnCheck) expect(page.text).toMatch(re);
  expect((await c.post(`${check}/submit`, {})).status).toBe(303);
  const to = await waitFor('the batch page', async () => {
    const r = await c.get(check);
    return r.status === 303 ? r.headers.get('location')! : undefined;
  }, 30_000, 100);
  return decodeURIComponent(to.replace('/batches/', ''));
}

async function finished(c: Client, id: string): Promise<string> {
  return waitFor(`batch ${id} finished`, async () => {
    const r = await c.get(`/batches/${id}`);
    return r.text.includes('Result (CSV)') ? r.text : undefined;
  }, 60_000, 200);
}

/** The batch page's "By status" table: count by state. */
function statusOf(html: string): Record<string, number> {
  return Object.fromEntries([...html.matchAll(/data-f="c-(\w+)">(\d+)</g)].map((m) => [m[1]!, Number(m[2])]));
}

describe('console pages', () => {
  it('upload → quote → submit → the batch runs to its end; the result downloads; codes stay hidden until one row is revealed (recorded)', async () => {
    const t = await startConsoleDaemon();
    const c = new Client(t.url);
    await c.get('/login');
    await c.post('/login', { name: 'ana', next: '/' });
    const id = await submitFile(c, 'mixed.csv', new Blob([readFileSync(EXAMPLE_MIXED)]), [/9 \(9 to send, 0 with problems\)/, /76\.11 USD/, /Balance after<\/dt><dd><strong data-quote-after>923\.89 USD/]);
    const page = await finished(c, id);
    expect(statusOf(page)).toMatchObject({ completed: 9, cancelled: 0 });
    const codes = db(t, (d) => (d.prepare(`SELECT codes_json FROM rows WHERE batch_id = ? AND codes_json IS NOT NULL`).all(id) as { codes_json: string }[]).flatMap((r) => JSON.parse(r.codes_json) as string[]));
    expect(codes.length).toBe(3);
    for (const code of codes) expect(page).not.toContain(code);

    const download = await c.get(`/batches/${id}/files/result`);
    expect(download.status).toBe(200);
    expect(download.headers.get('content-disposition')).toMatch(/^attachment; filename="mixed\.result\.csv"/);
    const rows = parseResult(download.text);
    expect(rows.map((r) => r.status)).toEqual(Array(9).fill('completed'));
    expect(download.text).toBe(readFileSync(join(t.home.outbox, 'mixed.result.csv'), 'utf8'));

    const keyRow = db(t, (d) => d.prepare(`SELECT idx, line, codes_json FROM rows WHERE batch_id = ? AND json_array_length(codes_json) = 2`).get(id) as { idx: number; line: number; codes_json: string });
    const revealed = await c.post(`/batches/${id}/rows/${keyRow.idx}/reveal`, {});
    expect(revealed.status).toBe(200);
    for (const code of JSON.parse(keyRow.codes_json) as string[]) expect(revealed.text).toContain(code);
    expect(revealed.text).not.toContain(codes.find((x) => !keyRow.codes_json.includes(x))!);
    expect(revealed.headers.get('cache-control')).toBe('no-store');
    expect((await c.post(`/batches/${id}/rows/${keyRow.idx}/reveal`, {}, { csrf: null })).status).toBe(403);

    expect(auditOf(t).map((a) => [a.action, a.outcome, a.batchId, a.line, a.actor])).toEqual([
      ['login', 'ok', null, null, 'ana (console)'],
      ['upload', 'ok', null, null, 'ana (console)'],
      ['submit', 'ok', null, null, 'ana (console)'],
      ['download', 'ok', id, null, 'ana (console)'],
      ['reveal', 'ok', id, keyRow.line, 'ana (console)'],
    ]);
    expect((await c.get('/audit')).text).toContain(`${id}</a>:${keyRow.line}`);
  });

  it('rows are filtered by state and found by trxid, order id, player id or any of the file\'s cells, 50 at a time', async () => {
    const t = await startConsoleDaemon();
    const c = new Client(t.url);
    const lines: string[][] = [['pid', 'userId', 'customer']];
    for (let i = 0; i < 120; i++) lines.push(['PUBG-60', String(5_100_000_000 + i), `shop-${i}`]);
    lines.push(['FFMENA-100', '12', 'bad id row']);
    const id = await submitFile(c, 'many.csv', new Blob([csv(lines)]));
    await finished(c, id);
    const rowsIn = (html: string): number => (html.match(/<tr><td class="num">\d+<\/td><td><span class="badge s-/g) ?? []).length;
    const all = await c.get(`/batches/${id}`);
    expect(rowsIn(all.text)).toBe(50);
    expect(all.text).toContain('121 rows match');
    const next = /href="(\/batches\/[^"]+after=\d+)"/.exec(all.text)![1]!.replace(/&amp;/g, '&');
    const page2 = await c.get(next);
    expect(rowsIn(page2.text)).toBe(50);
    expect(page2.text).toContain('>52</td>');
    expect((await c.get(`/batches/${id}?rows=invalid`)).text).toContain('1 rows match');
    const r = db(t, (d) => d.prepare(`SELECT trxid, order_id AS orderId FROM rows WHERE batch_id = ? AND line = 40`).get(id) as { trxid: string; orderId: string });
    for (const q of [r.trxid, r.orderId, '5100000038', 'shop-38']) {
      const found = await c.get(`/batches/${id}?q=${encodeURIComponent(q)}`);
      expect(found.text, q).toContain('1 rows match');
      expect(found.text, q).toContain('>40</td>');
    }
  });

  it('a batch waiting for balance: its page says why; Cancel says what is skipped and what may still be charged, and ends it', async () => {
    const t = await startConsoleDaemon({}, { balanceUsd: 20 });
    const c = new Client(t.url);
    const id = await submitFile(c, 'mixed.csv', new Blob([readFileSync(EXAMPLE_MIXED)]), [/Not affordable: top up at least 56\.11 USD/]);
    await waitFor('the wait for balance', async () => (await c.get(`/batches/${id}`)).text.includes('waiting for balance'), 30_000, 200);
    expect((await c.get('/batches?wait=balance')).text).toContain(id);
    expect((await c.get('/batches?state=done')).text).not.toContain(id);
    const confirm = await c.get(`/batches/${id}/cancel`);
    expect(confirm.text).toMatch(/<strong>9<\/strong> rows not sent yet \(76\.11 USD\) will be <strong>skipped<\/strong>/);
    expect(confirm.text).toMatch(/<strong>0<\/strong> rows already sent \(up to 0\.00 USD\) <strong>may still be charged<\/strong>/);
    expect((await c.post(`/batches/${id}/cancel`, {})).status).toBe(303);
    const page = await finished(c, id);
    expect(statusOf(page)).toMatchObject({ skipped: 9 });
    expect(t.sb.admin.ledger().orders).toHaveLength(0);
    expect(auditOf(t).find((a) => a.action === 'cancel')).toMatchObject({ outcome: 'ok', batchId: id });
  });

  it('a batch waiting for balance: "Run the part the balance covers" says which rows run and which are skipped, and does it (issue 30)', async () => {
    const t = await startConsoleDaemon({}, { balanceUsd: 20 });
    const c = new Client(t.url);
    const id = await submitFile(c, 'mixed.csv', new Blob([readFileSync(EXAMPLE_MIXED)]));
    await waitFor('the wait for balance', async () => (await c.get(`/batches/${id}`)).text.includes('waiting for balance'), 30_000, 200);
    expect((await c.get(`/batches/${id}`)).text).toContain(`href="/batches/${id}/run-covered"`);
    const confirm = await c.get(`/batches/${id}/run-covered`);
    expect(confirm.status, confirm.text).toBe(200);
    const run = /<strong>(\d+)<\/strong> rows? \(([\d.]+) USD\) <strong>run now<\/strong>/.exec(confirm.text);
    const skip = /<strong>(\d+)<\/strong> rows? \(([\d.]+) USD\) (?:is|are) <strong>skipped<\/strong>/.exec(confirm.text);
    expect(run, confirm.text).not.toBeNull();
    expect(skip).not.toBeNull();
    const [runRows, runUsd, skipRows] = [Number(run![1]), Number(run![2]), Number(skip![1])];
    expect(runRows).toBeGreaterThan(0);
    expect(skipRows).toBeGreaterThan(0);
    expect(runUsd).toBeLessThanOrEqual(20);
    expect(t.sb.admin.ledger().orders).toHaveLength(0);
    expect((await c.post(`/batches/${id}/run-covered`, {})).status).toBe(303);
    const page = await finished(c, id);
    expect(statusOf(page).skipped).toBe(skipRows);
    expect(t.sb.admin.ledger().orders).toHaveLength(runRows);
    expect(page).toContain(`href="/batches/${id}/retry"`);
    expect(auditOf(t).find((a) => a.action === 'run-covered')).toMatchObject({ outcome: 'ok', batchId: id });
  });

  it('Retry shows the rows and USD and says they are new purchases; player-id failures only when asked; the new batch runs', async () => {
    const t = await startConsoleDaemon();
    const c = new Client(t.url);
    // 99999: the sandbox's player id that always fails (INVALID PLAYER, refunded).
    const id = await submitFile(c, 'two.csv', new Blob([csv([['pid', 'userId'], ['PUBG-60', '99999'], ['PUBG-325', '5123456789']])]));
    const done = await finished(c, id);
    expect(statusOf(done)).toMatchObject({ cancelled: 1 });
    // Every failure was a player id: the plain retry buys nothing, and its page says so and leads on.
    const plain = await c.get(`/batches/${id}/retry`);
    expect(plain.status).toBe(200);
    expect(plain.text).toContain('failed for its <strong>player id</strong>: <strong>1</strong> row, line 2.');
    expect(plain.text).toContain(`href="/batches/${id}/retry?players=1"`);
    expect(plain.text).not.toMatch(/Buy th(ese|is)/);
    const confirm = await c.get(`/batches/${id}/retry?players=1`);
    expect(confirm.status, confirm.text).toBe(200);
    expect(confirm.text).toMatch(/a new batch of <strong>1<\/strong> row, line 2\./);
    expect(confirm.text).toMatch(/<strong>new purchases<\/strong>.*about <strong>0\.92 USD<\/strong>/s);
    expect(confirm.text).toContain('Buy this row again for about 0.92 USD');
    const r = await c.post(`/batches/${id}/retry`, { players: '1' });
    expect(r.status, r.text).toBe(303);
    const retryId = decodeURIComponent(r.headers.get('location')!.replace('/batches/', ''));
    expect(retryId).not.toBe(id);
    const page = await finished(c, retryId);
    expect(page).toContain(`retry of <a href="/batches/${id}">${id}</a>`);
    expect(t.sb.admin.ledger().orders.length).toBe(3);
    expect(auditOf(t).find((a) => a.action === 'retry')).toMatchObject({ outcome: 'ok', batchId: id, detail: `new batch ${retryId}: 1 row (line 2)` });
    // The batch already retried offers no second retry (which `topup retry` refuses too): it says
    // where its rows went, and that what failed again is retried from there.
    const again = await c.get(`/batches/${id}`);
    expect(again.text).not.toContain(`href="/batches/${id}/retry"`);
    expect(again.text).toContain(`Retried as <a href="/batches/${retryId}">${retryId}</a>`);
    expect(again.text).toContain(`topup retry ${retryId}`);
    const second = await c.get(`/batches/${id}/retry?players=1`);
    expect(second.status).toBe(409);
    expect(second.text).toContain(`already retried as batch <a href="/batches/${retryId}">${retryId}</a>`);
    expect(second.text).toContain(`topup retry ${id}</code> refuses a second retry`);
    expect(second.text).not.toMatch(/Buy th(ese|is)/);
  });
});

describe('console pages: a running batch, a workbook', () => {
  it('a running batch: its partial result downloads; Cancel says the rows already sent may still be charged', async () => {
    // 99999 always fails, after the processing time: that row stays on its way for a minute.
    const t = await startConsoleDaemon({ TOPUP_PARTIAL_RESULT_MS: '200' }, { fulfilment: { processingShare: 0, processingMs: [60_000, 60_000] } });
    const c = new Client(t.url);
    const id = await submitFile(c, 'running.csv', new Blob([csv([['pid', 'userId'], ['PUBG-60', '5123456789'], ['PUBG-60', '99999'], ['PUBG-325', '5123456790']])]));
    await waitFor('the partial result', async () => (await c.get(`/batches/${id}`)).text.includes('Partial result so far (CSV)'), 30_000, 200);
    // The first partial can be written before the two good rows complete (a loaded machine): wait,
    // on disk (a download is audited), until it shows them, then download it once.
    const onDisk = join(t.home.outbox, 'running.partial.result.csv');
    await waitFor('both good rows completed in the partial result', () => existsSync(onDisk) && parseResult(readFileSync(onDisk, 'utf8')).filter((r) => r.status === 'completed').length === 2, 30_000, 100);
    const partial = await c.get(`/batches/${id}/files/partial`);
    expect(partial.status).toBe(200);
    expect(parseResult(partial.text).map((r) => r.status)).toEqual(['completed', 'in progress', 'completed']);
    const confirm = await c.get(`/batches/${id}/cancel`);
    expect(confirm.text).toMatch(/<strong>0<\/strong> rows not sent yet \(0\.00 USD\) will be <strong>skipped<\/strong>/);
    expect(confirm.text).toMatch(/<strong>1<\/strong> rows already sent \(up to 0\.92 USD\) <strong>may still be charged<\/strong>/);
    expect((await c.post(`/batches/${id}/cancel`, {})).status).toBe(303);
    expect((await c.get(`/batches/${id}`)).text).toContain('(cancelling)');
    expect(auditOf(t).filter((a) => a.action === 'download').map((a) => a.detail)).toEqual(['partial: running.partial.result.csv']);
  });

  it('an .xlsx upload is checked and submitted like a CSV, and its result comes back as a workbook too', async () => {
    const t = await startConsoleDaemon();
    const c = new Client(t.url);
    const id = await submitFile(c, 'orders.xlsx', new Blob([readFileSync(new URL('../../examples/orders.xlsx', import.meta.url))]), [/Quote for orders\.xlsx/, /Submit \d+ rows for/]);
    const page = await finished(c, id);
    expect(page).toContain('Result (Excel)');
    const x = await c.get(`/batches/${id}/files/result-xlsx`);
    expect(x.status).toBe(200);
    expect(x.headers.get('content-type')).toBe('application/vnd.openxmlformats-officedocument.spreadsheetml.sheet');
  });
});

describe('console actions and the daemon\'s leases', () => {
  it('a retry from the console never releases the batches the daemon is driving (their outcomes need its lease)', async () => {
    const t = await startConsoleDaemon({}, { fulfilment: { processingShare: 0, processingMs: [300, 300] } });
    const c = new Client(t.url);
    const failed = await submitFile(c, 'fails.csv', new Blob([csv([['pid', 'userId'], ['PUBG-60', '99999']])]));
    await finished(c, failed);
    // A batch whose orders stay processing: the daemon holds its lease while it follows them.
    t.sb.admin.setFulfilment({ processingShare: 1, processingMs: [60_000, 60_000] });
    t.home.drop('long.csv', csv([['pid', 'userId'], ['PUBG-325', '5123456789']]));
    const long = await waitFor('the long batch placed', () => db(t, (d) => d.prepare(`SELECT b.id, b.owner FROM batches b JOIN rows r ON r.batch_id = b.id WHERE b.source_name = 'long.csv' AND r.state = 'processing'`).get() as { id: string; owner: string | null } | undefined), 30_000, 100);
    expect(long.owner).not.toBeNull();
    const took = (id: string): number => t.daemon.output().split('\n').filter((l) => l.includes('"msg":"took batch"') && l.includes(`"batch":"${id}"`)).length;
    const before = took(long.id);
    const r = await c.post(`/batches/${failed}/retry`, { players: '1' });
    expect(r.status).toBe(303);
    const retryId = decodeURIComponent(r.headers.get('location')!.replace('/batches/', ''));
    await waitFor('the retry batch taken by the daemon', () => took(retryId) > 0, 15_000, 100);
    const owner = db(t, (d) => (d.prepare('SELECT owner FROM batches WHERE id = ?').get(long.id) as { owner: string | null }).owner);
    expect(owner).toBe(long.owner);
    // Only the retry batch (left unowned by the console on purpose) was taken; the long one was never let go.
    await new Promise((res) => setTimeout(res, 1_000));
    expect(took(long.id)).toBe(before);
  });
});
