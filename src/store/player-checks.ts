/**
 * The player checks' tables (migration 16): the cache of answers that settled a player, every
 * check sent (for the money the reseller sees), and the players seen completed recently.
 * claim/player-checks.ts decides with them.
 */
import type { Db } from './db.js';
import { rowState } from './state-sql.js';
import { oneLine, type CheckCharged, type CheckOutcome } from '../api/player-check.js';

export type { CheckCharged };

/** A check of this player is in flight now (recorded `sent` and not yet answered): ask again when it is. */
/**
 * A player whose checks got no usable answer this many times within UNSETTLED_WINDOW_MS, each one
 * perhaps charged, is not asked again until the window has passed since the first of them: a
 * supplier that answers one player's check with an error page every time would otherwise be paid
 * for a check every 10 s (a batch waiting for its checks loads again that often), without end.
 */
export const UNSETTLED_MAX = 3;
export const UNSETTLED_WINDOW_MS = 60 * 60_000;

/**
 * A `sent` record older than the client's request timeout plus this is a check nobody is waiting
 * for any more (its sender was killed): the next ask of the player turns it `in-doubt` and asks.
 */
export const FLIGHT_MARGIN_MS = 5_000;

export class CheckInFlight extends Error {
  readonly code = 'PLAYER_CHECK_IN_FLIGHT';
  /** `answered`: that check has been answered already (the cache holds it). */
  constructor(readonly trxid: string, readonly since: number, readonly answered = false) {
    super(answered ? `a check of this player (${trxid}) was answered at ${new Date(since).toISOString()}` : `a check of this player (${trxid}) is in flight since ${new Date(since).toISOString()}`);
    this.name = 'CheckInFlight';
  }
}

export interface CachedCheck {
  kind: string;
  player: string;
  outcome: 'found' | 'not-found';
  name: string | null;
  checkedAt: number;
  trxid: string;
}

export interface CheckCall {
  trxid: string;
  kind: string;
  player: string;
  account: string;
  batchId: string | null;
  outcome: string;
  said: string | null;
  at: number;
  priceUsd: number;
}

/** Checks and their money: `costUsd` is what they may have cost (ran, or may have run); `inDoubtUsd` the part that may have. */
export interface CheckMoney {
  calls: number;
  costUsd: number;
  inDoubt: number;
  inDoubtUsd: number;
}

const micro = (usd: number): number => Math.round(usd * 1e6) / 1e6;

export class PlayerCheckStore {
  readonly #db: Db;
  constructor(db: Db) {
    this.#db = db;
  }

  /** The answer kept for this player, if it is younger than `maxAgeMs`. */
  cached(kind: string, player: string, now: number, maxAgeMs: number): CachedCheck | undefined {
    const r = this.#db.prepare('SELECT * FROM player_checks WHERE kind = ? AND player = ? AND checked_at >= ?').get(kind, player, now - maxAgeMs) as
      | { kind: string; player: string; outcome: 'found' | 'not-found'; name: string | null; checked_at: number; trxid: string }
      | undefined;
    return r && { kind: r.kind, player: r.player, outcome: r.outcome, name: r.name, checkedAt: r.checked_at, trxid: r.trxid };
  }

