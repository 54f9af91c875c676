/**
 * `topup webhooks`: how the order API's webhooks stand (docs/webhooks.md), read from the store
 * alone, so it works with or without a running daemon (and never touches the supplier's API):
 * events by delivery state, the oldest still pending with the last error, the failed ones.
 *
 * `topup webhooks replay EVT… | --failed | --trxid X | --since evt_N`: sets the chosen events
 * back to pending, due now. The daemon's deliverer posts them within a second (or at its next
 * start): this command never posts anything itself, so there is one sender and one order per order.
 */
import type { Command } from 'commander';
import { UsageError } from '../kernel/errors.js';
import { systemClock } from '../kernel/clock.js';
import { eventNumber, WebhookOutbox, type OutboxEvent, type ReplaySelection } from '../webhooks/outbox.js';
import { shownUrl, webhookSummary } from '../webhooks/views.js';
import { commandConfig } from './context.js';
import { openStoreOnly } from './store-only.js';
import { runningDaemon } from '../store/presence.js';
import type { Store } from '../store/store.js';
import { addFormatOptions, formatOf, printList, when, wholeNumber, type Column } from './output.js';

function age(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 120) return `${s} s`;
  if (s < 7200) return `${Math.round(s / 60)} min`;
  return `${(s / 3600).toFixed(1)} h`;
}

const COLUMNS: Column<OutboxEvent>[] = [
  { title: 'event', get: (e) => `evt_${e.id}` },
  { title: 'trxid', get: (e) => e.trxid },
  { title: 'type', get: (e) => e.type },
  { title: 'at UTC', get: (e) => when(e.at) },
  { title: 'delivery', get: (e) => e.delivery },
  { title: 'attempts', get: (e) => e.attempts, right: true },
  { title: 'last status', get: (e) => e.lastStatus, right: true },
  { title: 'last error', get: (e) => e.lastError },
  { title: 'url', get: (e) => shownUrl(e.url) },
];

const json = (e: OutboxEvent): Record<string, unknown> => ({ ...e, id: `evt_${e.id}`, url: shownUrl(e.url), at: new Date(e.at).toISOString() });

/**
 * Where the webhooks go, and how this command knows. The URL is the daemon's setting: a command
 * run from another shell (or the service's wrapper) may not have it in its environment, and the
 * trial's `topup webhooks` then said there was no webhook URL while the daemon delivered to one.
 * So: this command's environment first; else where the daemon last sent an event that had no
 * callbackUrl of its own (the store keeps each event's URL); else say where it looked.
 */
export interface WebhookTarget {
  /** The URL as shown (no query, no user:password), or null. */
  url: string | null;
  source: 'environment' | 'last-delivery' | 'none';
  /** The event whose delivery showed the URL (source last-delivery). */
  event: string | null;
  /** The daemon running on this home, if any (its environment is its own). */
  daemonPid: number | null;
}

export function webhookTarget(store: Store, envUrl: string | null | undefined): WebhookTarget {
  const daemon = runningDaemon(store.meta);
  const daemonPid = daemon?.pid ?? null;
  if (envUrl) return { url: shownUrl(envUrl), source: 'environment', event: null, daemonPid };
  const last = store.db
    .prepare<[], { id: number; url: string }>(
      `SELECT e.id, e.url FROM order_events e WHERE e.url IS NOT NULL
        AND NOT EXISTS (SELECT 1 FROM rows r WHERE r.batch_id = e.batch_id AND r.idx = e.idx AND r.callback_url IS NOT NULL)
        ORDER BY e.id DESC LIMIT 1`,
    )
    .get();
  if (last) return { url: shownUrl(last.url), source: 'last-delivery', event: `evt_${last.id}`, daemonPid };
  return { url: null, source: 'none', event: null, daemonPid };
}

function targetText(t: WebhookTarget): string {
  if (t.source === 'environment') return `to ${t.url}`;
  if (t.source === 'last-delivery') {
    return `to ${t.url} (where the daemon sent ${t.event}, the latest event; this command's environment has no TOPUP_ORDER_WEBHOOK_URL: the daemon's own has it, e.g. /etc/topup/topup.env)`;
  }
  return `no TOPUP_ORDER_WEBHOOK_URL in this command's environment, and no event in the store was sent to one${t.daemonPid !== null ? ` (the daemon running on this home, pid ${t.daemonPid}, has its own environment: if it sets one, events go there once there are some)` : ''}`;
}

