/**
 * What `topup webhooks`, the console's Webhooks page and /metrics show of the outbox: one summary,
 * so the three say the same thing.
 */
import { WebhookOutbox, type Delivery, type OutboxEvent } from './outbox.js';
import type { Db } from '../store/db.js';

export interface WebhookSummary {
  counts: Record<Delivery, number>;
  /** The oldest pending event (how far behind the receiver is), or null. */
  oldestPending: (OutboxEvent & { ageMs: number }) | null;
  /** The newest pending event that has an error: what the receiver did last. */
  lastError: OutboxEvent | null;
  /** The newest failed events (given up), up to the limit asked. */
  failed: OutboxEvent[];
  /** The next pending events, oldest first (up to the limit asked). */
  pending: OutboxEvent[];
}

export function webhookSummary(db: Db, now: number, limit = 20): WebhookSummary {
  const o = new WebhookOutbox(db);
  const oldest = o.oldestPending();
  return {
    counts: o.counts(),
    oldestPending: oldest ? { ...oldest, ageMs: Math.max(0, now - oldest.at) } : null,
    lastError: o.lastPendingError() ?? null,
    failed: o.list('failed', limit),
    pending: o.list('pending', limit),
  };
}

/**
 * A URL as shown (CLI, page, log): scheme, host and path. Its query and any user:password are
 * left out: a shop may put a token there.
 */
export function shownUrl(url: string | null): string {
  if (!url) return '';
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname}${u.search ? '?…' : ''}`;
  } catch {
    return '(not a URL)';
  }
}
