/**
 * The order API's webhooks on /metrics (docs/webhooks.md): events by delivery state (read off the
 * daemon's thread: the table grows with every change of every API order) and the age of the oldest
 * event still pending, the one figure to alert on: it grows while a shop's receiver is down.
 */
import { Gauge, type Registry } from 'prom-client';
import type { Runtime } from '../runtime.js';
import { DELIVERY_STATES, WebhookOutbox } from '../webhooks/outbox.js';
import type { SlowReads } from './slow-reads.js';

export function webhookGauges(registry: Registry, rt: Pick<Runtime, 'clock' | 'db'>, slow: SlowReads): void {
  const r = [registry];
  const outbox = new WebhookOutbox(rt.db);
  new Gauge({
    name: 'topup_webhook_events', help: "The order API's webhook events by delivery state (pending, delivered, failed: given up after 24 h of retries, none: no URL applied)", labelNames: ['delivery'], registers: r,
    async collect() {
      const counts = new Map((await slow.query<{ delivery: string; n: number }>('webhookEventsByDelivery')).map((x) => [x.delivery, x.n]));
      for (const d of DELIVERY_STATES) this.set({ delivery: d }, counts.get(d) ?? 0);
    },
  });
  new Gauge({
    name: 'topup_webhook_oldest_pending_age_seconds', help: 'Age of the oldest webhook event not yet delivered nor given up, from the change it tells of; 0 when none', registers: r,
    collect() {
      const oldest = outbox.oldestPending();
      this.set(oldest ? Math.max(0, rt.clock.now() - oldest.at) / 1000 : 0);
    },
  });
}
