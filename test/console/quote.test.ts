/**
 * Issue 21, item 7 (the quote) and reproduction 1 seen in the console: the check page of an
 * upload shows what the total is made of, by game and pack, and how the file's columns were read
 * (which would have caught a `Qty` column being ignored), with the warnings about columns that
 * look like order fields, the hint about the reseller's own order numbers, and the repeats of an
 * earlier batch summed up. A real daemon's console over HTTP, against the real sandbox.
 */
import { describe, expect, it } from 'vitest';
import { csv, waitFor } from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';
import { Client, startConsoleDaemon } from './helpers.js';

releaseAfterEach();

async function check(c: Client, name: string, content: string): Promise<{ url: string; text: string }> {
  await c.get('/upload');
  const form = new FormData();
  form.set('file', new Blob([content]), name);
  const up = await c.post('/upload', form);
  expect(up.status, up.text).toBe(303);
  const url = up.headers.get('location')!;
  return { url, text: (await c.get(url)).text };
}

/** The text of the elements matched, tags dropped, spaces squeezed. */
const textOf = (html: string): string => html.replace(/<[^>]+>/g, ' ').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/\s+/g, ' ').trim();
const section = (html: string, attr: string): string => {
  const m = new RegExp(`<table ${attr}>([\\s\\S]*?)</table>`).exec(html);
  if (!m) throw new Error(`no table ${attr} on the page`);
  return m[1]!;
};

describe('the console\'s quote', () => {
  it('shows the breakdown by game and pack and how each column was read; Qty is bought as written', async () => {
    const t = await startConsoleDaemon();
    const c = new Client(t.url);
    await c.get('/login');
    await c.post('/login', { name: 'ana', next: '/' });
    const content = 'pid;userId;Qty;Order No;Player-Id2\r\nKEY-PUBG-60;;3;SO-1;\r\nSTEAM-5;;2;SO-2;\r\nPUBG-60;5123456789;;SO-3;\r\nPUBG-60;5123456780;1;SO-4;\r\n';
    const { url, text } = await check(c, 'shop.csv', content);
    expect(text).toMatch(/<strong data-quote-total>14\.84 USD<\/strong>/); // 3 × 0.90 + 2 × 5.15 + 2 × 0.92

    const packs = section(text, 'data-by-pack');
    expect(textOf(/<tbody>([\s\S]*?)<\/tbody>/.exec(packs)![1]!)).toBe(
      'PUBG Mobile 60 UC PUBG-60 2 2 1.84 USD PUBG Mobile 60 UC code KEY-PUBG-60 1 3 2.70 USD Steam Steam $5 STEAM-5 1 2 10.30 USD',
    );
    expect(textOf(/<tfoot>([\s\S]*?)<\/tfoot>/.exec(packs)![1]!)).toBe('Total 4 7 14.84 USD');

    const columns = section(text, 'data-columns');
    expect(columns).toMatch(/<tr data-column="Qty"><td class="num">3<\/td><td>Qty<\/td><td>quantity<\/td><td>read as quantity \(a common spelling\)<\/td><\/tr>/);
    expect(columns).toMatch(/<tr data-column="userId">.*read as userId for PUBG Mobile/);
    expect(columns).toMatch(/<tr data-column="Player-Id2">.*looks like the userId, but is not a name topup reads/);
    expect(text).toMatch(/<p class="muted" data-carried>Carried through to the result as your own \(1\): Order No\.<\/p>/);
    expect(textOf(/<ul class="alerts" data-warnings>([\s\S]*?)<\/ul>/.exec(text)![1]!)).toMatch(/^column "Player-Id2" looks like the userId but is not a name topup reads/);
    expect(textOf(/<ul class="alerts" data-hints>([\s\S]*?)<\/ul>/.exec(text)![1]!)).toMatch(/^Hint: column "Order No" looks like your own order numbers: rename it to "trxid"/);

    expect((await c.post(`${url}/submit`, {})).status).toBe(303);
    await waitFor('the four orders', () => t.sb.admin.ledger().orders.filter((o) => o.status === 'completed').length === 4 || undefined, 30_000, 100);
    const byPid = Object.fromEntries(t.sb.admin.ledger().orders.map((o) => [`${o.pid}/${o.quantity}`, (o.codes as string[] | undefined)?.length ?? 0]));
    expect(byPid).toMatchObject({ 'KEY-PUBG-60/3': 3, 'STEAM-5/2': 2 });
  });

  it('a header-only file cannot be submitted and says it has no order rows; repeats of an earlier batch are summed up, not listed row by row', async () => {
    const t = await startConsoleDaemon();
    const c = new Client(t.url);
    await c.get('/login');
    await c.post('/login', { name: 'ana', next: '/' });

    const empty = await check(c, 'empty.csv', 'pid,userId\n');
    expect(empty.text).toContain('The file has no order rows, only its header: there is nothing to order.');
    expect(empty.text).toContain('the file has no order rows (only its header)');
    expect(empty.text).not.toContain('Every row is valid.');
    expect(empty.text).not.toMatch(/<button type="submit" class="primary">Submit/);
    expect((await c.post(`${empty.url}/submit`, {})).status).toBe(400);

    const rows = Array.from({ length: 30 }, (_, i) => ['PUBG-60', String(5_123_400_000 + i)]);
    t.home.drop('morning.csv', csv([['pid', 'userId'], ...rows]));
    await waitFor('the morning batch', () => t.sb.admin.ledger().orders.length === 30 || undefined, 30_000, 100);
    await waitFor('the morning batch stored as done', async () => (await c.get('/batches')).text.includes('morning.csv') || undefined, 30_000, 200);
    const again = await check(c, 'morning-v2.csv', csv([['pid', 'userId', 'note'], ...rows.map((r) => [...r, 'again']), ['PUBG-60', '5123499999', 'new']]));
    expect(again.text).toMatch(/31 \(1 to send, 30 with problems, of which 30 repeat earlier purchases\)/);
    const repeats = textOf(/<ul class="alerts" data-repeats>([\s\S]*?)<\/ul>/.exec(again.text)![1]!);
    expect(repeats).toMatch(/^30 rows \(the first on line 2\) repeat purchases of batch b\S+ \(file morning\.csv\) made within 24 h: they will be skipped, not bought again; give rows their own trxid to buy them$/);
    expect(again.text).not.toContain('Row problems');
    expect(again.text).toMatch(/Submit 1 rows for 0\.92 USD/);
  });
});
