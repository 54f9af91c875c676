/**
 * Recent errors for the overview, from what the runner and the notifier report in this process:
 * failed API calls, pauses, batches waiting for balance, files refused, rows sent to review,
 * notifications given up. The same problem repeated (a maintenance window answers every call
 * with 503) is one entry with a count and its last time, so a burst cannot push out the rest.
 * Kept in memory (the last KEEP), since the log holds the full story.
 */
import { systemClock } from '../kernel/clock.js';
import type { RunnerEvents } from '../engine/events.js';
import type { Notifier } from '../notify/notifier.js';

export interface RecentError {
  at: number;
  first: number;
  what: string;
  count: number;
}

const KEEP = 30;

export class RecentErrors {
  readonly #items: RecentError[] = [];
  readonly #scrub: (text: string) => string;

  constructor(scrub: (text: string) => string) {
    this.#scrub = scrub;
  }

  add(what: string, at = systemClock.now()): void {
    const text = this.#scrub(what);
    const same = this.#items.find((e) => e.what === text);
    if (same) {
      same.count++;
      same.at = at;
    } else {
      this.#items.push({ at, first: at, what: text, count: 1 });
      if (this.#items.length > KEEP) this.#items.sort((a, b) => b.at - a.at).splice(KEEP);
    }
  }

  list(): RecentError[] {
    return [...this.#items].sort((a, b) => b.at - a.at);
  }

  follow(runner: RunnerEvents, notifier: Notifier): () => void {
    const onCall = (c: { route: string; status: number | undefined }): void => {
      if (c.status === undefined) this.add(`API ${c.route}: no answer (timeout or connection lost)`);
      else if (c.status === 429) this.add(`API ${c.route}: 429 rate limited`);
      else if (c.status >= 400) this.add(`API ${c.route}: HTTP ${c.status}`);
    };
    const onPause = (kind: string, code: string, detail: string): void =>
      this.add(kind === 'account' ? `sending stopped: account problem ${code} (${detail})` : `orders paused by the API: ${code}`);
    const onWait = (b: { id: string; sourceName: string }, detail: string): void => this.add(`batch ${b.id} (${b.sourceName}) waits for balance: ${detail}`);
    const onChanged = (b: { id: string; sourceName: string; state: string; fileError: string | null }): void => {
      if (b.state === 'failed') this.add(`file ${b.sourceName} refused (batch ${b.id}): ${b.fileError ?? 'unreadable'}`);
    };
    const onMoved = (m: { batchId: string; to: string }): void => {
      if (m.to === 'review') this.add(`batch ${m.batchId}: rows need review (outcome unknown)`);
    };
    runner.on('call', onCall);
    runner.on('pause', onPause);
    runner.on('balance-wait', onWait);
    runner.on('batch-changed', onChanged);
    runner.on('row-moved', onMoved);
    const offNotify = notifier.onFailure((target, event) => this.add(`notification (${event}) to ${target} failed`));
    return () => {
      runner.off('call', onCall);
      runner.off('pause', onPause);
      runner.off('balance-wait', onWait);
      runner.off('batch-changed', onChanged);
      runner.off('row-moved', onMoved);
      offNotify();
    };
  }
}