  /**
   * The record of a check about to leave, written before its request does (the client's
   * beforeSend): outcome `sent`, charged `maybe`, at the tariff. If the process dies before the
   * answer is recorded, this record stays: "in doubt, may have cost X", counted in summaries and
   * the console, never nothing. One transaction on the store's write lock; one check of a player
   * in flight at a time for every process (the partial unique index of migration 24), and none
   * when an answer of it was kept since `answeredSince` (one landed while this ask waited for the
   * rate gate: CheckInFlight with `answered`, nothing written, nothing sent): a `sent`
   * record of the same player younger than `staleBefore` is a check another ask (this process or
   * another: the daemon, `topup validate`) is making now, and this one is refused (CheckInFlight,
   * nothing written, nothing sent); an older one is a check whose sender can no longer be waiting
   * for its answer (its request has timed out: it was killed), which becomes `in-doubt`.
   */
  begin(call: Omit<CheckCall, 'outcome' | 'said'>, staleBefore: number, answeredSince: number): void {
    this.#db.transaction(() => {
      // Answered while this ask waited for the rate gate (another process's check landed): no call.
      const kept = this.#db.prepare('SELECT trxid, checked_at AS at FROM player_checks WHERE kind = ? AND player = ? AND checked_at >= ?').get(call.kind, call.player, answeredSince) as { trxid: string; at: number } | undefined;
      if (kept) throw new CheckInFlight(kept.trxid, kept.at, true);
      const flying = this.#db.prepare(`SELECT trxid, at FROM player_check_calls WHERE kind = ? AND player = ? AND outcome = 'sent'`).get(call.kind, call.player) as { trxid: string; at: number } | undefined;
      if (flying && flying.at >= staleBefore) throw new CheckInFlight(flying.trxid, flying.at);
      if (flying) {
        this.#db.prepare(`UPDATE player_check_calls SET outcome = 'in-doubt', said = ? WHERE trxid = ?`)
          .run(`sent at ${new Date(flying.at).toISOString()}; its answer was never recorded (the process that sent it stopped first): the supplier may have charged it`, flying.trxid);
      }
      this.#db.prepare(`INSERT INTO player_check_calls (trxid, kind, player, account, batch_id, outcome, said, at, price_usd, charged)
        VALUES (@trxid, @kind, @player, @account, @batchId, 'sent', NULL, @at, @priceUsd, 'maybe')`).run(call);
    }).immediate();
  }

  /**
   * A sent check's answer: its outcome replaces `sent`; a check the supplier did not run
   * (charged `no`: a 429, a refusal) costs nothing; a settling outcome (found, not found) replaces
   * the cached answer, in the same transaction.
   */
  finish(trxid: string, r: { outcome: CheckOutcome; said: string; charged: CheckCharged; name: string | null; at: number }): void {
    this.#db.transaction(() => {
      const c = this.#db.prepare(`UPDATE player_check_calls SET outcome = ?, said = ?, at = ?, charged = ?, price_usd = CASE WHEN ? = 'no' THEN 0 ELSE price_usd END
        WHERE trxid = ? RETURNING kind, player`).get(r.outcome, oneLine(r.said, 500), r.at, r.charged, r.charged, trxid) as { kind: string; player: string } | undefined;
      if (!c) throw new Error(`player check ${trxid} was never recorded as sent`);
      if (r.outcome === 'found' || r.outcome === 'not-found') {
        this.#db.prepare(`INSERT INTO player_checks (kind, player, outcome, name, checked_at, trxid) VALUES (?, ?, ?, ?, ?, ?)
          ON CONFLICT (kind, player) DO UPDATE SET outcome = excluded.outcome, name = excluded.name, checked_at = excluded.checked_at, trxid = excluded.trxid`)
          .run(c.kind, c.player, r.outcome, r.name, r.at, trxid);
      }
    }).immediate();
  }

  /**
   * How many checks of this player since `since` settled nothing and may have been charged (no
   * answer, an error page, words this version does not know, `sent` with no answer recorded): the
   * bound on paying again and again for a player whose checks never answer (UNSETTLED_MAX).
   */
  unsettledCharged(kind: string, player: string, since: number): { n: number; first: number; usd: number } {
    return this.#db.prepare(`SELECT count(*) AS n, coalesce(min(at), 0) AS first, coalesce(sum(price_usd), 0) AS usd FROM player_check_calls
      WHERE kind = ? AND player = ? AND at >= ? AND charged = 'maybe'`).get(kind, player, since) as { n: number; first: number; usd: number };
  }

  /**
   * Whether this player may be asked now (UNSETTLED_MAX): undefined, or why not and until when.
   * Shared by a file's checks and the order API's.
   */
  mayAsk(kind: string, player: string, now: number): { until: number; why: string } | undefined {
    const u = this.unsettledCharged(kind, player, now - UNSETTLED_WINDOW_MS);
    if (u.n < UNSETTLED_MAX) return undefined;
    const until = u.first + UNSETTLED_WINDOW_MS;
    return { until, why: `${u.n} checks of this player in the last hour got no usable answer and may each have been charged (${u.usd.toFixed(2)} USD at your price): not asked again before ${new Date(until).toISOString().replace(/\.\d+Z$/, 'Z')}; send the row without a check to buy it now` };
  }

  /** A check recorded `sent` whose request never left (a stop while the gate held it): no record of nothing. */
  unsent(trxid: string): void {
    this.#db.prepare(`DELETE FROM player_check_calls WHERE trxid = ? AND outcome = 'sent'`).run(trxid);
  }

  /**
   * The last check of this player sent since `since` (any outcome), with the name its answer
   * gave: what the order API answers a repeat within its short window by, without a new call.
   */
  lastCall(kind: string, player: string, since: number): (CheckCall & { name: string | null }) | undefined {
    const r = this.#db.prepare(`SELECT c.*, (SELECT name FROM player_checks p WHERE p.trxid = c.trxid) AS name FROM player_check_calls c
      WHERE c.kind = ? AND c.player = ? AND c.at >= ? ORDER BY c.at DESC, c.rowid DESC LIMIT 1`).get(kind, player, since) as
      | { trxid: string; kind: string; player: string; account: string; batch_id: string | null; outcome: string; said: string | null; at: number; price_usd: number; name: string | null }
      | undefined;
    return r && { trxid: r.trxid, kind: r.kind, player: r.player, account: r.account, batchId: r.batch_id, outcome: r.outcome, said: r.said, at: r.at, priceUsd: r.price_usd, name: r.name };
  }

  /**
   * Checks sent for a batch (while it loaded): how many, what they may have cost at the price the
   * reseller set (those the supplier ran, and those that may have run), how many settled nothing
   * and may have been charged (`inDoubt`, `inDoubtUsd`: no answer, or one that does not say).
   */
  batchCalls(batchId: string): CheckMoney & { notFound: number } {
    const r = this.#db.prepare(`SELECT count(*) AS n, coalesce(sum(price_usd), 0) AS usd, coalesce(sum(outcome = 'not-found'), 0) AS nf,
      coalesce(sum(charged = 'maybe'), 0) AS dn, coalesce(sum(CASE WHEN charged = 'maybe' THEN price_usd ELSE 0 END), 0) AS du
      FROM player_check_calls WHERE batch_id = ?`).get(batchId) as { n: number; usd: number; nf: number; dn: number; du: number };
    return { calls: r.n, costUsd: micro(r.usd), notFound: r.nf, inDoubt: r.dn, inDoubtUsd: micro(r.du) };
  }

  /** Every check since `since` (files and the order API): the console's money. */
  callsSince(since: number): CheckMoney {
    const r = this.#db.prepare(`SELECT count(*) AS n, coalesce(sum(price_usd), 0) AS usd, coalesce(sum(charged = 'maybe'), 0) AS dn,
      coalesce(sum(CASE WHEN charged = 'maybe' THEN price_usd ELSE 0 END), 0) AS du FROM player_check_calls WHERE at >= ?`).get(since) as { n: number; usd: number; dn: number; du: number };
    return { calls: r.n, costUsd: micro(r.usd), inDoubt: r.dn, inDoubtUsd: micro(r.du) };
  }

  /**
   * The slugs and zone ids of the rows completed since `since` for this user id (the order API's
   * TOPUP_PLAYER_CHECK_SKIP_DAYS, per order): the caller keeps those of the same check and zone,
   * as completedSince's caller does. Read through the rows_completed_player index (migration 21).
   */
  completedFor(userId: string, since: number): { slug: string; zoneId: string | null }[] {
    return this.#db.prepare(`SELECT slug, json_extract(request_json, '$.zoneId') AS zoneId FROM rows
      WHERE state = ${rowState('completed')} AND json_extract(CASE WHEN json_valid(request_json) THEN request_json END, '$.userId') = ? AND updated_at >= ? AND slug IS NOT NULL`)
      .all(userId, since) as { slug: string; zoneId: string | null }[];
  }

  /**
   * (slug, userId, zoneId) of the rows completed since `since`: the players seen receiving a
   * top-up recently, whom TOPUP_PLAYER_CHECK_SKIP_DAYS spares a check.
   */
  completedSince(since: number): { slug: string; userId: string | null; zoneId: string | null }[] {
    return this.#db.prepare(`SELECT slug, json_extract(request_json, '$.userId') AS userId, json_extract(request_json, '$.zoneId') AS zoneId
      FROM rows WHERE state = ${rowState('completed')} AND updated_at >= ? AND slug IS NOT NULL AND request_json IS NOT NULL`).all(since) as {
      slug: string; userId: string | null; zoneId: string | null;
    }[];
  }
}
