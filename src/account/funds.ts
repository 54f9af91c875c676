/**
 * The money check: a batch sends nothing until the balance covers all of its unsent rows.
 *
 * What is promised is read from the store, for every unfinished batch of every process on this
 * home (the daemon and a `topup submit` beside it share one balance): the unsent total of every
 * batch that is funded, or that its process has not judged yet, is set aside before a batch is
 * judged, so two processes never both start batches on the same money. The judgement and its
 * verdicts are one transaction.
 *
 * No head-of-line blocking: a batch the balance cannot cover waits without holding back later
 * batches that it can cover; it says how much to top up and which batches went ahead (log,
 * `topup status`, notification). A waiting batch sends none of its new rows until the whole of
 * its unsent total is covered (a file is one customer's set of orders, and half a file bought is
 * harder to reason about than a file that waits); it keeps its place: whenever it is covered it
 * goes first again, since batches are judged oldest first. Rows already in doubt are resent
 * whatever the balance (only a resend tells whether they were charged).
 *
 * Unless the operator says otherwise for one batch (`topup run-covered`, ops/run-covered.ts): then
 * the judgement skips the rows the balance does not cover and funds the rest, in one transaction.
 */
import { Priority } from '../api/client.js';
import type { Runtime } from '../runtime.js';
import type { Store } from '../store/store.js';
import type { SendScope } from '../store/row-reads.js';
import type { Batch } from '../store/batches.js';
import { ApiError, coerceError } from '../kernel/errors.js';
import { roundCents as cents } from '../kernel/money.js';
import { systemClock, type Clock } from '../kernel/clock.js';

export interface Waiting {
  batch: Batch;
  needUsd: number;
  availableUsd: number;
  /** needUsd − availableUsd: the top-up that lets it start. */
  topUpUsd: number;
  /** Later batches funded while this one waits. */
  wentAhead: string[];
  /** Several accounts: the accounts whose balance does not cover the batch's rows on them. */
  accounts?: string[];
  /**
   * Several accounts: each short account's own need, what it has available and its top-up. Money
   * does not move between accounts, so the top-up that starts the batch is one per account, never
   * their sum on any one of them.
   */
  short?: { account: string; needUsd: number; availableUsd: number; topUpUsd: number }[];
}

export interface FundsVerdict {
  funded: Batch[];
  waiting: Waiting[];
  /**
   * Batches whose rows on the accounts that could be read are covered, with rows on an account
   * whose balance could not be read (an account problem pauses it): they wait for that account
   * (wait reason `account`), not for balance; its never-sent rows move to another account once it
   * has been paused longer than max_queue_delay (engine/stages/dispatch.ts), and the batch is
   * judged again at its next check.
   */
  unread: { batch: Batch; accounts: string[]; detail: string }[];
  balanceUsd: number;
  /** USD set aside for batches already funded or not yet judged (any process). */
  reservedUsd: number;
}

/** Is this batch holding money: funded (and not waiting), or not judged yet by its process? */
function holdsMoney(b: Batch): boolean {
  if (b.cancelRequested) return false;
  if (b.waitReason === 'balance') return false;
  return true;
}

/** A waiting batch's detail with more batches named as having gone ahead of it. */
function withWentAhead(detail: string, ids: readonly string[]): string {
  const m = /; went ahead meanwhile: (.*)$/.exec(detail);
  const before = m ? m[1]!.split(', ') : [];
  const all = [...new Set([...before, ...ids])];
  return `${m ? detail.slice(0, m.index) : detail}; went ahead meanwhile: ${all.join(', ')}`;
}

/**
 * THE text of a wait for balance: stored as the batch's wait detail, so `topup status`, `topup
 * doctor`, the console and the notification all say this. With several short accounts it names
 * each account's need and top-up (a trial was told "top up at least 0.75 USD" for two accounts short
 * 0.40 and 0.35: 0.75 on either would not have started the batch).
 */
export function waitDetail(w: Waiting): string {
  const ahead = w.wentAhead.length > 0 ? `; went ahead meanwhile: ${w.wentAhead.join(', ')}` : '';
  const on = w.accounts ? ` on account${w.accounts.length > 1 ? 's' : ''} ${w.accounts.join(', ')}` : '';
  if (w.short && w.short.length > 1) {
    const and = (xs: string[]): string => (xs.length > 1 ? `${xs.slice(0, -1).join(', ')} and ${xs[xs.length - 1]}` : xs.join(''));
    const needs = and(w.short.map((a) => `${a.needUsd.toFixed(2)} USD on ${a.account} (${a.availableUsd.toFixed(2)} USD available)`));
    const tops = and(w.short.map((a) => `${a.topUpUsd.toFixed(2)} USD on ${a.account}`));
    return `waiting for balance${on}: needs ${needs} for its unsent rows; top up at least ${tops} (each account pays for its own rows)${ahead}`;
  }
  return `waiting for balance${on}: needs ${w.needUsd} USD for its unsent rows, ${w.availableUsd} USD available; top up at least ${w.topUpUsd} USD${ahead}`;
}

