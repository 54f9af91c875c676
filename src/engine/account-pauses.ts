/**
 * The pauses of every account this home has, as the engine's stages ask about them. Each account
 * pauses on its own (account/pauses.ts): one supplier's maintenance or revoked key stops that
 * account's orders and calls, never another's. A home with one account behaves exactly as before.
 */
import type { Account } from '../account/account.js';
import type { Pauses, PauseState } from '../account/pauses.js';
import type { Clock } from '../kernel/clock.js';

export class AccountPauses {
  /** One Pauses per account, in the accounts' order (the first is what single-account views show). */
  readonly #by: ReadonlyMap<string, Pauses>;
  readonly names: readonly string[];
  /**
   * The home has one account, `default` (no accounts.toml): every row is on it, so reads need not
   * name the account (the indexes of before serve them). A home with one account of another name
   * may still hold rows of `default` from before its accounts.toml: those are read by name.
   */
  readonly plain: boolean;

  constructor(accounts: readonly Account[], clock: Clock) {
    this.#by = new Map(accounts.map((a) => [a.id, a.pauses(clock)]));
    this.names = accounts.map((a) => a.id);
    this.plain = this.names.length === 1 && this.names[0] === 'default';
  }

  of(account: string): Pauses {
    const p = this.#by.get(account);
    if (!p) throw new TypeError(`no account named ${account}`);
    return p;
  }

  /** Every account's pause in force, by account (accounts not paused left out). */
  all(): { account: string; pause: PauseState }[] {
    const out: { account: string; pause: PauseState }[] = [];
    for (const [account, p] of this.#by) {
      const pause = p.current;
      if (pause) out.push({ account, pause });
    }
    return out;
  }

  /** The first pause in force (for views that show one), or null. */
  get current(): PauseState | null {
    return this.all()[0]?.pause ?? null;
  }

  /**
   * Whether a pause lets one of the account's orders through as a probe once its back-off ends.
   *
   * Never an account problem (401/403, a redirect), on any home: the read probe (account/pauses.ts,
   * GET /balance with the same key, due at the same time) proves whether the key and the account
   * work, since spec §5's codes answer every route. An order probe proved nothing more and cost a
   * refused POST /orders every interval (3 in 10.5 s at a 3 s interval, one and two accounts alike,
   * test/accounts/no-order-probe-account-problem.test.ts); and an answer that cannot prove "not
   * created" (a redirect, a 404 page: api/classify.ts) would have left the probing row in doubt,
   * where no failover can take it.
   *
   * Not a maintenance pause on a home with several accounts: its rows wait max_queue_delay and move
   * to an account that is not paused (dispatch/failover.ts), and the read probe on its schedule
   * tells when it is worth an order again. An order probe every 1–5 s there cost a refused order
   * each (a new-user trial: 8 refused POST /orders in 27 s for one order, and a webhook pair for
   * each). One account alone keeps its maintenance order probe: a read cannot tell that an
   * orders-only maintenance is over (the spec: "GET routes may still work"), and no other account
   * can take its rows.
   */
  ordersProbe(account: string): boolean {
    const kind = this.of(account).current?.kind;
    // The operator's pause (`topup account pause`): no order at all until `topup account resume`.
    if (kind === 'account' || kind === 'operator') return false;
    return this.names.length < 2 || kind !== 'maintenance';
  }

  /** Milliseconds until one of the account's orders may leave (0: now), or undefined when none may until a read probe lifts its pause. */
  untilSend(account: string): number | undefined {
    const p = this.of(account);
    const wait = p.untilProbe();
    if (wait === undefined) return 0;
    return this.ordersProbe(account) ? wait : undefined;
  }

  /** Accounts whose orders may leave now (a paused one only when its order probe is due: ordersProbe). */
  sendable(): string[] {
    return this.names.filter((n) => this.untilSend(n) === 0);
  }

  /** Accounts whose polls and lookups may leave now (only an account problem stops them). */
  pollable(): string[] {
    return this.names.filter((n) => this.of(n).canPoll());
  }

  /** Milliseconds until the earliest probe of a paused account may leave, or undefined with none paused. */
  untilProbe(): number | undefined {
    let min: number | undefined;
    for (const p of this.#by.values()) {
      const w = p.untilProbe();
      if (w !== undefined && (min === undefined || w < min)) min = w;
    }
    return min;
  }

  /** Milliseconds until the earliest account that cannot poll may probe, or undefined when every account can poll. */
  untilPollProbe(): number | undefined {
    let min: number | undefined;
    for (const p of this.#by.values()) {
      if (p.canPoll()) continue;
      const w = p.untilProbe() ?? 0;
      if (min === undefined || w < min) min = w;
    }
    return min;
  }
}
