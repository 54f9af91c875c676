/**
 * The outbox and the deliverer against real receivers on 127.0.0.1 and a real SQLite store: retried
 * until a 2xx, nothing lost across an outage, a hanging receiver timed out without holding up other
 * orders, strict order per order, replay, `failed` after 26 h, `none` without a URL, and the
 * secret never in last_error or the log.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { verify } from '../../src/webhooks/signer.js';
import { GIVE_UP_AFTER_MS, MIN_ATTEMPTS, WebhookOutbox, backoffMs } from '../../src/webhooks/outbox.js';
import { SECRET, T0, apiBatch, apiOrder, deliverer, eventsOf, memoryLogger, move, receiver, tempDb, virtualClock, type Receiver } from './helpers.js';

const open: { close(): unknown }[] = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});
async function recv(...args: Parameters<typeof receiver>): Promise<Receiver> {
  const r = await receiver(...args);
  open.push(r);
  return r;
}
function store() {
  const { db } = tempDb();
  open.push(db);
  return db;
}

describe('webhook delivery', () => {
  it('posts a signed event with its headers; a 500 is retried and a 2xx ends it', async () => {
    const db = store();
    const b = apiBatch(db);
    apiOrder(db, b, 0, 'shop-1');
    let n = 0;
    const r = await recv(0, () => (++n === 1 ? 500 : 200));
    const clock = virtualClock();
    const d = deliverer(db, { url: r.url }, { clock });
    expect(await d.tick()).toBe(1);
    let [e] = eventsOf(db);
    expect(e).toMatchObject({ delivery: 'pending', attempts: 1, last_status: 500, last_error: 'HTTP 500', url: r.url });
    // Not due again before its back-off (5 s ± 10%).
    expect(e!.next_attempt_at - T0).toBeGreaterThanOrEqual(4_500);
    expect(e!.next_attempt_at - T0).toBeLessThanOrEqual(5_500);
    clock.advance(4_000);
    expect(await d.tick()).toBe(0);
    clock.advance(2_000);
    expect(await d.tick()).toBe(1);
    [e] = eventsOf(db);
    expect(e).toMatchObject({ delivery: 'delivered', attempts: 2, last_status: 200, last_error: null });
    expect(r.received).toHaveLength(2);
    const got = r.received[1]!;
    expect(got.headers['content-type']).toBe('application/json');
    expect(got.headers['user-agent']).toBe('topup-runner');
    expect(got.headers['topup-event-id']).toBe('evt_1');
    expect(got.headers['topup-event-type']).toBe('order.accepted');
    expect(got.event).toMatchObject({ id: 'evt_1', type: 'order.accepted', data: { trxid: 'shop-1', status: 'accepted' } });
    const sig = String(got.headers['topup-signature']);
    expect(sig).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    const t = Number(/t=(\d+)/.exec(sig)![1]);
    expect(t).toBe(Math.floor((T0 + 6_000) / 1000));
    expect(verify(sig, got.body, SECRET, 300, t).ok).toBe(true);
    // Delivered is the end: nothing more is posted.
    clock.advance(3_600_000);
    expect(await d.tick()).toBe(0);
  });

  it('keeps strict order per order: a later event waits for the earlier one; other orders go on', async () => {
    const db = store();
    const b = apiBatch(db);
    apiOrder(db, b, 0, 'a');
    move(db, b, 0, 'sending');
    move(db, b, 0, 'processing');
    move(db, b, 0, 'completed');
    apiOrder(db, b, 1, 'b');
    expect(eventsOf(db).map((e) => `${e.trxid}:${e.type}`)).toEqual(['a:order.accepted', 'a:order.sent', 'a:order.processing', 'a:order.completed', 'b:order.accepted']);
    const r = await recv(0, (got) => (got.event.data.trxid === 'a' && got.event.type === 'order.sent' && r.received.filter((x) => x.event.type === 'order.sent').length === 1 ? 503 : 200));
    const clock = virtualClock();
    const d = deliverer(db, { url: r.url }, { clock });
    await d.tick();
    // a's accepted went, its sent failed once: processing and completed wait; b went.
    expect(r.received.map((x) => `${x.event.data.trxid}:${x.event.type}`)).toEqual(expect.arrayContaining(['a:order.accepted', 'a:order.sent', 'b:order.accepted']));
    expect(r.received).toHaveLength(3);
    expect(eventsOf(db).map((e) => e.delivery)).toEqual(['delivered', 'pending', 'pending', 'pending', 'delivered']);
    clock.advance(10_000);
    await d.tick();
    expect(eventsOf(db).map((e) => e.delivery)).toEqual(['delivered', 'delivered', 'delivered', 'delivered', 'delivered']);
    const aTypes = r.received.filter((x) => x.event.data.trxid === 'a').map((x) => x.event.type);
    expect(aTypes).toEqual(['order.accepted', 'order.sent', 'order.sent', 'order.processing', 'order.completed']);
  });

  it('loses nothing while the receiver is down for an hour; retries go on and deliver once it is back', async () => {
    const db = store();
    const b = apiBatch(db);
    const r1 = await recv();
    const port = r1.port;
    await r1.close();
    for (let i = 0; i < 5; i++) apiOrder(db, b, i, `down-${i}`);
    move(db, b, 0, 'sending');
    const clock = virtualClock();
    const d = deliverer(db, { url: `http://127.0.0.1:${port}/hooks` }, { clock });
    // An hour of a receiver that refuses connections, in virtual time.
    const until = T0 + 3_600_000;
    let attempts = 0;
    while (clock.now() < until) {
      attempts += await d.tick();
      // On to the next retry of any order (a later event of an order waits at 0 behind its head).
      clock.set(Math.min(...eventsOf(db).filter((e) => e.delivery === 'pending' && e.next_attempt_at > clock.now()).map((e) => e.next_attempt_at)));
    }
    const during = eventsOf(db);
    expect(during.every((e) => e.delivery === 'pending')).toBe(true);
    expect(during[0]!.last_error).toMatch(/ECONNREFUSED/);
    // The heads were tried by the schedule: 5 s, 15 s, 1 min, 5 min, 15 min, 30 min → 7 attempts in the hour.
    expect(during[0]!.attempts).toBeGreaterThanOrEqual(6);
    expect(during[0]!.attempts).toBeLessThanOrEqual(8);
    expect(attempts).toBeGreaterThan(20);
    const r2 = await recv(port);
    clock.set(Math.max(...during.map((e) => e.next_attempt_at)));
    await d.tick();
    expect(eventsOf(db).every((e) => e.delivery === 'delivered')).toBe(true);
    expect(r2.received.map((x) => x.event.id).sort()).toEqual(during.map((e) => `evt_${e.id}`).sort());
  });

  it('times out a receiver that hangs on one order; the other orders are delivered meanwhile', async () => {
    const db = store();
    const b = apiBatch(db);
    for (let i = 0; i < 6; i++) apiOrder(db, b, i, `h-${i}`);
    const r = await recv(0, (got) => (got.event.data.trxid === 'h-2' ? 'hang' : 200));
    const deliveredAt: Record<string, number> = {};
    const started = Date.now();
    const d = deliverer(db, { url: r.url }, { timeoutMs: 3_000, concurrency: 3 });
    const done = d.tick();
    // While h-2 hangs (its slot held), every other order's event is delivered through the other two.
    await expect.poll(() => eventsOf(db).filter((e) => e.delivery === 'delivered').length, { timeout: 2_500, interval: 20 }).toBe(5);
    for (const e of eventsOf(db)) if (e.delivery === 'delivered') deliveredAt[e.trxid] = Date.now() - started;
    expect(Math.max(...Object.values(deliveredAt))).toBeLessThan(3_000);
    expect(eventsOf(db).find((e) => e.trxid === 'h-2')!.last_error).toBeNull();
    await done;
    const hung = eventsOf(db).find((e) => e.trxid === 'h-2')!;
    expect(hung).toMatchObject({ delivery: 'pending', attempts: 1, last_status: null });
    expect(hung.last_error).toMatch(/timeout/);
    expect(Date.now() - started).toBeGreaterThanOrEqual(2_900);
    await d.stop();
  });

  it('a redirect, a 4xx and a reset connection are retried, never followed or counted delivered', async () => {
    const db = store();
    const b = apiBatch(db);
    apiOrder(db, b, 0, 'x-0');
    apiOrder(db, b, 1, 'x-1');
    apiOrder(db, b, 2, 'x-2');
    const r = await recv(0, (got) => ({ 'x-0': 302, 'x-1': 401, 'x-2': 'reset' as const })[got.event.data.trxid as 'x-0'] ?? 200);
    const d = deliverer(db, { url: r.url }, { clock: virtualClock() });
    await d.tick();
    const [a, c, e] = eventsOf(db);
    expect(a).toMatchObject({ delivery: 'pending', last_status: 302 });
    expect(a!.last_error).toMatch(/redirects are not followed/);
    expect(c).toMatchObject({ delivery: 'pending', last_status: 401, last_error: 'HTTP 401' });
    expect(e).toMatchObject({ delivery: 'pending', last_status: null });
    expect(e!.last_error).toMatch(/reset|socket|closed/i);
    expect(r.received).toHaveLength(3);
  });

  it('gives an event up (failed) after 26 h of retries, then the order\'s next event goes; replay sends it again', async () => {
    const db = store();
    const b = apiBatch(db);
    apiOrder(db, b, 0, 'slow');
    move(db, b, 0, 'sending', T0);
    let down = true;
    const r = await recv(0, () => (down ? 500 : 200));
    const clock = virtualClock();
    const d = deliverer(db, { url: r.url }, { clock });
    const times: number[] = [];
    for (let i = 0; i < 100; i++) {
      times.push(clock.now());
      await d.tick();
      const head = eventsOf(db)[0]!;
      if (head.delivery !== 'pending') break;
      clock.set(head.next_attempt_at);
    }
    const [first, second] = eventsOf(db);
    expect(first!.delivery).toBe('failed');
    expect(first!.attempts).toBeGreaterThanOrEqual(MIN_ATTEMPTS);
    const gaveUpAt = times.at(-1)!;
    expect(gaveUpAt - T0).toBeGreaterThanOrEqual(GIVE_UP_AFTER_MS);
    // On time: the last wait ends at the 26th hour (or one 2 h wait later when jitter made the schedule slow).
    expect(gaveUpAt - T0).toBeLessThanOrEqual(GIVE_UP_AFTER_MS + 1.1 * backoffMs(99));
    expect(gaveUpAt - times[0]!).toBeGreaterThanOrEqual(24 * 3_600_000);
    // Not blocked for ever: the order's next event was posted as soon as the first was given up.
    expect(second!.attempts).toBe(1);
    expect(second!.delivery).toBe('pending');
    // Replay: the failed one is due now, with its attempts from 0, and goes before the later one.
    down = false;
    expect(new WebhookOutbox(db).replay({ failed: true })).toEqual({ replayed: 1, alreadyPending: 0 });
    expect(eventsOf(db)[0]).toMatchObject({ delivery: 'pending', attempts: 0, next_attempt_at: 0 });
    clock.set(second!.next_attempt_at);
    r.received.length = 0;
    await d.tick();
    expect(r.received.map((x) => x.event.type)).toEqual(['order.accepted', 'order.sent']);
    expect(eventsOf(db).map((e) => e.delivery)).toEqual(['delivered', 'delivered']);
  });

  it('a replayed event gets its retries again (it is not given up at its first failure)', async () => {
    const db = store();
    const b = apiBatch(db);
    apiOrder(db, b, 0, 'old');
    const r = await recv(0, () => 500);
    const clock = virtualClock(T0 + 30 * 3_600_000);
    const o = new WebhookOutbox(db);
    db.prepare("UPDATE order_events SET delivery = 'failed', attempts = 25").run();
    expect(o.replay({ ids: [1] })).toEqual({ replayed: 1, alreadyPending: 0 });
    const d = deliverer(db, { url: r.url }, { clock });
    for (let i = 1; i < MIN_ATTEMPTS; i++) {
      await d.tick();
      expect(eventsOf(db)[0]).toMatchObject({ delivery: 'pending', attempts: i });
      clock.set(eventsOf(db)[0]!.next_attempt_at);
    }
    await d.tick();
    expect(eventsOf(db)[0]).toMatchObject({ delivery: 'failed', attempts: MIN_ATTEMPTS });
  });

  it('replay by id, trxid and since; pending events are left to their schedule', () => {
    const db = store();
    const b = apiBatch(db);
    apiOrder(db, b, 0, 'Shop-A');
    move(db, b, 0, 'sending');
    apiOrder(db, b, 1, 'shop-b');
    db.prepare("UPDATE order_events SET delivery = 'delivered', delivered_at = 1 WHERE id <= 2").run();
    const o = new WebhookOutbox(db);
    expect(o.replay({ trxid: 'shop-a' })).toEqual({ replayed: 2, alreadyPending: 0 });
    expect(o.replay({ ids: [1, 3] })).toEqual({ replayed: 0, alreadyPending: 2 });
    db.prepare("UPDATE order_events SET delivery = 'delivered'").run();
    expect(o.replay({ since: 2 })).toEqual({ replayed: 2, alreadyPending: 0 });
    expect(eventsOf(db).map((e) => e.delivery)).toEqual(['delivered', 'pending', 'pending']);
    expect(o.counts()).toEqual({ pending: 2, delivered: 1, failed: 0, none: 0 });
    expect(o.replay({ ids: [] })).toEqual({ replayed: 0, alreadyPending: 0 });
  });

  it('marks events `none` when no URL applies; an order with a callbackUrl still gets its own', async () => {
    const db = store();
    const b = apiBatch(db);
    const r = await recv();
    apiOrder(db, b, 0, 'no-url');
    apiOrder(db, b, 1, 'own-url', { callbackUrl: `${r.url}?order=1` });
    const d = deliverer(db, { url: null }, { clock: virtualClock() });
    await d.tick();
    expect(eventsOf(db).map((e) => [e.trxid, e.delivery])).toEqual([['no-url', 'none'], ['own-url', 'delivered']]);
    expect(r.received).toHaveLength(1);
    expect(eventsOf(db)[1]!.url).toBe(`${r.url}?order=1`);
  });

  it('two deliverers on one store never post the same event twice at once (the claim is a compare-and-set)', async () => {
    const db = store();
    const b = apiBatch(db);
    for (let i = 0; i < 20; i++) apiOrder(db, b, i, `two-${i}`);
    const r = await recv();
    const clock = virtualClock();
    const d1 = deliverer(db, { url: r.url }, { clock });
    const d2 = deliverer(db, { url: r.url }, { clock });
    await Promise.all([d1.tick(), d2.tick()]);
    expect(r.received).toHaveLength(20);
    expect(new Set(r.received.map((x) => x.event.id)).size).toBe(20);
    expect(eventsOf(db).every((e) => e.delivery === 'delivered' && e.attempts === 1)).toBe(true);
  });

  it('a post that died with its process is posted again once its claim runs out', async () => {
    const db = store();
    const b = apiBatch(db);
    apiOrder(db, b, 0, 'crash');
    const o = new WebhookOutbox(db);
    // A deliverer claimed it, then its process died before recording anything.
    expect(o.claim(1, 0, T0 + 30_000, 'http://127.0.0.1:9/hooks')).toBe(true);
    expect(o.claim(1, 0, T0 + 30_000, 'http://127.0.0.1:9/hooks')).toBe(false);
    const r = await recv();
    const clock = virtualClock(T0 + 29_000);
    const d = deliverer(db, { url: r.url }, { clock });
    expect(await d.tick()).toBe(0);
    clock.set(T0 + 30_000);
    expect(await d.tick()).toBe(1);
    expect(eventsOf(db)[0]).toMatchObject({ delivery: 'delivered', attempts: 2 });
  });

  it('never writes the secret into last_error or the log, and caps last_error at 200 characters', async () => {
    const db = store();
    const b = apiBatch(db);
    apiOrder(db, b, 0, 's-0');
    apiOrder(db, b, 1, 's-1');
    const { log, lines } = memoryLogger();
    const clock = virtualClock();
    // A URL that fails with a message naming it (the secret in its path), and a refused one.
    const r = await recv();
    const bad = `http://127.0.0.1:${r.port}/${SECRET}/${'x'.repeat(300)}`;
    await r.close();
    const d = new (await import('../../src/webhooks/deliverer.js')).Deliverer(
      { db, clock, entropy: { random: () => 0.5, hex: () => '00' }, log, settings: { url: bad, secret: SECRET, codes: false }, events: { event: () => { throw new Error(`cannot build with ${SECRET} ${'y'.repeat(400)}`); } } },
    );
    await d.tick();
    for (const e of eventsOf(db)) {
      expect(e.last_error).not.toContain(SECRET);
      expect(e.last_error!.length).toBeLessThanOrEqual(200);
    }
    expect(eventsOf(db)[0]!.last_error).toContain('[REDACTED]');
    // Through a day of failures to `failed`, every log line read.
    for (let i = 0; i < 40 && eventsOf(db).some((e) => e.delivery === 'pending'); i++) {
      clock.set(Math.min(...eventsOf(db).filter((e) => e.delivery === 'pending').map((e) => e.next_attempt_at)));
      await d.tick();
    }
    expect(eventsOf(db).every((e) => e.delivery === 'failed')).toBe(true);
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.join('\n')).not.toContain(SECRET);
  });

  it('its loop delivers within a second of an event, and at once on wake()', async () => {
    const db = store();
    const b = apiBatch(db);
    const r = await recv();
    const d = deliverer(db, { url: r.url }, { intervalMs: 60_000 }).start();
    open.push({ close: () => d.stop() });
    apiOrder(db, b, 0, 'w-0');
    const t = Date.now();
    d.wake();
    await expect.poll(() => r.received.length, { timeout: 2_000, interval: 10 }).toBe(1);
    expect(Date.now() - t).toBeLessThan(1_000);
    const d2 = deliverer(db, { url: r.url }).start();
    open.push({ close: () => d2.stop() });
    apiOrder(db, b, 1, 'w-1');
    await expect.poll(() => r.received.length, { timeout: 2_500, interval: 20 }).toBe(2);
  });

  it('stop() starts no new post, gives one in flight a grace, then cuts it and records it (posted again later)', async () => {
    const db = store();
    const b = apiBatch(db);
    apiOrder(db, b, 0, 'stop-0');
    apiOrder(db, b, 1, 'stop-1');
    const r = await recv(0, () => 'hang');
    const d = deliverer(db, { url: r.url }, { concurrency: 1, timeoutMs: 60_000 }).start();
    await expect.poll(() => r.received.length, { timeout: 3_000, interval: 10 }).toBe(1);
    const t = Date.now();
    await d.stop();
    expect(Date.now() - t).toBeGreaterThanOrEqual(1_900);
    expect(Date.now() - t).toBeLessThan(5_000);
    const [first, second] = eventsOf(db);
    expect(first).toMatchObject({ delivery: 'pending', attempts: 1 });
    expect(first!.last_error).toMatch(/stopped before an answer/);
    // Due again by the schedule (5 s), not held for the 60 s timeout.
    expect(first!.next_attempt_at - Date.now()).toBeLessThan(6_000);
    expect(second).toMatchObject({ delivery: 'pending', attempts: 0 });
    expect(r.received).toHaveLength(1);
  });
});