/**
 * Why a batch waits for accounts whose balance could not be read: the account's problem (as its
 * pause, or the failed read, states it) and what ends the wait; never a top-up, since nothing says
 * money is missing.
 */
export function accountWaitDetail(accounts: readonly string[], why: ReadonlyMap<string, string>): string {
  const each = accounts.map((a) => `${a} (${why.get(a) ?? 'its balance could not be read; checking again'})`);
  return `waiting for account${accounts.length > 1 ? 's' : ''} ${each.join(', ')}: nothing is sent there meanwhile; its rows never sent move to another account that sells their pack once it has been paused longer than max_queue_delay, or are sent there once it answers again. An account problem (a revoked or disabled key, API access turned off, an IP not allowed) is cured in the supplier's panel or accounts.toml, not by a top-up`;
}

/** Is the batch waiting, by this judgement, for an account whose balance could not be read? */
export function isAccountWait(b: Pick<Batch, 'waitReason' | 'waitDetail'>): boolean {
  return b.waitReason === 'account' && (b.waitDetail ?? '').startsWith('waiting for account');
}

/** A batch's unsent total per account ('' for a home with one account). */
function unsentOf(rt: Store, batchId: string, single: boolean): Map<string, number> {
  return single ? new Map([['', rt.rows.unsentTotal(batchId)]]) : rt.rows.unsentByAccount(batchId);
}

/**
 * Each account's balance less what every unfinished batch of the home not being judged holds
 * (funded, or not judged yet by its process): the money the judged batches may share.
 */
function promisedAside(rt: Store, balances: ReadonlyMap<string, number>, single: boolean, judge: ReadonlySet<string>, all = rt.batches.unfinished().filter((b) => b.state === 'open')): Map<string, number> {
  const available = new Map(balances);
  for (const b of all) {
    if (judge.has(b.id) || !holdsMoney(b)) continue;
    for (const [a, usd] of unsentOf(rt, b.id, single)) available.set(a, (available.get(a) ?? 0) - usd);
  }
  return available;
}

/**
 * Judges the batches in `judge` (this process's, oldest first) against the balance, with what
 * every other unfinished batch of the home has been promised set aside. One transaction: the
 * unsent totals read and the verdicts written cannot interleave with another process's.
 *
 * `balance`: one account's balance (a home with one account), or each account's (several): then
 * each account's balance covers the batch's rows on that account, and a batch is funded only when
 * every account it has unsent rows on covers them. An account whose balance is not in the map (it
 * could not be read) covers nothing: its batches wait for the next check.
 */
