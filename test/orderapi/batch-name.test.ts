/**
 * Issue 30, item 8: POST /api/v1/batches?name= with a path in it was quietly renamed
 * (`../../evil.csv` became `evil.csv`), and a name with nothing a file name can keep became
 * `upload.csv`. Both are refused now, 422 INVALID_NAME naming the field, and nothing is stored or
 * written anywhere (not outside outbox/, not inside).
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { releaseAfterEach } from '../e2e/release.js';
import { apiWorld, closeWorlds } from './world.js';

releaseAfterEach();
afterEach(closeWorlds);

const csvBody = 'trxid,pid,userId\nN-1,PUBG-60,5123456789\n';

describe('POST /api/v1/batches ?name=', () => {
  it.each([
    ['../../evil.csv', /has a path in it \(\/ or \\\): give a file name only, e\.g\. "evil\.csv"/],
    ['..\\..\\evil.csv', /has a path in it/],
    ['/etc/cron.d/evil', /has a path in it/],
    ['sub/orders.csv', /has a path in it.*"orders\.csv"/],
    ['../', /has a path in it \(\/ or \\\): give a file name only$/],
    ['???.csv', /has nothing a file name can keep \(letters, digits, spaces, \. _ - \( \) \+ ,\): give a name like "shop-day\.csv"/],
    ['...', /has nothing a file name can keep/],
    ['%', /has nothing a file name can keep/],
  ])('refuses %j with 422 INVALID_NAME naming the field, and stores nothing', async (name, message) => {
    const w = await apiWorld();
    const r = await w.call('POST', `/api/v1/batches?name=${encodeURIComponent(name)}`, { body: csvBody, type: 'text/csv' });
    expect(r.status, r.text).toBe(422);
    expect(r.json.code).toBe('INVALID_NAME');
    expect(r.json.errors).toEqual([{ field: 'name', reason: expect.stringMatching(message) }]);
    expect(r.json.detail).toMatch(message);
    expect(w.rt.batches.list()).toEqual([]);
    expect(readdirSync(w.rt.config.outboxDir)).toEqual([]);
    expect(readdirSync(w.rt.config.jobsDir).filter((n) => !n.startsWith('topup.db'))).toEqual([]);
    expect(existsSync(join(w.home.dir, '..', 'evil.csv'))).toBe(false);
    expect(existsSync(join(w.home.dir, '..', '..', 'evil.csv'))).toBe(false);
  });

  it('keeps a plain name, cleaning only what a file name cannot hold', async () => {
    const w = await apiWorld();
    const plain = await w.call('POST', '/api/v1/batches?name=shop%20day', { body: csvBody, type: 'text/csv' });
    expect(plain.status, plain.text).toBe(202);
    expect(plain.json.name).toBe('shop day.csv');
    const odd = await w.call('POST', `/api/v1/batches?name=${encodeURIComponent('shop:day?.csv')}`, { body: 'trxid,pid,userId\nN-2,PUBG-60,5123456789\n', type: 'text/csv' });
    expect(odd.status, odd.text).toBe(202);
    expect(odd.json.name).toBe('shop_day_.csv');
    const upload = await w.call('POST', '/api/v1/batches?name=upload', { body: 'trxid,pid,userId\nN-3,PUBG-60,5123456789\n', type: 'text/csv' });
    expect(upload.status, upload.text).toBe(202);
    expect(upload.json.name).toBe('upload.csv');
  });
});
