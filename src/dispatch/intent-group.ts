/**
 * Group commit of intents to send. Every send's intent (the row to `sending`, store/rows.ts) is
 * committed with synchronous=FULL before its request leaves: one fsync per order, on the event
 * loop, since better-sqlite3 is synchronous. At 400 calls/s that alone held the loop for 40 % of
 * the run and paced dispatch at 0.70 of the ceiling (a profile of `npm run bench -- --parts scale`,
 * docs/bench.md). So at most one intent commit is made per INTENT_GROUP_MS: an intent asked for
 * while the last commit is younger than that waits for the next one and shares its fsync with the
 * others that arrived meanwhile. An intent asked for after a quiet spell is committed at the next
 * turn of the loop (with any others asked for in the same turn): a lone order waits for nothing.
 *
 * With a log sync (store/wal-sync.ts, the daemon's and every command's runner on the system clock)
 * the group's commit is made with synchronous=NORMAL and its fsync runs off the event loop: the
 * intents' sends wait for the sync, not the loop. Without one (the simulator's virtual clock, a
 * store litestream replicates) the commit is synchronous=FULL, as before.
 *
 * Nothing about safety changes: each request still leaves only after its own row's intent is on
 * disk, each intent is still its own guarded UPDATE with its own answer (refused: the row is no
 * longer ours to send), and a commit that fails is retried intent by intent so each send gets its
 * own error. The rate gate counts a call from its admission, so the wait (≤ INTENT_GROUP_MS) is
 * counted as part of the call: it can cost throughput, never a 429. Waits are the runtime clock's,
 * so the simulator runs them on its virtual time.
 */
import type { Clock } from '../kernel/clock.js';
import { crashPoint } from '../kernel/crash-points.js';
import type { RowStore, SendIntent } from '../store/rows.js';
import type { WalSync } from '../store/wal-sync.js';

/** Shortest time between two intent commits (ms). 400 orders/s then share about 100 fsyncs. */
export const INTENT_GROUP_MS = 10;

interface Waiting {
  intent: (now: number) => SendIntent;
  resolve: (r: { ok: boolean; now: number }) => void;
  reject: (err: unknown) => void;
}

export class IntentGroup {
  readonly #rows: Pick<RowStore, 'markSending' | 'markSendingAll'>;
  readonly #clock: Pick<Clock, 'mono' | 'now' | 'sleep' | 'yield'>;
  readonly #everyMs: number;
  #waiting: Waiting[] = [];
  #scheduled = false;
  #lastCommit = Number.NEGATIVE_INFINITY;
  readonly #wal: Pick<WalSync, 'durable' | 'failed'> | undefined;

  /** `wal`: commit unsynced and wait for this sync of the log before answering (see above); without it, FULL commits. */
  constructor(
    rows: Pick<RowStore, 'markSending' | 'markSendingAll'>,
    clock: Pick<Clock, 'mono' | 'now' | 'sleep' | 'yield'>,
    everyMs = INTENT_GROUP_MS,
    wal?: Pick<WalSync, 'durable' | 'failed'>,
  ) {
    this.#rows = rows;
    this.#clock = clock;
    this.#everyMs = everyMs;
    this.#wal = wal;
  }

  /**
   * Commits the intent `intent(now)` builds (now: the wall time of the commit) with the others
   * waiting; resolves with markSending's answer and that time once it is on disk.
   */
  write(intent: (now: number) => SendIntent): Promise<{ ok: boolean; now: number }> {
    return new Promise((resolve, reject) => {
      this.#waiting.push({ intent, resolve, reject });
      if (this.#scheduled) return;
      this.#scheduled = true;
      const wait = this.#lastCommit + this.#everyMs - this.#clock.mono();
      (wait > 0 ? this.#clock.sleep(wait) : this.#clock.yield()).then(() => this.#flush(), () => this.#flush());
    });
  }

  #flush(): void {
    this.#scheduled = false;
    const all = this.#waiting;
    this.#waiting = [];
    const now = this.#clock.now();
    // Each intent built on its own: one that throws is that send's error, and never leaves the
    // others of its group waiting for an answer that would not come (nor escapes this callback).
    const group: Waiting[] = [];
    const intents: SendIntent[] = [];
    for (const w of all) {
      try {
        intents.push(w.intent(now));
        group.push(w);
      } catch (err) {
        w.reject(err);
      }
    }
    if (group.length === 0) return;
    // The log's sync failed before this group (store/wal-sync.ts: sticky until a restart). No
    // intent of it counts as written: none is committed, each send gets that error (the sender
    // stops sending until a restart: dispatch/store-health.ts), and each row stays as it was,
    // unsent (or still owed the resend of its trxid). Before, a group whose one commit failed was
    // committed intent by intent, FULL, without looking: SQLite's own fsync of the log answering 0
    // proves nothing after a write-back error was reported once (each intent's frames are chained
    // onto frames the disk may lack), and the request left on an intent a power cut loses. An
    // unsynced group commit would at least not have sent, but left its rows `sending` for nothing.
    const failed = this.#wal?.failed;
    if (failed) {
      group.forEach((w) => w.reject(failed));
      return;
    }
    /** markSending's answer for one intent committed on its own, or the error it threw. */
    const alone = (x: SendIntent): boolean | { err: unknown } => {
      try {
        return this.#rows.markSending(x.batchId, x.idx, x.a, x.busyUntil, x.sent);
      } catch (err) {
        return { err };
      }
    };
    let results: boolean[] | undefined;
    if (group.length > 1 || this.#wal) {
      try {
        results = this.#rows.markSendingAll(intents, this.#wal === undefined);
      } catch {
        // The one transaction failed (nothing committed): each on its own, so each send gets its own answer or error.
      }
    }
    const answers: (boolean | { err: unknown })[] = results ?? intents.map(alone);
    const answer = (w: Waiting, a: boolean | { err: unknown }): void => (typeof a === 'boolean' ? w.resolve({ ok: a, now }) : w.reject(a.err));
    if (this.#wal) {
      // Committed to the log, not yet known to be on disk: a kill here leaves the rows `sending`
      // (the commit is in the operating system's cache), owed a resend of their trxids; none of
      // their requests left. Each on its own after a failed group too: their FULL commits were
      // synced by SQLite's own descriptor, and a 0 there proves nothing when a sync of the log
      // failed (or fails) on this one (store/wal-sync.ts): an intent counts as written only once
      // the log sync, which starts after every commit above and knows every earlier failure, says so.
      crashPoint('intent-written');
      // Every intent refused (no row is ours to send): nothing leaves, so nothing waits for the disk.
      const wait = answers.some((a) => a === true) ? this.#wal.durable() : Promise.resolve();
      wait.then(
        () => group.forEach((w, i) => answer(w, answers[i]!)),
        (err: unknown) => group.forEach((w, i) => (answers[i] === true ? w.reject(err) : answer(w, answers[i]!))),
      );
    } else {
      // Fully synced commits (one group, or each on its own after a failed group): on disk now.
      group.forEach((w, i) => answer(w, answers[i]!));
    }
    this.#lastCommit = this.#clock.mono();
  }
}