export function judgeFunds(rt: Store, balance: number | ReadonlyMap<string, number>, judge: ReadonlySet<string>, now: number, unread: ReadonlyMap<string, string> = new Map()): FundsVerdict {
  return rt.db.transaction((): FundsVerdict => {
    const single = typeof balance === 'number';
    const balances: ReadonlyMap<string, number> = single ? new Map([['', balance]]) : balance;
    const all = rt.batches.unfinished().filter((b) => b.state === 'open');
    const available = promisedAside(rt, balances, single, judge, all);
    const total = [...balances.values()].reduce((x, y) => x + y, 0);
    const reserved = total - [...balances.keys()].reduce((x, a) => x + (available.get(a) ?? 0), 0);
    const verdict: FundsVerdict = { funded: [], waiting: [], unread: [], balanceUsd: cents(total), reservedUsd: cents(reserved) };
    for (const b of all) {
      if (!judge.has(b.id)) continue;
      const needs = [...unsentOf(rt, b.id, single)].filter(([, usd]) => usd > 0);
      const short = needs.filter(([a, usd]) => balances.has(a) && usd > (available.get(a) ?? 0) + 1e-9);
      // Accounts whose balance could not be read: no figure of money, so no "top up" either (a
      // disabled key read as 0 USD told the reseller to top up an account holding 973 USD, and the
      // batch then waited for balance instead of its rows leaving the paused account).
      const unreadable = needs.filter(([a]) => !balances.has(a)).map(([a]) => a);
      if (short.length === 0 && unreadable.length > 0) {
        // Rows on the readable accounts that are covered stay promised to this batch (it holds its
        // money: it is not waiting for balance), so no later batch spends it meanwhile.
        for (const [a, usd] of needs) if (balances.has(a)) available.set(a, (available.get(a) ?? 0) - usd);
        verdict.unread.push({ batch: b, accounts: unreadable, detail: accountWaitDetail(unreadable, unread) });
      } else if (short.length === 0) {
        for (const [a, usd] of needs) available.set(a, (available.get(a) ?? 0) - usd);
        rt.batches.setBalanceBefore(b.id, total, now);
        rt.batches.setWait(b.id, null, null);
        verdict.funded.push(b);
        for (const w of verdict.waiting) w.wentAhead.push(b.id);
      } else if (b.runCovered && b.apiDay === null && runCoveredPart(rt, b, single, balances, available, now)) {
        // The operator's word (topup run-covered): the rows the balance does not cover were skipped
        // just now, in this transaction, and what they left is covered: funded like any batch.
        rt.batches.setBalanceBefore(b.id, total, now);
        rt.batches.setWait(b.id, null, null);
        verdict.funded.push(b);
        for (const w of verdict.waiting) w.wentAhead.push(b.id);
      } else {
        const n = short.reduce((x, [, usd]) => x + usd, 0);
        const avail = cents(short.reduce((x, [a]) => x + Math.max(available.get(a) ?? 0, 0), 0));
        const accounts = single ? undefined : short.map(([a]) => a);
        const each = single ? undefined : short.map(([a, usd]) => {
          const has = cents(Math.max(available.get(a) ?? 0, 0));
          return { account: a, needUsd: cents(usd), availableUsd: has, topUpUsd: cents(usd - has) };
        });
        verdict.waiting.push({ batch: b, needUsd: cents(n), availableUsd: avail, topUpUsd: cents(n - avail), wentAhead: [], ...(accounts ? { accounts, short: each } : {}) });
      }
    }
    for (const w of verdict.waiting) rt.batches.setWait(w.batch.id, 'balance', waitDetail(w));
    // A wait for an account the accounts file no longer names (engine/stages/dispatch.ts) says more: kept.
    for (const w of verdict.unread) if (w.batch.waitReason !== 'account' || isAccountWait(w.batch)) rt.batches.setWait(w.batch.id, 'account', w.detail);
    // Batches waiting since an earlier check (not judged now) learn which later batches went ahead.
    for (const w of all) {
      if (judge.has(w.id) || w.waitReason !== 'balance' || w.waitDetail === null) continue;
      const ahead = verdict.funded.filter((f) => f.seq > w.seq).map((f) => f.id);
      if (ahead.length > 0) rt.batches.setWait(w.id, 'balance', withWentAhead(w.waitDetail, ahead));
    }
    return verdict;
  }).immediate();
}

/**
 * A short batch the operator asked to run the part the balance covers: its unsent rows in file
 * order, each kept when what is left on its account covers it, every other skipped (`uncovered`,
 * NOT_COVERED_CODE: nothing bought; `topup retry` buys them later). First fit rather than a prefix:
 * a dear row that does not fit does not hold back a cheaper one after it. What the kept rows cost is
 * taken from `available`, so later batches in this judgement see it promised. Runs inside
 * judgeFunds' transaction: the skips and the funding are one commit, and no process can send a row
 * this skips (its intent needs a `pending` row). Returns false, skipping nothing, when not even one
 * row is covered: the batch waits whole, as it would without the operator's word.
 */
function runCoveredPart(rt: Store, b: Batch, single: boolean, balances: ReadonlyMap<string, number>, available: Map<string, number>, now: number): boolean {
  const split = coveredSplit(rt.rows.unsentCosts(b.id), single, balances, available);
  if (split.keep.length === 0) return false;
  const why = `not covered by the balance when the batch ran the part it covers (topup run-covered): nothing was bought for it; after a top-up, buy the ${split.skip.length} skipped rows (${split.skipUsd} USD) with: topup retry ${b.id}`;
  for (const r of split.skip) rt.rows.skipUncovered(b.id, r.idx, now, why);
  for (const [a, usd] of split.left) available.set(a, usd);
  return true;
}

