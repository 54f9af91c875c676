/**
 * Issue 30 follow-up (new-user trial), the console's batch page: the Progress table's numbers are
 * right-aligned, and their headers were left-aligned, so each number stood under the next column's
 * name; and one failed row offered "Retry these 1 row". A real daemon with its console, over HTTP.
 */
import { describe, expect, it } from 'vitest';
import { csv, waitFor } from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';
import { Client, startConsoleDaemon } from './helpers.js';

releaseAfterEach();

describe('the batch page reads as meant', () => {
  it('aligns each figure header with its numbers; one row is "this row", not "these 1 row"', async () => {
    const t = await startConsoleDaemon();
    const c = new Client(t.url);
    await c.get('/upload');
    const form = new FormData();
    // 99999: the sandbox's player id that always fails (INVALID PLAYER, refunded).
    form.set('file', new Blob([csv([['pid', 'userId'], ['PUBG-60', '99999'], ['PUBG-325', '5123456789']])]), 'two.csv');
    const up = await c.post('/upload', form);
    expect(up.status, up.text).toBe(303);
    const check = up.headers.get('location')!;
    await c.get(check);
    expect((await c.post(`${check}/submit`, {})).status).toBe(303);
    const to = await waitFor('the batch page', async () => {
      const r = await c.get(check);
      return r.status === 303 ? r.headers.get('location')! : undefined;
    }, 30_000, 100);
    const id = decodeURIComponent(to.replace('/batches/', ''));
    const page = await waitFor('the batch finished', async () => {
      const r = await c.get(`/batches/${id}`);
      return r.text.includes('Result (CSV)') ? r.text : undefined;
    }, 60_000, 200);

    // Each header over a right-aligned number (td class="num") is right-aligned too.
    const head = /<thead><tr>(<th scope="col"[^>]*>State<\/th>.*?)<\/tr><\/thead><tbody><tr>(.*?)<\/tr>/s.exec(page);
    expect(head, page).not.toBeNull();
    const ths = [...head![1]!.matchAll(/<th scope="col"( class="num")?>([^<]+)<\/th>/g)].map((m) => [m[2], m[1] !== undefined]);
    const tds = [...head![2]!.matchAll(/<td( class="num")?[^>]*>/g)].map((m) => m[1] !== undefined);
    expect(ths.map(([name]) => name)).toEqual(['State', 'Done', 'Sent', 'Completed', 'Failed', 'Spent', 'ETA']);
    expect(ths.map(([, num]) => num)).toEqual(tds);
    expect(tds.filter(Boolean)).toHaveLength(4);
    const css = await c.get('/assets/console.css');
    expect(css.text).toMatch(/th\.num[^{]*\{[^}]*text-align: right/);

    const retry = await c.get(`/batches/${id}/retry`);
    expect(retry.status).toBe(200);
    expect(retry.text).toContain('Retry this row with the same ids…');
    expect(retry.text).not.toMatch(/these 1 row/);
    const confirm = await c.get(`/batches/${id}/retry?players=1`);
    expect(confirm.text).toContain('Buy this row again for about 0.92 USD');
    expect(confirm.text).not.toMatch(/these 1 rows?/);
  }, 120_000);
});
