/**
 * The order desk (src/orders/desk.ts) with real parts: a real SQLite home, the in-process sandbox
 * on 127.0.0.1, the real runner. An API order is stored before its 202, answered as itself when
 * repeated, refused when its trxid is another purchase, validated like a file row, and driven to
 * its end by the same engine, with every change of status in order_events.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { silentLogger } from '../../src/kernel/log.js';
import { openRuntime, type Runtime } from '../../src/runtime.js';
import type { RunningSandbox } from '../../src/sandbox/index.js';
import { Runner } from '../../src/engine/runner.js';
import { createOrderDesk, bodyHash } from '../../src/orders/desk.js';
import { systemClock, type Clock } from '../../src/kernel/clock.js';
import { existsSync, readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { join } from 'node:path';
import { inProcessSandbox, parseResult, tempHome, TEST_KEY, waitFor, type TempHome } from '../e2e/harness.js';

/** Real time, shifted: the wall clock reads `offset` ms ahead (to stand just before midnight UTC). */
class ShiftedClock implements Clock {
  offset = 0;
  now = (): number => systemClock.now() + this.offset;
  mono = systemClock.mono;
  sleep = systemClock.sleep;
  yield = systemClock.yield;
  every = systemClock.every;
}

let homes: TempHome[] = [];
let sandboxes: RunningSandbox[] = [];
let runtimes: Runtime[] = [];
afterEach(async () => {
  for (const rt of runtimes.splice(0)) await rt.close();
  for (const sb of sandboxes.splice(0)) await sb.close();
  for (const h of homes.splice(0)) h.remove();
});

async function setup(env: Record<string, string> = {}, sbOpts: Parameters<typeof inProcessSandbox>[0] = {}, clock?: Clock) {
  const home = tempHome();
  homes.push(home);
  const sb = await inProcessSandbox(sbOpts);
  sandboxes.push(sb);
  const rt = openRuntime(loadConfig({ TOPUP_HOME: home.dir, TOPUP_API_KEY: TEST_KEY, TOPUP_API_URL: sb.url, TOPUP_POLL_INTERVAL_MS: '200', ...env }), silentLogger(), sb.url, clock ? { clock } : {});
  runtimes.push(rt);
  let woken = 0;
  const desk = createOrderDesk(rt, () => woken++);
  return { home, sb, rt, desk, woken: () => woken };
}