export interface CoveredSplit {
  keep: { idx: number; line: number; usd: number }[];
  skip: { idx: number; line: number; usd: number }[];
  keepUsd: number;
  skipUsd: number;
  /** What each account has left once the kept rows are paid for. */
  left: Map<string, number>;
}

/** Which unsent rows (file order) the money `available` per account covers, first fit (see runCoveredPart). */
export function coveredSplit(rows: readonly { idx: number; line: number; account: string; usd: number }[], single: boolean, balances: ReadonlyMap<string, number>, available: ReadonlyMap<string, number>): CoveredSplit {
  const left = new Map(available);
  const keep: CoveredSplit['keep'] = [];
  const skip: CoveredSplit['skip'] = [];
  for (const r of rows) {
    const a = single ? '' : r.account;
    // An account whose balance could not be read covers nothing.
    const room = balances.has(a) ? (left.get(a) ?? 0) : -Infinity;
    if (r.usd <= room + 1e-9) {
      left.set(a, room - r.usd);
      keep.push({ idx: r.idx, line: r.line, usd: r.usd });
    } else {
      skip.push({ idx: r.idx, line: r.line, usd: r.usd });
    }
  }
  const sum = (xs: { usd: number }[]): number => cents(xs.reduce((x, r) => x + r.usd, 0));
  return { keep, skip, keepUsd: sum(keep), skipUsd: sum(skip), left };
}

/**
 * What a run of the part the balance covers would do to this batch now, as the judgement would
 * decide it with this balance (what other batches of the home were promised set aside): for
 * `topup run-covered` and the console to say before they ask. Writes nothing.
 */
export function coveredPreview(rt: Store, batchId: string, balance: number | ReadonlyMap<string, number>): CoveredSplit & { balanceUsd: number; availableUsd: number; accounts: CoveredAccount[] } {
  return rt.db.transaction(() => {
    const single = typeof balance === 'number';
    const balances: ReadonlyMap<string, number> = single ? new Map([['', balance]]) : balance;
    const available = promisedAside(rt, balances, single, new Set([batchId]));
    const unsent = rt.rows.unsentCosts(batchId);
    const split = coveredSplit(unsent, single, balances, available);
    // Only the accounts the batch's rows wait on decide (each account's balance covers its own
    // rows): another account's money is no part of the answer, so it is neither shown nor summed.
    const byAccount = new Map<string, { rows: number; usd: number }>();
    for (const r of unsent) {
      const a = single ? '' : r.account;
      const cur = byAccount.get(a) ?? { rows: 0, usd: 0 };
      byAccount.set(a, { rows: cur.rows + 1, usd: cur.usd + r.usd });
    }
    const accounts: CoveredAccount[] = [...byAccount].map(([a, u]) => ({
      account: a,
      balanceUsd: balances.has(a) ? cents(balances.get(a)!) : null,
      availableUsd: balances.has(a) ? cents(Math.max(available.get(a) ?? 0, 0)) : null,
      rows: u.rows,
      usd: cents(u.usd),
    }));
    const sum = (f: (x: CoveredAccount) => number | null): number => cents(accounts.reduce((x, a) => x + (f(a) ?? 0), 0));
    return { ...split, balanceUsd: sum((a) => a.balanceUsd), availableUsd: sum((a) => a.availableUsd), accounts };
  })();
}

/** One account a batch's unsent rows wait on, as coveredPreview read it ('' for the one account of a home without accounts.toml). */
export interface CoveredAccount {
  account: string;
  /** Null: its balance could not be read (it covers nothing). */
  balanceUsd: number | null;
  /** Its balance less what other batches were promised on it. */
  availableUsd: number | null;
  /** The batch's unsent rows on it, and what they cost. */
  rows: number;
  usd: number;
}

/** Reads the balance and judges (see judgeFunds). */
export async function checkFunds(rt: Store & Pick<Runtime, 'account' | 'clock'>, judge: ReadonlySet<string>): Promise<FundsVerdict> {
  const { balanceUsd } = await rt.account.client.balance({ priority: Priority.lookup });
  return judgeFunds(rt, balanceUsd, judge, rt.clock.now());
}

/**
 * Decides, step by step, which of this process's open batches may send: those funded and not
 * waiting for balance. Checks the balance for a batch before its first order and, while it waits,
 * every `recheckMs` (monotonic, so a clock step neither freezes nor hurries it).
 */
/** What the gate works with: the store's promises and verdicts, the account's balance, the log. */
export type FundsHome = Store & Pick<Runtime, 'account' | 'accounts' | 'log'>;