export function registerWebhooks(program: Command): void {
  const cmd = addFormatOptions(
    program
      .command('webhooks')
      .description("The order API's webhooks: events by delivery state, the oldest pending with its last error, the failed ones (docs/webhooks.md)")
      .option('--limit <n>', 'failed events listed (1-1000; default 20)', wholeNumber('--limit', 1, 1000)),
  ).action((opts: { json?: boolean; csv?: boolean; limit?: number }, c: Command) => {
    const format = formatOf(opts);
    const config = commandConfig(c, { requireKey: false });
    const store = openStoreOnly(config);
    try {
      const s = webhookSummary(store.db, systemClock.now(), opts.limit ?? 20);
      const w = config.orderApi.webhook;
      const target = webhookTarget(store, w.url);
      if (format === 'json') {
        process.stdout.write(`${JSON.stringify({ target, counts: s.counts, oldestPending: s.oldestPending && { ...json(s.oldestPending), ageSeconds: Math.round(s.oldestPending.ageMs / 1000) }, lastError: s.lastError && json(s.lastError), failed: s.failed.map(json) }, null, 2)}\n`);
        return;
      }
      if (format === 'csv') return printList('csv', s.failed, COLUMNS);
      const c0 = s.counts;
      process.stdout.write(`webhooks: ${targetText(target)}${w.allow.length ? `; callbackUrl allowed for ${w.allow.join(', ')}` : ''}\n`);
      process.stdout.write(`events: ${c0.pending} pending, ${c0.delivered} delivered, ${c0.failed} failed, ${c0.none} with no URL\n`);
      if (s.oldestPending) {
        const o = s.oldestPending;
        process.stdout.write(`oldest pending: evt_${o.id} (${o.trxid}, ${o.type}) ${age(o.ageMs)} old, ${o.attempts} attempts${o.lastError ? `, last error: ${o.lastError}` : ''}\n`);
      }
      if (s.lastError && s.lastError.id !== s.oldestPending?.id) process.stdout.write(`last error: evt_${s.lastError.id}: ${s.lastError.lastError}\n`);
      if (s.failed.length > 0) {
        process.stdout.write(`\nfailed (given up after their retries; send them again: topup webhooks replay --failed):\n`);
        printList('table', s.failed, COLUMNS);
      }
    } finally {
      store.close();
    }
  });

  cmd
    .command('replay')
    .description('Send events again: set them back to pending, due now (a running daemon posts them within a second)')
    .argument('[events...]', 'event ids (evt_12 or 12)')
    .option('--failed', 'every failed event')
    .option('--trxid <trxid>', "every event of this order")
    .option('--since <evt>', 'this event and every later one (evt_N)')
    .action((events: string[], opts: { failed?: boolean; trxid?: string; since?: string }, c: Command) => {
      const chosen = [events.length > 0, opts.failed === true, opts.trxid !== undefined, opts.since !== undefined].filter(Boolean).length;
      if (chosen !== 1) throw new UsageError('name what to replay: event ids (evt_12 …), or one of --failed, --trxid X, --since evt_N');
      let sel: ReplaySelection;
      if (events.length > 0) {
        const ids = events.map((e) => {
          const n = eventNumber(e);
          if (n === null) throw new UsageError(`"${e}" is not an event id (evt_12)`);
          return n;
        });
        sel = { ids };
      } else if (opts.failed) sel = { failed: true };
      else if (opts.trxid !== undefined) {
        if (opts.trxid.trim() === '') throw new UsageError('--trxid needs a trxid');
        sel = { trxid: opts.trxid.trim() };
      } else {
        const n = eventNumber(opts.since!);
        if (n === null) throw new UsageError(`--since: "${opts.since}" is not an event id (evt_12)`);
        sel = { since: n };
      }
      const config = commandConfig(c, { requireKey: false });
      const store = openStoreOnly(config);
      try {
        const r = new WebhookOutbox(store.db).replay(sel);
        process.stdout.write(`replayed ${r.replayed} event${r.replayed === 1 ? '' : 's'}${r.alreadyPending ? ` (${r.alreadyPending} already pending: they go by their schedule)` : ''}; a running daemon delivers them within a second${config.orderApi.webhook.url ? '' : ' (no TOPUP_ORDER_WEBHOOK_URL is set: only orders with a callbackUrl get theirs)'}\n`);
      } finally {
        store.close();
      }
    });
}
