/**
 * Operator notifications: a JSON POST to TOPUP_WEBHOOK_URL and/or a Telegram message, when a
 * batch finishes, when a batch waits for balance, on the low-balance alert, and when sending
 * stops for an account problem. A notification never carries a code or the key, and a failing
 * endpoint is retried a few times in the background: it never holds up or affects orders.
 */
import { systemClock } from '../kernel/clock.js';
import { basename } from 'node:path';
import { request } from 'undici';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Config } from '../config/config.js';
import type { Logger } from '../kernel/log.js';
import type { RunnerEvents } from '../engine/events.js';
import { storeDownAdvice, storeDownSentence, storeDownUntilRestart } from '../dispatch/store-health.js';

export type NotificationEvent = 'batch-finished' | 'balance-wait' | 'low-balance' | 'low-balance-cleared' | 'account-problem' | 'maintenance' | 'store-down' | 'store-up';

export interface Notification {
  event: NotificationEvent;
  text: string;
  mode: 'SANDBOX' | 'LIVE';
  at: string;
  data: Record<string, unknown>;
}

const RETRY_DELAYS_MS = [1_000, 5_000, 15_000];

export class Notifier {
  readonly #config: Config;
  readonly #log: Logger;
  readonly #pending = new Set<Promise<void>>();
  readonly #retryDelays: number[];
  /** Told of every notification given up on (for /metrics and the console's recent errors). */
  readonly #onFailure = new Set<(target: string, event: string, error: string) => void>();

  constructor(config: Config, log: Logger, opts: { retryDelaysMs?: number[] } = {}) {
    this.#config = config;
    this.#log = log.child({ component: 'notify' });
    this.#retryDelays = opts.retryDelaysMs ?? RETRY_DELAYS_MS;
  }

  get enabled(): boolean {
    return this.#config.webhookUrl !== null || this.#config.telegram !== null;
  }

  onFailure(listener: (target: string, event: string, error: string) => void): () => void {
    this.#onFailure.add(listener);
    return () => void this.#onFailure.delete(listener);
  }

  follow(runner: RunnerEvents): void {
    runner.on('batch-finished', (s) =>
      this.send('batch-finished', `Batch ${s.batchId} (${s.file}) finished: ${s.counts.completed} completed, ${s.counts.cancelled} cancelled, ${s.counts.rejected} rejected, ${s.counts.invalid} invalid, ${s.counts.skipped} skipped${s.counts.review ? `, ${s.counts.review} to review` : ''}; spent ${s.spentUsd} USD.`, {
        batchId: s.batchId,
        file: s.file,
        counts: s.counts,
        spentUsd: s.spentUsd,
        refundedUsd: s.refundedUsd,
        balanceAfterUsd: s.balanceAfterUsd,
        balanceAtEndUsd: s.balanceAtEndUsd,
        resultFile: basename(s.resultFile),
      }),
    );
    runner.on('balance-wait', (b, detail) => this.send('balance-wait', `Batch ${b.id} (${b.sourceName}) is waiting for balance: ${detail}. Top up to continue.`, { batchId: b.id, file: b.sourceName, detail }));
    runner.on('pause', (kind, code, detail, account) => {
      // A home with several accounts says which one (the others go on).
      const on = account !== 'default' ? ` on account ${account}` : '';
      // The cure with the problem: a refused key is fixed in the supplier's panel or the key file,
      // never by a top-up (a new-user trial was told to top up an account holding 973 USD).
      const cure = ` Not a balance problem: check the account's key and API access in the supplier's panel (or its key file); it is probed again by itself${on ? ', and its rows never sent move to another account that sells their pack once it has been paused longer than max_queue_delay' : ''}.`;
      this.send(kind === 'account' ? 'account-problem' : 'maintenance', kind === 'account' ? `Sending stopped${on}: account problem ${code} (${detail}).${cure}` : `Orders paused by the API${on}: ${code}.`, { code, detail, account });
    });
    // Delivered over the network, not written to the store: it goes out while the disk is full.
    runner.on('store', (down) => {
      // A disk that failed a write or a sync, or a store file moved, stops sending until a restart:
      // never told it resumes by itself (storeDownAdvice), nor to free space.
      if (down) {
        const hint = storeDownUntilRestart(down.code) ? '' : ' Free space on the disk of jobs/ or fix its mount.';
        this.send('store-down', `Sending stopped: ${storeDownSentence(down.code)} (${down.code}). ${storeDownAdvice(down.code)}${hint}`, { code: down.code, since: new Date(down.since).toISOString(), untilRestart: storeDownUntilRestart(down.code) });
      }
      else this.send('store-up', 'The store can be written again: sending resumed.', {});
    });
  }

  /** Fire and forget: retried in the background, errors only logged. */
  send(event: NotificationEvent, text: string, data: Record<string, unknown>): void {
    if (!this.enabled) return;
    const n: Notification = { event, text, mode: this.#config.sandbox ? 'SANDBOX' : 'LIVE', at: new Date(systemClock.now()).toISOString(), data: withoutSecrets(data) };
    const p = this.#deliver(n).finally(() => this.#pending.delete(p));
    this.#pending.add(p);
  }

  /** Waits (bounded) for notifications still being delivered. */
  async flush(timeoutMs = 5_000): Promise<void> {
    if (this.#pending.size === 0) return;
    const cancelTimer = new AbortController();
    await Promise.race([Promise.allSettled([...this.#pending]), sleep(timeoutMs, undefined, { signal: cancelTimer.signal }).catch(() => undefined)]);
    cancelTimer.abort();
  }

  async #deliver(n: Notification): Promise<void> {
    const targets: { name: string; url: string; body: unknown }[] = [];
    if (this.#config.webhookUrl) targets.push({ name: 'webhook', url: this.#config.webhookUrl, body: n });
    const tg = this.#config.telegram;
    if (tg) {
      const prefix = n.mode === 'SANDBOX' ? '[SANDBOX] ' : '';
      targets.push({ name: 'telegram', url: `${tg.apiBase}/bot${tg.botToken}/sendMessage`, body: { chat_id: tg.chatId, text: `${prefix}${n.text}` } });
    }
    await Promise.all(targets.map((t) => this.#post(t.name, t.url, t.body, n.event)));
  }

  async #post(name: string, url: string, body: unknown, event: string): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      try {
        const res = await request(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
          signal: AbortSignal.timeout(10_000),
        });
        await res.body.dump();
        if (res.statusCode < 300) return;
        throw new Error(`HTTP ${res.statusCode}`);
      } catch (err) {
        const delay = this.#retryDelays[attempt];
        // The URL may hold a bot token: log the target's name, never the URL.
        if (delay === undefined) {
          this.#log.warn({ target: name, event, err: (err as Error).message }, 'notification failed; giving up');
          for (const l of this.#onFailure) l(name, event, (err as Error).message);
          return;
        }
        await sleep(delay);
      }
    }
  }
}

/** A last guard: whatever a caller passes, no `codes` field and no key-like field leaves in a notification. */
function withoutSecrets(data: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(data)) {
    if (/^(codes?|api_?key|key|token|bot_?token|authorization)$/i.test(k)) continue;
    out[k] = v !== null && typeof v === 'object' && !Array.isArray(v) ? withoutSecrets(v as Record<string, unknown>) : v;
  }
  return out;
}