export class FundsGate {
  readonly #rt: FundsHome;
  readonly #recheckMs: number;
  readonly #clock: Clock;
  readonly #onWait: (batch: Batch, detail: string) => void;
  /** A 401/403 reading an account's balance: that account cannot work, which pauses it (not just funding). */
  readonly #onAccountProblem: (err: ApiError, account: string) => void;
  /** The last balance read, and when (wall ms), for snapshots. */
  lastBalance: { usd: number; at: number } | null = null;
  /** Monotonic time of each waiting batch's next check: only a top-up outside the API can change its verdict. */
  readonly #nextCheck = new Map<string, number>();
  /** Batches held for balance by an answer since the last step (their step reading is stale). */
  readonly #shorted = new Set<string>();
  /**
   * Waiting batches whose operator's word to run the part the balance covers this gate has judged:
   * a word given since is judged at the next step, not at the batch's next balance check (up to a
   * minute later), so the console's button acts at once.
   */
  readonly #coveredJudged = new Set<string>();

  constructor(rt: FundsHome, recheckMs: number, onWait: (batch: Batch, detail: string) => void, onAccountProblem: (err: ApiError, account: string) => void = () => {}, clock: Clock = systemClock) {
    this.#rt = rt;
    this.#recheckMs = recheckMs;
    this.#onWait = onWait;
    this.#onAccountProblem = onAccountProblem;
    this.#clock = clock;
  }

  /**
   * The API refused a row with INSUFFICIENT BALANCE: the batch waits. It is checked again only
   * after `recheckMs`: our total said the money was there (a price rose, money left the account),
   * so an immediate check would pass and send the same refused orders again.
   */
  short(batchId: string, detail: string): void {
    this.#shorted.add(batchId);
    const before = this.#rt.batches.get(batchId);
    this.#rt.batches.setWait(batchId, 'balance', `waiting for balance: ${detail}`);
    this.#nextCheck.set(batchId, this.#clock.mono() + this.#recheckMs);
    if (before && before.waitReason !== 'balance') this.#onWait(before, detail);
  }

