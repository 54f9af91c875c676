/**
 * Group commit of the answers that carried an order (`placed`, store/rows.ts). Each such answer
 * was its own unsynced commit: at 400 orders/s the commit per answer, with the pages it dirties
 * (the row, its indexes, batch_counts, the daily roll-ups' triggers), was the largest cost left on
 * the main thread and 77 KB written per order (npm run bench -- --parts scale, docs/bench.md). The
 * answers that arrive in one turn of the event loop now share one transaction, committed at the
 * next turn (the runtime clock's yield: no timer, so a lone answer waits for nothing), each in a
 * savepoint of its own so that one refused by the store (the order id another row holds) is that
 * answer's error alone.
 *
 * The money rule is unchanged: a row's answer is committed before anything that depends on it
 * happens. The sender waits for the commit before it returns, so the row's next step (a poll, a
 * resend, its result line, its webhook) starts only after it. A kill between the answer's arrival
 * and the group's commit leaves the row where its intent left it, `sending` (in doubt): the next
 * daemon resends it under its own trxid and the supplier answers with the same order (a replay),
 * never a second charge — the path a kill between the response and its commit already took
 * (crash points `response-received` and `answer-grouped`). Like every answer, the commit is unsynced (db.ts unsynced():
 * a power cut can undo it until the next full sync, with the same outcome); a result file is
 * written only after durable().
 */
import type { Clock } from '../kernel/clock.js';
import { crashPoint } from '../kernel/crash-points.js';
import type { PlacedAnswer, RowStore } from '../store/rows.js';

interface Waiting {
  answer: PlacedAnswer;
  resolve: (moved: boolean) => void;
  reject: (err: unknown) => void;
}

export class AnswerGroup {
  readonly #rows: Pick<RowStore, 'placed' | 'placedAll'>;
  readonly #clock: Pick<Clock, 'yield'>;
  #waiting: Waiting[] = [];
  #scheduled = false;

  constructor(rows: Pick<RowStore, 'placed' | 'placedAll'>, clock: Pick<Clock, 'yield'>) {
    this.#rows = rows;
    this.#clock = clock;
  }

  /** placed()'s answer (whether the row moved) once the group holding it is committed; rejects with placed()'s error. */
  placed(answer: PlacedAnswer): Promise<boolean> {
    return new Promise((resolve, reject) => {
      this.#waiting.push({ answer, resolve, reject });
      if (this.#scheduled) return;
      this.#scheduled = true;
      this.#clock.yield().then(() => this.#flush(), () => this.#flush());
    });
  }

  #flush(): void {
    this.#scheduled = false;
    const group = this.#waiting;
    this.#waiting = [];
    if (group.length === 0) return;
    crashPoint('answer-grouped');
    /** placed() on its own: its answer, or the error it threw. */
    const alone = (a: PlacedAnswer): boolean | { err: unknown } => {
      try {
        return this.#rows.placed(a.batchId, a.idx, a.o, a.now, a.nextPollAt, a.extra);
      } catch (err) {
        return { err };
      }
    };
    let results: (boolean | { err: unknown })[] | undefined;
    if (group.length > 1) {
      try {
        results = this.#rows.placedAll(group.map((w) => w.answer));
      } catch {
        // The one transaction failed (nothing committed): each on its own, so each gets its own answer or error.
      }
    }
    const answers = results ?? group.map((w) => alone(w.answer));
    group.forEach((w, i) => {
      const r = answers[i]!;
      if (typeof r === 'boolean') w.resolve(r);
      else w.reject(r.err);
    });
  }
}
