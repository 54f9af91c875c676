/**
 * Issue 20: five money defects an adversarial review reproduced on the code before it, each held
 * here by a test that failed there. Real SQLite stores in temp homes, the real client, loader,
 * sender, history check and runner; the supplier is the in-process sandbox where it can play the
 * part, and a scripted one on 127.0.0.1 where an answer must be exactly one a real deployment sent.
 * (The two-process reproduction of defect 1 with the real CLI is in test/daemon/money-safety.test.ts.)
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { claimFile } from '../../src/claim/claim.js';
import { loadBatch } from '../../src/claim/load.js';
import { loadConfig } from '../../src/config/config.js';
import { silentLogger } from '../../src/kernel/log.js';
import { openRuntime, type Runtime } from '../../src/runtime.js';
import type { RunningSandbox } from '../../src/sandbox/index.js';
import { sendRow } from '../../src/dispatch/sender.js';
import { verifyRow } from '../../src/poll/verify.js';
import { FOREIGN_ORDER_CODE, type NewRow } from '../../src/store/rows.js';
import { Runner } from '../../src/engine/runner.js';
import { csv, inProcessSandbox, tempHome, TEST_KEY, type TempHome } from '../e2e/harness.js';
import { scriptedWorld, senderDeps, type Answer } from './scripted-supplier.js';

let homes: TempHome[] = [];
let sandboxes: RunningSandbox[] = [];
let runtimes: Runtime[] = [];
afterEach(async () => {
  for (const rt of runtimes.splice(0)) await rt.close();
  for (const sb of sandboxes.splice(0)) await sb.close();
  for (const h of homes.splice(0)) h.remove();
  homes = [];
  sandboxes = [];
});

function runtime(home: TempHome, sb: RunningSandbox, env: Record<string, string> = {}): Runtime {
  const rt = openRuntime(loadConfig({ TOPUP_HOME: home.dir, TOPUP_API_KEY: TEST_KEY, TOPUP_API_URL: sb.url, ...env }), silentLogger(), sb.url);
  runtimes.push(rt);
  return rt;
}

describe('defect 1: an edited re-drop stored by two processes at once is bought once', () => {
  it('two loaders reading at the same time: the repeat is decided in the opening transaction, so the second opener skips', async () => {
    const home = tempHome();
    homes.push(home);
    const sb = await inProcessSandbox();
    sandboxes.push(sb);
    // Two processes (two connections, two owners) on one home.
    const a = runtime(home, sb);
    const b = runtime(home, sb);
    const buys = [['PUBG-60', '5123456701'], ['PUBG-60', '5123456702'], ['PUBG-325', '5123456703'], ['PUBG-60', '5123456704'], ['PUBG-60', '5123456705']];
    // Invalid filler keeps both loaders reading (and awaiting) long enough to overlap.
    const filler = Array.from({ length: 6_000 }, (_, i) => ['NOPE-1', String(7_000_000_000 + i)]);
    const fileA = join(home.dir, 'a.csv');
    const fileB = join(home.dir, 'b.csv');
    writeFileSync(fileA, csv([['pid', 'userId'], ...buys, ...filler]));
    writeFileSync(fileB, csv([['pid', 'userId', 'note'], ...buys.map((r) => [...r, 'edited']), ...filler.map((r) => [...r, ''])]));
    const batchA = await claimFile(a, fileA, { origin: 'submit', own: true, move: false });
    const batchB = await claimFile(b, fileB, { origin: 'submit', own: true, move: false });

    const [la, lb] = await Promise.all([loadBatch(a, batchA), loadBatch(b, batchB)]);
    expect(la).toMatchObject({ loaded: true });
    expect(lb).toMatchObject({ loaded: true });
    const pending = (id: string): number => a.rows.counts(id).pending;
    const skipped = (id: string): number => a.rows.counts(id).skipped;
    // Five purchases in all, whichever file opened first; the other's five rows are skipped, naming them.
    expect(pending(batchA.id) + pending(batchB.id)).toBe(5);
    expect(skipped(batchA.id) + skipped(batchB.id)).toBe(5);
    const loser = pending(batchA.id) === 5 ? batchB.id : batchA.id;
    const winner = loser === batchA.id ? batchB.id : batchA.id;
    const skippedRows = a.rows.inStates(loser, ['skipped']);
    expect(skippedRows.map((r) => r.line)).toEqual([2, 3, 4, 5, 6]);
    for (const r of skippedRows) {
      expect(r).toMatchObject({ rejectCode: 'TOPUP_REPEATED_ROW', trxid: null, request: null });
      expect(r.error).toContain(`of batch ${winner}`);
    }
  });
});

describe('defect 2: a reused trxid answered with an older order never completes a key/card row', () => {
  const keyRow = (quantity = 3): NewRow => ({
    idx: 0,
    line: 2,
    cells: ['STEAM-5', String(quantity), 'SHOP-1001'],
    request: { pid: 'STEAM-5', trxid: 'SHOP-1001', quantity },
    error: null,
    productId: 'STEAM-5',
    slug: 'steam',
    packName: 'Steam 5 USD',
    quantity,
    unitPriceUsd: 5.1,
    expectedUsd: 5.1 * quantity,
  });
  // Yesterday's order for SHOP-1001: one Steam card, one code (spec 2.3: no player, pid or quantity).
  const yesterday = { orderCreated: true, orderId: 'ORD-OLD', status: 'completed', game: 'steam', packName: 'Steam 5 USD', amountUsd: 5.1, codes: ['OLD-CODE-1'] };

  for (const style of ['spec', 'real-world'] as const) {
    it(`the first send answered with a replay (${style} answer) goes to review, with the old order named and no codes taken`, async () => {
      const w = await scriptedWorld([keyRow()]);
      const body = style === 'spec'
        ? { ...yesterday, idempotentReplay: true }
        : { status: 'Success', data: { id: 'ORD-OLD', status: 'Success', game: 'steam', packName: 'Steam 5 USD', amountUsd: '5.10', codes: 'OLD-CODE-1', idempotentReplay: 'true' } };
      w.set(() => ({ body }));
      expect(await sendRow(senderDeps(w.rt), w.rt.rows.get('b1', 0)!)).toBe('review');
      const row = w.rt.rows.get('b1', 0)!;
      expect(row).toMatchObject({ state: 'review', orderId: null, codes: [], rejectCode: FOREIGN_ORDER_CODE });
      expect(row.error).toMatch(/ORD-OLD.*existed before this row was first sent.*key\/card order names no buyer/);
    });
  }

  it('an order whose creation time is before the first send is the same, on a resend too', async () => {
    const w = await scriptedWorld([keyRow()]);
    const t = Date.now() - 60_000;
    w.sql(0, `state = 'resending', attempts = 1, first_sent_at = ?, last_sent_at = ?, doubt_since = ?, doubt_tries = 1`, t, t, t);
    w.set(() => ({ body: { ...yesterday, idempotentReplay: true, createdAt: new Date(Date.now() - 86_400_000).toISOString() } }));
    expect(await sendRow(senderDeps(w.rt), w.rt.rows.get('b1', 0)!)).toBe('review');
    expect(w.rt.rows.get('b1', 0)).toMatchObject({ state: 'review', orderId: null, codes: [] });
  });

  it('a top-up replayed on its first send is taken only when it names every field of the purchase (the same file after a lost database)', async () => {
    const top: NewRow = { idx: 0, line: 2, cells: ['PUBG-60', '5123456789'], request: { pid: 'PUBG-60', trxid: 'tu-same', userId: '5123456789' }, error: null, productId: 'PUBG-60', slug: 'pubg', packName: '60 UC', quantity: 1, unitPriceUsd: 0.92, expectedUsd: 0.92 };
    const full = await scriptedWorld([top]);
    full.set(() => ({ body: { orderCreated: true, orderId: 'ORD-9', status: 'completed', game: 'pubg', packName: '60 UC', userId: '5123456789', idempotentReplay: true } }));
    expect(await sendRow(senderDeps(full.rt), full.rt.rows.get('b1', 0)!)).toBe('placed');
    expect(full.rt.rows.get('b1', 0)).toMatchObject({ state: 'completed', orderId: 'ORD-9' });

    const sparse = await scriptedWorld([top]);
    sparse.set(() => ({ body: { orderCreated: true, orderId: 'ORD-9', status: 'completed', game: 'pubg', packName: '60 UC', idempotentReplay: true } }));
    expect(await sendRow(senderDeps(sparse.rt), sparse.rt.rows.get('b1', 0)!)).toBe('review');
    expect(sparse.rt.rows.get('b1', 0)!.error).toMatch(/does not name this row's userId/);
  });

  it('the review recheck never settles such a row by its trxid (that can only find the older order again)', async () => {
    const w = await scriptedWorld([keyRow()]);
    w.set(() => ({ body: { ...yesterday, idempotentReplay: true } }));
    await sendRow(senderDeps(w.rt), w.rt.rows.get('b1', 0)!);
    const { ReviewRecheck } = await import('../../src/poll/review-recheck.js');
    w.sql(0, 'next_poll_at = 0');
    w.set((req) => (req.url?.startsWith('/history') ? { body: { success: true, count: 1, orders: [{ ...yesterday, trxid: 'SHOP-1001' }] } } : { status: 404, body: { success: false, error: 'ORDER NOT FOUND' } }));
    expect(await new ReviewRecheck(w.rt).tick()).toBe(0);
    expect(w.rt.rows.get('b1', 0)).toMatchObject({ state: 'review', orderId: null, codes: [] });
  });
});

describe('defect 3: the history check never gives a key/card row an order this home did not record', () => {
  it('first send lost behind a proxy 502, resend refused INSUFFICIENT STOCK, history holds a card bought from the panel: review, not completed', async () => {
    const row: NewRow = { idx: 0, line: 2, cells: ['STEAM-5', '1'], request: { pid: 'STEAM-5', trxid: 'tu-card', quantity: 1 }, error: null, productId: 'STEAM-5', slug: 'steam', packName: 'Steam 5 USD', quantity: 1, unitPriceUsd: 5.1, expectedUsd: 5.1 };
    const w = await scriptedWorld([row]);
    const deps = senderDeps(w.rt);
    const panelOrder = { orderId: 'ORD-PANEL', status: 'completed', game: 'steam', packName: 'Steam 5 USD', amountUsd: 5.1, codes: ['PANEL-CODE'] };
    let post = 0;
    w.set((req): Answer => {
      if (req.method === 'POST') return ++post === 1 ? { status: 502, body: '<html><body>502 Bad Gateway</body></html>' } : { status: 400, body: { orderCreated: false, status: 'cancelled', game: 'steam', error: 'INSUFFICIENT STOCK' } };
      if (req.url?.startsWith('/history')) return { body: { success: true, count: 1, orders: [panelOrder] } };
      return { status: 404, body: { success: false, error: 'not scripted' } };
    });
    expect(await sendRow(deps, w.rt.rows.get('b1', 0)!)).toBe('retry');
    w.sql(0, 'next_try_at = 0');
    expect(await sendRow(deps, w.rt.rows.get('b1', 0)!)).toBe('verify');
    expect(w.rt.rows.get('b1', 0)!.state).toBe('verifying');
    expect(await verifyRow(w.rt, w.rt.rows.get('b1', 0)!)).toBe('review');
    const after = w.rt.rows.get('b1', 0)!;
    expect(after).toMatchObject({ state: 'review', orderId: null, codes: [] });
    expect(after.error).toMatch(/key\/card order names no buyer/);
  });

  it('an order whose creation time is before the row\'s first send is not a candidate at all (a top-up is then read as not placed)', async () => {
    const w = await scriptedWorld([{ idx: 0, line: 2, cells: ['PUBG-60', '5123456789'], request: { pid: 'PUBG-60', trxid: 'tu-x', userId: '5123456789' }, error: null, productId: 'PUBG-60', slug: 'pubg', packName: '60 UC', quantity: 1, unitPriceUsd: 0.92, expectedUsd: 0.92 }]);
    const t = Date.now() - 60_000;
    w.sql(0, `state = 'verifying', attempts = 2, first_sent_at = ?, last_sent_at = ?, error = 'INVALID PACK'`, t, t);
    const old = { orderId: 'ORD-OLD', status: 'completed', game: 'pubg', packName: '60 UC', userId: '5123456789', createdAt: new Date(t - 86_400_000).toISOString() };
    w.set(() => ({ body: { success: true, count: 1, orders: [old] } }));
    expect(await verifyRow(w.rt, w.rt.rows.get('b1', 0)!)).toBe('not-placed');
    expect(w.rt.rows.get('b1', 0)).toMatchObject({ state: 'rejected', orderId: null });
  });
});

describe('defect 4: a graceful stop during a Retry-After hold leaves no row in `sending`', () => {
  it('the intent is committed, a 429 holds the request, the stop aborts the wait: the request never left, so the row is pending again (never `sending`), and a later first send still knows it is one', async () => {
    const w = await scriptedWorld([{ idx: 0, line: 2, cells: ['PUBG-60', '5123456789'], request: { pid: 'PUBG-60', trxid: 'tu-hold', userId: '5123456789' }, error: null, productId: 'PUBG-60', slug: 'pubg', packName: '60 UC', quantity: 1, unitPriceUsd: 0.92, expectedUsd: 0.92 }]);
    const stop = new AbortController();
    w.set(() => ({ body: { orderCreated: true, orderId: 'ORD-1', status: 'processing' } }));
    // A 429 with Retry-After: 25 lands just as the intent is committed: the request waits in the hold.
    const sent = sendRow(
      (() => {
        const account = { ...w.rt.account, client: holdingClient(w.rt, () => stop.abort(new Error('SIGTERM'))) };
        return { ...senderDeps(w.rt), rt: { ...w.rt, account, accountOf: () => account } as Runtime };
      })(),
      w.rt.rows.get('b1', 0)!,
      stop.signal,
    );
    expect(await sent).toBe('not-sent');
    const row = w.rt.rows.get('b1', 0)!;
    expect(row.state).toBe('pending');
    expect(w.seen.filter((s) => s.startsWith('POST'))).toEqual([]);
  });

  it('a `sending` row of a batch released without an answer is taken over by whoever takes the lease next (no owner was dead)', async () => {
    const w = await scriptedWorld([{ idx: 0, line: 2, cells: ['PUBG-60', '5123456789'], request: { pid: 'PUBG-60', trxid: 'tu-rel', userId: '5123456789' }, error: null, productId: 'PUBG-60', slug: 'pubg', packName: '60 UC', quantity: 1, unitPriceUsd: 0.92, expectedUsd: 0.92 }]);
    const t = Date.now() - 1_000;
    w.sql(0, `state = 'sending', attempts = 1, first_sent_at = ?, last_sent_at = ?, next_try_at = ?`, t, t, t + 15_000);
    w.rt.batches.releaseAll(w.rt.owner);
    expect(w.rt.batches.acquire('b1', 'next-process:1:aa', Date.now(), 60_000)).toBe(true);
    expect(w.rt.rows.get('b1', 0)).toMatchObject({ state: 'resending', doubtSince: t, nextTryAt: 0 });
  });

  it('a `sending` row whose send ended without an answer written is resent by the process that holds it (no stall)', async () => {
    const home = tempHome();
    homes.push(home);
    const sb = await inProcessSandbox();
    sandboxes.push(sb);
    const rt = runtime(home, sb, { TOPUP_POLL_INTERVAL_MS: '200' });
    const file = join(home.dir, 'o.csv');
    writeFileSync(file, csv([['pid', 'userId'], ['PUBG-60', '5123456789'], ['PUBG-60', '5123456780']]));
    const batch = await claimFile(rt, file, { origin: 'submit', own: true, move: false });
    await loadBatch(rt, batch);
    // As a send killed by an uncaught failure after its intent would leave it.
    const t = Date.now() - 30_000;
    rt.db.prepare(`UPDATE rows SET state = 'sending', attempts = 1, first_sent_at = ?, last_sent_at = ?, next_try_at = ? WHERE batch_id = ? AND idx = 0`).run(t, t, t, batch.id);
    const runner = new Runner(rt, { once: true, onlyBatch: batch.id });
    await runner.run();
    expect(rt.rows.counts(batch.id)).toMatchObject({ completed: 2, sending: 0 });
    expect(sb.admin.ledger().orders).toHaveLength(2);
  });
});

describe('defect 5: a failure body carrying an `id` is never taken as the row\'s order', () => {
  for (const [status, body] of [
    [500, { success: false, error: 'INTERNAL ERROR', id: 'req-7f3a9c' }],
    [502, { status: 'error', message: 'Bad gateway', id: '8c1d2e' }],
  ] as const) {
    it(`${status} ${JSON.stringify(body)}: the row stays in doubt and the same trxid is sent again, which finds the order`, async () => {
      const w = await scriptedWorld([{ idx: 0, line: 2, cells: ['PUBG-60', '5123456789'], request: { pid: 'PUBG-60', trxid: 'tu-gw', userId: '5123456789' }, error: null, productId: 'PUBG-60', slug: 'pubg', packName: '60 UC', quantity: 1, unitPriceUsd: 0.92, expectedUsd: 0.92 }]);
      let post = 0;
      w.set(() => (++post === 1 ? { status, body } : { body: { orderCreated: true, orderId: 'ORD-REAL', status: 'processing', game: 'pubg', packName: '60 UC', userId: '5123456789', idempotentReplay: true } }));
      const deps = senderDeps(w.rt);
      expect(await sendRow(deps, w.rt.rows.get('b1', 0)!)).toBe('retry');
      expect(w.rt.rows.get('b1', 0)).toMatchObject({ state: 'resending', orderId: null });
      w.sql(0, 'next_try_at = 0');
      expect(await sendRow(deps, w.rt.rows.get('b1', 0)!)).toBe('placed');
      expect(w.rt.rows.get('b1', 0)).toMatchObject({ state: 'processing', orderId: 'ORD-REAL' });
    });
  }
});

/**
 * The runtime's client, but with a Retry-After hold that starts the moment the intent is committed
 * (as a 429 for another call arriving then would), and a stop (`onHold`) during the hold.
 */
function holdingClient(rt: Runtime, onHold: () => void): Runtime['account']['client'] {
  const client = rt.account.client;
  return new Proxy(client, {
    get(target, prop, receiver) {
      if (prop !== 'submitOrder') return Reflect.get(target, prop, receiver) as unknown;
      return (body: Parameters<typeof client.submitOrder>[0], opts: Parameters<typeof client.submitOrder>[1]) =>
        target.submitOrder(body, {
          ...opts,
          beforeSend: () => {
            opts?.beforeSend?.();
            rt.account.scheduler.holdOff(25_000);
            setTimeout(onHold, 50);
          },
        });
    },
  });
}