  /** Rows of these batches moved to another account: their next check is due now, not a recheck later. */
  recheckNow(batchIds: Iterable<string>): void {
    for (const id of batchIds) if (this.#nextCheck.has(id)) this.#nextCheck.set(id, 0);
  }

  /** Milliseconds until the next balance check of a waiting batch, if any. */
  untilNextCheck(): number | undefined {
    if (this.#nextCheck.size === 0) return undefined;
    return Math.max(0, Math.min(...this.#nextCheck.values()) - this.#clock.mono());
  }

  /**
   * The balance the judgement needs: the one account's, or (several accounts) the balance of each
   * account the due batches have unsent rows on. An account that cannot be read now (`mayCall`
   * says no: an account problem) is left out: its batches wait for the next check.
   */
  async #balances(due: readonly Batch[], mayCall: (account: string) => boolean, unread: Map<string, string>): Promise<number | Map<string, number>> {
    const rt = this.#rt;
    if (rt.accounts.length <= 1) {
      const { balanceUsd } = await rt.account.client.balance({ priority: Priority.lookup });
      return balanceUsd;
    }
    // Every account that can be asked, not only those the due batches have rows on: the batch's
    // "balance before" is then the home's whole balance, as its "balance after" is (outbox/finish.ts),
    // so the two compare even when rows move between accounts (an adversarial review).
    const out = new Map<string, number>();
    // Why an account is left out, in the words its pause uses: the batches with rows on it say so.
    const paused = (id: string, fallback: string): string => {
      const p = rt.accounts.find((a) => a.id === id)?.pauses().current;
      return p?.kind === 'account' ? `account problem ${p.code}: ${p.detail}` : fallback;
    };
    for (const account of rt.accounts) {
      if (!mayCall(account.id)) {
        unread.set(account.id, paused(account.id, 'paused'));
        continue;
      }
      try {
        out.set(account.id, (await account.client.balance({ priority: Priority.lookup })).balanceUsd);
      } catch (err) {
        // A refused read is no figure of money: the account is left out, never taken as 0 USD.
        if (err instanceof ApiError && err.classification === 'account') {
          this.#onAccountProblem(err, account.id);
          unread.set(account.id, paused(account.id, `account problem ${err.codeOrStatus}: ${err.reason}`));
        } else {
          rt.log.warn({ account: account.id, err: coerceError(err).message }, 'cannot read the balance; will try again');
          unread.set(account.id, `its balance could not be read (${coerceError(err).message}); checking again`);
        }
      }
    }
    return out;
  }

  async sendable(open: readonly Batch[], mayCall: (account: string) => boolean): Promise<SendScope> {
    const rt = this.#rt;
    const mono = this.#clock.mono();
    const withUnsent = open.filter((b) => !b.cancelRequested && rt.rows.hasPending(b.id));
    const due = withUnsent.filter(
      (b) => (b.balanceBefore === null || b.waitReason === 'balance' || isAccountWait(b)) && ((this.#nextCheck.get(b.id) ?? 0) <= mono || (b.runCovered && !this.#coveredJudged.has(b.id))),
    );
    for (const b of due) if (b.runCovered) this.#coveredJudged.add(b.id);
    const single = rt.accounts.length <= 1;
    if (due.length > 0 && (!single || mayCall(rt.account.id))) {
      try {
        const unread = new Map<string, string>();
        const balance = await this.#balances(due, mayCall, unread);
        const usd = typeof balance === 'number' ? balance : [...balance.values()].reduce((x, y) => x + y, 0);
        this.lastBalance = { usd, at: this.#clock.now() };
        const verdict = judgeFunds(rt, balance, new Set(due.map((b) => b.id)), this.#clock.now(), unread);
        for (const w of verdict.unread) {
          this.#nextCheck.set(w.batch.id, this.#clock.mono() + this.#recheckMs);
          if (!isAccountWait(w.batch)) rt.log.warn({ batch: w.batch.id, accounts: w.accounts }, 'batch is waiting for an account whose balance cannot be read (not for balance)');
        }
        for (const w of verdict.waiting) {
          this.#nextCheck.set(w.batch.id, this.#clock.mono() + this.#recheckMs);
          if (w.batch.waitReason !== 'balance') {
            rt.log.warn({ batch: w.batch.id, needUsd: w.needUsd, availableUsd: w.availableUsd, topUpUsd: w.topUpUsd, wentAhead: w.wentAhead }, 'batch is waiting for balance');
            this.#onWait(w.batch, waitDetail(w).replace(/^waiting for balance: /, ''));
          } else if (w.wentAhead.length > 0) {
            rt.log.info({ batch: w.batch.id, wentAhead: w.wentAhead }, 'batches the balance covers went ahead of a waiting batch');
          }
        }
        for (const f of verdict.funded) {
          this.#nextCheck.delete(f.id);
          if (f.waitReason === 'balance') rt.log.info({ batch: f.id, balanceUsd: verdict.balanceUsd }, 'balance covers the batch: sending');
        }
      } catch (err) {
        if (err instanceof ApiError && err.classification === 'account') this.#onAccountProblem(err, rt.account.id);
        else rt.log.warn({ err: coerceError(err).message }, 'cannot read the balance; will try again');
        // A failed read (a proxy page, a timeout) is tried again at the usual cadence, not later.
        for (const b of due) this.#nextCheck.set(b.id, this.#clock.mono() + this.#recheckMs);
      }
    } else if (due.length > 0) {
      // No call may leave (an account pause): the check is due again later, not at once. (Found by
      // the simulator: a check left due kept the runner waking every 5 ms until the pause ended.)
      for (const b of due) if (this.#nextCheck.has(b.id)) this.#nextCheck.set(b.id, mono + this.#recheckMs);
    }
    // A check is owed only to a batch with unsent rows it may still send: one cancelled (or with
    // nothing left to send) since a failed read set its next check would stay due for ever (found
    // by the simulator: the runner woke every 5 ms while a cancelled batch's row was verified).
    for (const id of this.#nextCheck.keys()) if (!withUnsent.some((b) => b.id === id)) this.#nextCheck.delete(id);
    // A batch not (or no longer) covered by the balance holds back its new orders only: rows
    // already in doubt are resent, since only a resend tells whether they were charged.
    const newOrders: string[] = [];
    const resendsOnly: string[] = [];
    // The step's reading of a batch is current unless this gate changed it since: judged just now,
    // or held for balance by an answer (short()).
    const changed = new Set([...due.map((b) => b.id), ...this.#shorted]);
    this.#shorted.clear();
    for (const b of open) {
      const cur = changed.has(b.id) ? rt.batches.get(b.id)! : b;
      const funded = cur.waitReason !== 'balance' && cur.balanceBefore !== null;
      (funded || !rt.rows.hasPending(b.id) ? newOrders : resendsOnly).push(b.id);
    }
    return { newOrders, resendsOnly };
  }
}
