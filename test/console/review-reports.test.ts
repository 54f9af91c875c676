/**
 * Issue 13: the review queue (rows that really went to review through the daemon, resolved from
 * the console through the same store operation as `topup review resolve`), the reports page
 * (run a job now, download its file), and the live feed (server-sent events).
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { csv, waitFor } from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';
import { Client, startConsoleDaemon, type ConsoleUnderTest } from './helpers.js';

releaseAfterEach();

function rowOf(t: ConsoleUnderTest, line: number): { state: string; resolution: string | null; resolvedBy: string | null; error: string | null } {
  const d = new Database(join(t.home.jobs, 'topup.db'), { readonly: true, fileMustExist: true });
  try {
    return d.prepare('SELECT state, resolution, resolved_by AS resolvedBy, error FROM rows WHERE line = ?').get(line) as never;
  } finally {
    d.close();
  }
}

describe('console: review queue, reports, live feed', () => {
  it('a row that went to review is resolved from the console: a wrong order id is refused, "not charged" settles it and rewrites the results', async () => {
    // Every send answered 500: resent, then history shows nothing, so review (test/daemon/money-and-pauses).
    const t = await startConsoleDaemon({ TOPUP_REVIEW_AFTER_MS: '2000', TOPUP_REQUEST_TIMEOUT_MS: '1000' }, { faults: { error5xxBeforeShare: 1 } });
    const c = new Client(t.url);
    await c.get('/login');
    await c.post('/login', { name: 'bo', next: '/' });
    t.home.drop('stuck.csv', csv([['pid', 'userId'], ['PUBG-60', '5123456789']]));
    await waitFor('the row in review', () => existsSync(join(t.home.outbox, 'stuck.result.csv')), 60_000, 200);
    t.sb.admin.setFaults({ error5xxBeforeShare: 0 });
    const queue = await c.get('/review');
    expect(queue.text).toContain('Review (1)');
    expect(queue.text).toMatch(/REVIEW: no attempt got a definite answer/);
    expect(queue.text).toMatch(/Last answer seen<\/dt><dd class="answer">POST \/orders → 500/);
    const batchId = /data-row="([^":]+):2"/.exec(queue.text)![1]!;

    const wrong = await c.post('/review/resolve', { batch: batchId, line: '2', kind: 'charged', orderId: 'ORD-NOT-THERE' });
    expect(wrong.status).toBe(400);
    expect(wrong.text).toMatch(/was not resolved: the API does not know order ORD-NOT-THERE/);
    expect(rowOf(t, 2).state).toBe('review');

    const ok = await c.post('/review/resolve', { batch: batchId, line: '2', kind: 'not-charged' });
    expect(ok.status).toBe(303);
    expect((await c.get(ok.headers.get('location')!)).text).toContain(`Resolved ${batchId}:2 as not-charged (now rejected).`);
    expect(rowOf(t, 2)).toMatchObject({ state: 'rejected', resolution: 'not-charged', resolvedBy: 'bo (console)' });
    expect(rowOf(t, 2).error).toMatch(/^NOT CHARGED \(resolved by bo \(console\) on /);
    await waitFor('results written again', () => existsSync(join(t.home.outbox, 'stuck.reviewed.result.csv')), 30_000, 100);
    expect((await c.get('/review')).text).toContain('No rows waiting for review.');
    const d = new Database(join(t.home.jobs, 'topup.db'), { readonly: true });
    const audit = d.prepare(`SELECT action, outcome, line FROM audit WHERE action = 'resolve' ORDER BY id`).all();
    d.close();
    expect(audit).toEqual([{ action: 'resolve', outcome: 'failed', line: 2 }, { action: 'resolve', outcome: 'ok', line: 2 }]);
  });

  it('Reports: "run now" runs a job and its file downloads; a job that cannot run here is refused', async () => {
    const t = await startConsoleDaemon();
    const c = new Client(t.url);
    await c.get('/reports');
    const r = await c.post('/reports/run/balance-report', {});
    expect(r.status).toBe(303);
    const reports = join(t.home.outbox, 'reports');
    await waitFor('balance.csv', () => existsSync(reports) && readdirSync(reports).includes('balance.csv'), 30_000, 100);
    const page = await waitFor('the job result on the page', async () => {
      const p = await c.get('/reports');
      return /balance-report<\/th><td>off<\/td>\s*<td><time[^>]*>[^<]*<\/time> <span class="muted">\([^)]*\)<\/span> ok/.test(p.text) ? p.text : undefined;
    });
    expect(page).toContain('href="/reports/files/balance.csv"');
    const file = await c.get('/reports/files/balance.csv');
    expect(file.status).toBe(200);
    expect(file.text).toMatch(/^at,balanceUsd,currency,reservedUsd,mode\n.*,1000,USD,0,LIVE\n$/);
    expect((await c.get('/reports/files/..%2Ftopup.db')).status).toBe(404);
    expect((await c.post('/reports/run/low-balance', {})).status).toBe(400);
  });

  it('/events streams the figures of running batches to the page, whole, without a reload', async () => {
    const t = await startConsoleDaemon({}, { fulfilment: { processingShare: 1, processingMs: [1500, 1500] } });
    const c = new Client(t.url);
    await c.get('/');
    const ac = new AbortController();
    const res = await fetch(`${t.url}/events`, { headers: { cookie: c.cookie }, signal: ac.signal });
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    t.home.drop('live.csv', csv([['pid', 'userId'], ['PUBG-60', '5123456789'], ['PUBG-60', '5123456790']]));
    const reader = res.body!.getReader();
    const seen: { state: string; done: number; rows: number; finished: boolean }[] = [];
    let buf = '';
    const until = Date.now() + 30_000;
    while (Date.now() < until && !seen.some((b) => b.finished)) {
      const { value, done } = await reader.read();
      if (done) break;
      buf += new TextDecoder().decode(value);
      for (const m of buf.matchAll(/event: progress\ndata: (.*)\n\n/g)) {
        const p = JSON.parse(m[1]!) as { batches: { file: string; state: string; done: number; rows: number; finished: boolean }[] };
        seen.push(...p.batches.filter((b) => b.file === 'live.csv'));
      }
      buf = buf.slice(buf.lastIndexOf('\n\n') + 2);
    }
    ac.abort();
    expect(seen.some((b) => !b.finished && b.rows === 2)).toBe(true);
    expect(seen.at(-1)).toMatchObject({ finished: true, done: 2, rows: 2, state: 'done' });
  });
});