describe('the order desk', () => {
  it('accepts an order durably (202), answers the same body as the same order (200) and another body as a conflict (409)', async () => {
    const { rt, desk, woken } = await setup();
    const a = await desk.accept({ trxid: 'SHOP-1', pid: 'PUBG-60', userId: '5123456701', meta: { shopOrder: 77 } });
    expect(a.kind).toBe('accepted');
    if (a.kind !== 'accepted') return;
    expect(a.order).toMatchObject({ trxid: 'SHOP-1', status: 'accepted', state: 'pending', pid: 'PUBG-60', meta: { shopOrder: 77 } });
    expect(woken()).toBe(1);
    // On disk: another connection sees it.
    const other = openRuntime(rt.config, silentLogger(), rt.config.apiUrl!);
    runtimes.push(other);
    expect(other.rows.byTrxid('SHOP-1')).toBeDefined();

    const same = await desk.accept({ userId: '5123456701', pid: 'PUBG-60', trxid: 'SHOP-1', meta: { shopOrder: 77 }, queue: true });
    expect(same.kind).toBe('same');
    const lower = await desk.accept({ trxid: 'shop-1', pid: 'PUBG-60', userId: '5123456701', meta: { shopOrder: 77 } });
    expect(lower).toMatchObject({ kind: 'refused', status: 409, code: 'TRXID_CONFLICT' });
    const diff = await desk.accept({ trxid: 'SHOP-1', pid: 'PUBG-60', userId: '5123456799' });
    expect(diff).toMatchObject({ kind: 'refused', status: 409, code: 'TRXID_CONFLICT' });
    expect(rt.db.prepare('SELECT count(*) AS n FROM rows').get()).toEqual({ n: 1 });
  });

  it('refuses an order as a file row is refused: unknown pid, a missing player field, a price cap below the price (422 with the field)', async () => {
    const { rt, desk } = await setup();
    const unknown = await desk.accept({ trxid: 'S-1', pid: 'NOPE-1', userId: '1' });
    expect(unknown).toMatchObject({ kind: 'refused', status: 422, code: 'INVALID_ORDER' });
    if (unknown.kind === 'refused') expect(unknown.problems?.[0]?.field).toBe('pid');
    const cap = await desk.accept({ trxid: 'S-2', pid: 'PUBG-60', userId: '5123456701', maxPriceUsd: 0.01 });
    expect(cap).toMatchObject({ kind: 'refused', status: 422, code: 'INVALID_ORDER' });
    const noUser = await desk.accept({ trxid: 'S-3', pid: 'PUBG-60' });
    expect(noUser).toMatchObject({ kind: 'refused', status: 422 });
    expect(rt.db.prepare('SELECT count(*) AS n FROM rows').get()).toEqual({ n: 0 });
  });

  it('concurrent acceptances of one trxid store one order: one 202, the rest 200', async () => {
    const { rt, desk } = await setup();
    const outs = await Promise.all(Array.from({ length: 20 }, () => desk.accept({ trxid: 'RACE-1', pid: 'PUBG-60', userId: '5123456701' })));
    expect(outs.filter((o) => o.kind === 'accepted')).toHaveLength(1);
    expect(outs.filter((o) => o.kind === 'same')).toHaveLength(19);
    expect(rt.db.prepare('SELECT count(*) AS n FROM rows').get()).toEqual({ n: 1 });
  });

  it('refuses what the balance cannot cover beside what is promised (402), unless the order asks to queue', async () => {
    const { desk } = await setup({ TOPUP_SANDBOX_BALANCE_USD: '1' }, { balanceUsd: 2 });
    const first = await desk.accept({ trxid: 'B-1', pid: 'PUBG-60', userId: '5123456701' });
    expect(first.kind).toBe('accepted');
    const outs = [];
    for (let i = 2; i <= 5; i++) outs.push(await desk.accept({ trxid: `B-${i}`, pid: 'PUBG-60', userId: '5123456701' }));
    expect(outs.some((o) => o.kind === 'refused' && o.code === 'INSUFFICIENT_BALANCE' && o.status === 402)).toBe(true);
    const queued = await desk.accept({ trxid: 'B-9', pid: 'PUBG-60', userId: '5123456701', queue: true });
    expect(queued.kind).toBe('accepted');
  });

  it('drives an accepted order to completed through the runner; every change of status is an event, in order', async () => {
    const { rt, desk } = await setup();
    const runner = new Runner(rt, { stopGraceMs: 500 });
    const desk2 = createOrderDesk(rt, () => runner.wake());
    const running = runner.run();
    try {
      const a = await desk2.accept({ trxid: 'RUN-1', pid: 'PUBG-60', userId: '5123456701' });
      expect(a.kind).toBe('accepted');
      const done = await waitFor('completed', () => {
        const v = desk.get('RUN-1', { codes: true });
        return v && v.status === 'completed' ? v : undefined;
      }, 20_000);
      expect(done.orderId).toMatch(/./);
      expect(done.history!.map((h) => h.status)).toEqual(['accepted', 'sent', ...(done.history!.some((h) => h.status === 'processing') ? ['processing'] : []), 'completed']);
      const page = desk.feed(undefined, 100, { codes: false });
      expect(page.events.map((e) => e.type)).toEqual(done.history!.map((h) => h.type));
      expect(desk.feed(page.next, 100, { codes: false }).events).toEqual([]);
      // The day's batch stays open: more orders may come today.
      const b = rt.batches.get(done.batchId)!;
      expect(b.state).toBe('open');
      expect(b.apiDay).toBe(new Date().toISOString().slice(0, 10));
    } finally {
      runner.stop();
      await running;
    }
  });

  it('the day\'s batch takes orders until its day ends, then is finished with one result row per order; the next day\'s order opens a new batch', async () => {
    const clock = new ShiftedClock();
    const midnight = Date.parse(`${new Date(systemClock.now() + 86_400_000).toISOString().slice(0, 10)}T00:00:00Z`);
    clock.offset = midnight - 20_000 - systemClock.now();
    const { rt, home } = await setup({}, {}, clock);
    const runner = new Runner(rt, { stopGraceMs: 500 });
    const desk = createOrderDesk(rt, () => runner.wake());
    const running = runner.run();
    try {
      for (const t of ['D1-1', 'D1-2']) expect((await desk.accept({ trxid: t, pid: 'PUBG-60', userId: '5123456701' })).kind).toBe('accepted');
      const first = desk.get('D1-1', { codes: false })!.batchId;
      await waitFor('both completed', () => ['D1-1', 'D1-2'].every((t) => desk.get(t, { codes: false })?.status === 'completed'), 15_000);
      await new Promise((r) => setTimeout(r, 300));
      expect(rt.batches.get(first)!.state).toBe('open');
      // Past midnight: a new order goes into the next day's batch; the first stays open for the grace minute.
      clock.offset += 30_000;
      expect((await desk.accept({ trxid: 'D2-1', pid: 'PUBG-60', userId: '5123456701' })).kind).toBe('accepted');
      const second = desk.get('D2-1', { codes: false })!.batchId;
      expect(second).not.toBe(first);
      expect(rt.batches.get(first)!.state).toBe('open');
      clock.offset += 60_000;
      runner.wake();
      const done = await waitFor('first day done', () => rt.batches.get(first)?.state === 'done' && rt.batches.get(first), 15_000);
      const day = rt.batches.get(first)!.apiDay!;
      expect(done.resultFile).toBe(join(home.dir, 'outbox', `api-${day}.result.csv`));
      const rows = parseResult(readFileSync(done.resultFile!, 'utf8'));
      expect(rows.map((r) => [r.trxid, r.status])).toEqual([['D1-1', 'completed'], ['D1-2', 'completed']]);
      expect(existsSync(join(home.dir, 'outbox', `api-${day}.summary.json`))).toBe(true);
      expect(rt.batches.get(second)!.state).toBe('open');
    } finally {
      runner.stop();
      await running;
    }
  });

  it('an operator cancelling the day\'s API batch stops acceptance (503 NOT_ACCEPTING): nothing stored that would be skipped at once', async () => {
    const { rt, desk } = await setup();
    expect((await desk.accept({ trxid: 'C-1', pid: 'PUBG-60', userId: '5123456701' })).kind).toBe('accepted');
    const batchId = desk.get('C-1', { codes: false })!.batchId;
    expect(rt.batches.requestCancel(batchId)).toBe(true);
    expect(await desk.accept({ trxid: 'C-2', pid: 'PUBG-60', userId: '5123456701' })).toMatchObject({ kind: 'refused', status: 503, code: 'NOT_ACCEPTING' });
    expect(rt.rows.byTrxid('C-2')).toBeUndefined();
  });

  it('an order that moved to another account (a new trxid) is still the shop\'s order by its own trxid: GET and a resend find it', async () => {
    const { rt, desk } = await setup();
    expect((await desk.accept({ trxid: 'MOVE-1', pid: 'PUBG-60', userId: '5123456701' })).kind).toBe('accepted');
    // As failover moves a row (dispatch/failover.ts; the trigger rows_account_moves allows it from pending with a new trxid).
    rt.db.prepare(`UPDATE rows SET account = 'second', trxid = 'MOVE-1-second' WHERE trxid = 'MOVE-1'`).run();
    const v = desk.get('MOVE-1', { codes: false })!;
    expect(v).toMatchObject({ trxid: 'MOVE-1', sentAs: 'MOVE-1-second', account: 'second' });
    expect((await desk.accept({ trxid: 'MOVE-1', pid: 'PUBG-60', userId: '5123456701' })).kind).toBe('same');
    expect(await desk.accept({ trxid: 'MOVE-1', pid: 'PUBG-60', userId: '5123456702' })).toMatchObject({ kind: 'refused', code: 'TRXID_CONFLICT' });
  });

  it('an acceptance never waits for a balance or catalog re-read queued in a full rate gate (found by the torture suite: stalls of 3–7 s every 10 s)', async () => {
    const clock = new ShiftedClock();
    // Two calls per 6 s: the first catalog and balance reads fill the gate.
    const { desk } = await setup({ TOPUP_RATE_LIMITS: '2/6s', TOPUP_CATALOG_MAX_AGE_MS: '1000' }, {}, clock);
    expect((await desk.accept({ trxid: 'G-1', pid: 'PUBG-60', userId: '5123456701' })).kind).toBe('accepted');
    // 40 s later by the wall clock (the gate's window is on the monotonic clock: still full).
    clock.offset += 40_000;
    const t = performance.now();
    const second = await desk.accept({ trxid: 'G-2', pid: 'PUBG-60', userId: '5123456701' });
    const took = performance.now() - t;
    expect(second.kind).toBe('accepted');
    expect(took).toBeLessThan(2_000);
  }, 60_000);

  it('the body hash ignores key order and `queue`, not values', () => {
    expect(bodyHash({ trxid: 'a', pid: 'x', meta: { b: 1, a: 2 } })).toBe(bodyHash({ meta: { a: 2, b: 1 }, pid: 'x', trxid: 'a', queue: true }));
    expect(bodyHash({ trxid: 'a', pid: 'x' })).not.toBe(bodyHash({ trxid: 'a', pid: 'y' }));
  });
});
