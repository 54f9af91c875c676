/**
 * A webhook backlog drains promptly once the receiver answers again (a new-user trial: receiver down
 * 10 min, then up: 27 of 283 pending events delivered in the first 60 s; the oldest waited its
 * 15-min slot, and its order's later events behind it). A real SQLite store, a real receiver on
 * 127.0.0.1 and the real deliverer loop: ten minutes of outage are played through in virtual time
 * (each event's back-off grows as it would), then the receiver comes back on the same port and the
 * clock runs on in real time. Every event waiting longer than a claim's span is delivered within
 * RECEIVER_PROBE_MS and a few seconds, the rest when their short back-off ends, in order per order,
 * each signature valid. The figures are printed.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock, type Clock } from '../../src/kernel/clock.js';
import { verify } from '../../src/webhooks/signer.js';
import { SECRET, T0, apiBatch, apiOrder, deliverer, eventsOf, move, receiver, tempDb, type Receiver } from '../webhooks/helpers.js';

/** src/webhooks/outbox.ts RECEIVER_PROBE_MS (a literal: the test runs against the code before it too). */
const RECEIVER_PROBE_MS = 10_000;
const open: { close(): unknown }[] = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

/** Virtual wall time the test sets, then (run()) wall time moving on in real time from there. */
function steppedClock(): Clock & { set(ms: number): void; run(): void } {
  let base = T0;
  let realFrom: number | null = null;
  return {
    ...systemClock,
    now: () => (realFrom === null ? base : base + (Date.now() - realFrom)),
    set(ms: number) {
      base = ms;
    },
    run() {
      realFrom = Date.now();
    },
  };
}

describe('webhook backlog after a receiver outage', () => {
  it('283 events of 100 orders, 10 min down: those waiting past a claim span delivered within the probe interval, every one within it and a claim span, in order per order, signed', async () => {
    const { db } = tempDb();
    open.push(db);
    const b = apiBatch(db);
    const r1 = await receiver();
    const port = r1.port;
    await r1.close();
    const clock = steppedClock();
    const d = deliverer(db, { url: `http://127.0.0.1:${port}/hooks` }, { clock });
    // 100 orders over the 10 minutes, each with an accepted, sent and (for 83) processing event.
    const outageEnd = T0 + 10 * 60_000;
    let made = 0;
    for (let i = 0; i < 100; i++) {
      const at = T0 + i * 6_000;
      while (clock.now() < at) {
        await d.tick();
        const next = eventsOf(db).filter((e) => e.delivery === 'pending' && e.next_attempt_at > clock.now()).map((e) => e.next_attempt_at);
        clock.set(Math.min(at, ...next));
      }
      apiOrder(db, b, i, `bl-${i}`, { at });
      move(db, b, i, 'sending', at);
      if (i < 83) move(db, b, i, 'processing', at);
      made = eventsOf(db).length;
    }
    while (clock.now() < outageEnd) {
      await d.tick();
      const next = eventsOf(db).filter((e) => e.delivery === 'pending' && e.next_attempt_at > clock.now()).map((e) => e.next_attempt_at);
      clock.set(Math.min(outageEnd, ...next));
    }
    expect(made).toBe(283);
    const during = eventsOf(db);
    expect(during.every((e) => e.delivery === 'pending')).toBe(true);
    // The oldest heads wait minutes for their next slot.
    expect(Math.max(...during.map((e) => e.next_attempt_at)) - outageEnd).toBeGreaterThan(5 * 60_000);

    // The receiver is back; the loop runs, the clock in real time from here.
    const r2: Receiver = await receiver(port);
    open.push(r2);
    clock.run();
    const back = Date.now();
    d.start();
    open.push({ close: () => d.stop() });
    const delivered = (): number => eventsOf(db).filter((e) => e.delivery === 'delivered').length;
    // The first answer makes due every event whose back-off had more than a claim's span (10 s
    // timeout + 20 s margin) left; the others come due by themselves within that span (a claim held
    // by another deliverer cannot be told from them, so they are never made due early).
    const span = 30_000;
    await new Promise((r) => setTimeout(r, RECEIVER_PROBE_MS + 5_000));
    const promptly = delivered();
    await expect.poll(delivered, { timeout: span + 5_000, interval: 50 }).toBe(283);
    const seconds = (Date.now() - back) / 1000;
    console.log(`webhook backlog: ${promptly} of 283 events delivered ${(RECEIVER_PROBE_MS + 5_000) / 1000} s after the receiver came back, all 283 in ${seconds.toFixed(1)} s`);
    expect(promptly).toBeGreaterThanOrEqual(200);
    expect(seconds).toBeLessThan((RECEIVER_PROBE_MS + span) / 1000 + 5);

    // In order per order, each once, each signed.
    const byOrder = new Map<string, number[]>();
    for (const x of r2.received) {
      expect(verify(String(x.headers['topup-signature']), x.body, SECRET, 300, Math.floor(clock.now() / 1000))).toMatchObject({ ok: true });
      const n = Number(x.event.id.slice(4));
      const key = x.event.data.trxid;
      byOrder.set(key, [...(byOrder.get(key) ?? []), n]);
    }
    expect(new Set(r2.received.map((x) => x.event.id)).size).toBe(283);
    for (const ids of byOrder.values()) expect(ids).toEqual([...ids].sort((p, q) => p - q));
  }, 120_000);
});
