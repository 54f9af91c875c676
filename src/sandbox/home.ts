/**
 * The home's built-in sandbox (no TOPUP_API_URL): its state in jobs/sandbox.db, shared by the
 * daemon and every command of the home (each starts a sandbox in its own process on that file;
 * SQLite keeps them consistent, and every request reads the balance from the file, so a change
 * made by one process is seen by the others at once).
 *
 * Before a sandbox starts on the file, prepareHomeSandbox, in one IMMEDIATE transaction (two
 * processes starting at once must not both apply the setting):
 *  - makes the key's account with TOPUP_SANDBOX_BALANCE_USD if it has none;
 *  - applies a TOPUP_SANDBOX_BALANCE_USD that was given and differs from the account's starting
 *    balance (the value it was made with, or last changed to) as a top-up of the difference
 *    (down, if it is lower, never below 0), records the new value, and says so in the log: once,
 *    since the next start finds them equal. A setting that was not given changes nothing (the
 *    default must not take back money a rehearsal topped up);
 *  - raises the order sequence past every order id the home's database holds. A state file
 *    deleted to start afresh otherwise gave out ORD1000001 … again, and every later order was sent
 *    to review as "an order another row already holds".
 *
 * `topup sandbox balance --add/--set` (changeSandboxBalance) tops the account up or sets it, as a
 * ledger entry like any movement.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { registerIdentity } from '../kernel/identity.js';
import { systemClock } from '../kernel/clock.js';
import type { Config } from '../config/config.js';
import type { Logger } from '../kernel/log.js';
import { seqOfAnyId } from './order-ids.js';
import { SandboxState, fingerprint } from './state.js';
import { toMicros, toUsd } from './types.js';

export function homeSandboxFile(config: Pick<Config, 'jobsDir'>): string {
  return join(config.jobsDir, 'sandbox.db');
}

/**
 * The largest order sequence among the order ids in the home's database (0: none, or no
 * database). Both styles: `ORD1000123`, and the real-world style's digits (7-digit, or a 19-digit
 * snowflake). Reads the order-id index only: ~0.14 s for a million rows.
 */
export function largestOrderSeqSeen(dbPath: string): number {
  if (!existsSync(dbPath)) return 0;
  const db = new Database(dbPath, { readonly: true, fileMustExist: true });
  registerIdentity(db); // the home's indexes call trxid_fold()
  try {
    db.pragma('busy_timeout = 5000');
    const one = (sql: string): string | number | null => (db.prepare(sql).get() as { m: string | number | null } | undefined)?.m ?? null;
    const ord = one(`SELECT max(CAST(substr(order_id, 4) AS INTEGER)) AS m FROM rows
      WHERE order_id >= 'ORD' AND order_id < 'ORE' AND order_id NOT GLOB 'ORD*[^0-9]*'`);
    const small = one(`SELECT max(CAST(order_id AS INTEGER)) AS m FROM rows
      WHERE order_id >= '0' AND order_id < ':' AND length(order_id) <= 15 AND order_id NOT GLOB '*[^0-9]*'`);
    const big = one(`SELECT order_id AS m FROM rows
      WHERE order_id >= '0' AND order_id < ':' AND length(order_id) > 15 AND order_id NOT GLOB '*[^0-9]*'
      ORDER BY length(order_id) DESC, order_id DESC LIMIT 1`);
    const seqs = [ord === null ? undefined : seqOfAnyId(`ORD${ord}`), small === null ? undefined : seqOfAnyId(String(small)), big === null ? undefined : seqOfAnyId(String(big))];
    return Math.max(0, ...seqs.filter((s): s is number => s !== undefined));
  } catch {
    // A database from before the rows table (or not ours): it names no order.
    return 0;
  } finally {
    db.close();
  }
}

export interface SandboxAccountState {
  balanceUsd: number;
  startingBalanceUsd: number;
}

const cents = (usd: number): string => usd.toFixed(2);

/** Readies jobs/sandbox.db for a sandbox on it (see the module comment). */
export function prepareHomeSandbox(config: Config, log: Logger): SandboxAccountState {
  const file = homeSandboxFile(config);
  const floor = largestOrderSeqSeen(config.dbPath);
  const state = new SandboxState(file);
  try {
    return state.db.transaction(() => {
      const now = systemClock.now();
      const fp = fingerprint(config.apiKey);
      const setting = toMicros(config.sandboxBalanceUsd);
      if (!state.account(fp)) {
        state.ensureAccount(config.apiKey, { balanceMicros: setting, state: 'active', ipAllowlist: null });
        state.setStartingBalance(fp, setting);
      }
      const start = state.startingBalance(fp)!;
      if (config.sandboxBalanceSet && setting !== start) {
        const balance = state.account(fp)!.balanceMicros;
        // Down, never below 0: the sandbox's balance is never negative, as a real account's is not.
        const delta = Math.max(setting - start, -Math.max(balance, 0));
        if (delta !== 0) state.topup(fp, delta, now);
        const after = state.account(fp)!.balanceMicros;
        log.warn(
          { setting: 'TOPUP_SANDBOX_BALANCE_USD', from: toUsd(start), to: config.sandboxBalanceUsd, changeUsd: toUsd(delta), balanceUsd: toUsd(after) },
          `SANDBOX: TOPUP_SANDBOX_BALANCE_USD changed from ${cents(toUsd(start))} to ${cents(config.sandboxBalanceUsd)} USD: ` +
            `${delta >= 0 ? `${cents(toUsd(delta))} USD added to` : `${cents(toUsd(-delta))} USD taken off`} the sandbox balance, now ${cents(toUsd(after))} USD` +
            `${delta !== setting - start ? ` (not ${cents(toUsd(setting - start))}: the balance does not go below 0)` : ''}. ` +
            'It is applied once; to top up again use `topup sandbox balance --add USD`',
        );
        state.setStartingBalance(fp, setting);
      } else if (!state.db.prepare('SELECT 1 FROM starting_balances WHERE fp = ?').get(fp)) {
        state.setStartingBalance(fp, start); // an older state file: recorded from now on
      }
      if (floor > state.orderSeq()) {
        log.info({ orderSeq: floor }, `SANDBOX: new orders get ids after ORD${1_000_000 + floor}, the largest this home has seen`);
        state.raiseOrderSeq(floor);
      }
      const a = state.account(fp)!;
      return { balanceUsd: toUsd(a.balanceMicros), startingBalanceUsd: toUsd(state.startingBalance(fp)!) };
    }).immediate();
  } finally {
    state.close();
  }
}

export type BalanceChange = { addUsd: number } | { setUsd: number } | null;

export interface BalanceChanged extends SandboxAccountState {
  beforeUsd: number;
  file: string;
}

/** `topup sandbox balance`: shows, tops up (--add) or sets (--set) the home's sandbox balance. */
export function changeSandboxBalance(config: Config, log: Logger, change: BalanceChange): BalanceChanged {
  prepareHomeSandbox(config, log);
  const file = homeSandboxFile(config);
  const state = new SandboxState(file);
  try {
    return state.db.transaction(() => {
      const fp = fingerprint(config.apiKey);
      const before = state.account(fp)!.balanceMicros;
      const delta = change === null ? 0 : 'addUsd' in change ? toMicros(change.addUsd) : toMicros(change.setUsd) - before;
      if (delta !== 0) state.topup(fp, delta, systemClock.now());
      return { beforeUsd: toUsd(before), balanceUsd: toUsd(before + delta), startingBalanceUsd: toUsd(state.startingBalance(fp)!), file };
    }).immediate();
  } finally {
    state.close();
  }
}
