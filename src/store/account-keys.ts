/**
 * Every meta key that holds one supplier account's state, by the account's name, in one list.
 *
 * An account renamed in accounts.toml (the same endpoint and key under a new name) keeps its state:
 * store/account-identity.ts moves each of these keys to the new name in the transaction that
 * renames its rows. A key left under the old name would be lost to the account (its pause forgotten,
 * so it is sent to again at once; what its rate gate learned from 429s relearned by being refused
 * again; a low-balance alert sent twice; its history exported again). So a new per-account key is
 * added here, and its module takes its name from here: nothing else names them.
 *
 * `default` (the one account of a home without accounts.toml) keeps the keys homes had before
 * several accounts, without the `:<account>` suffix.
 */

/** A per-account key: `base` for `default` when `bare`, else `base:<account>`. */
const perAccount = (base: string, bareForDefault: boolean) => (account: string): string => (bareForDefault && account === 'default' ? base : `${base}:${account}`);

/** account/pauses.ts: the account's pause (maintenance or account problem). */
export const pauseKey = perAccount('dispatch.pause', true);
/** account/pauses.ts: a maintenance pause lifted by a read, on trial until an order is placed. */
export const trialKey = perAccount('dispatch.trial', false);
/** account/pauses.ts: the last read probe of the account. */
export const probeKey = perAccount('dispatch.probe', false);
/** account/pauses.ts: the account's last pause that ended, and when (`topup doctor`'s pause line). */
export const lastPauseKey = perAccount('dispatch.last_pause', false);
/** account/rate-gate.ts: monotonic ms until which every call of the account is held (a Retry-After). */
export const holdKey = perAccount('rate.hold_until_mono', true);
/** account/learned-limits.ts: the limits the account's gate learned from 429s. */
export const learnedKey = perAccount('rate.learned', false);
/** reports/low-balance.ts: the account's low-balance alert was sent (not again until it clears). */
export const lowBalanceFlag = perAccount('reports.lowBalance.alerted', true);
/** reports/history.ts: order ids already exported to the account's history file. */
export const historyExportedKey = perAccount('reports.history.exported', true);
/** reports/history.ts: orders still processing at the last export, looked for again. */
export const historyWaitingKey = perAccount('reports.history.waiting', true);
/** reports/reconcile.ts: the account's balance at the last reconciliation. */
export const reconcileLastKey = perAccount('reports.reconcile.last', true);

/** Every per-account meta key (a rename moves each). */
export const ACCOUNT_META_KEYS: readonly ((account: string) => string)[] = Object.freeze([
  pauseKey,
  trialKey,
  probeKey,
  lastPauseKey,
  holdKey,
  learnedKey,
  lowBalanceFlag,
  historyExportedKey,
  historyWaitingKey,
  reconcileLastKey,
]);

/**
 * The tables holding per-account records by name (column `account`), besides `rows` and
 * `left_trxids` (renamed with their own rules) and `daily_rows` (a roll-up of `rows` kept by
 * triggers: renaming the rows moves it). `merge`: the table's key includes the account, so a
 * record the new name already has for the same key is combined.
 */
export const ACCOUNT_TABLES: readonly { table: string; merge?: string }[] = Object.freeze([
  { table: 'api_calls' },
  { table: 'player_check_calls' },
  // Calls and waits per minute: the same minute under both names is one account's minute.
  { table: 'rate_minutes', merge: `INSERT INTO rate_minutes (account, minute, calls, orders, order_wait_ms, order_wait_max_ms)
      SELECT @to, minute, calls, orders, order_wait_ms, order_wait_max_ms FROM rate_minutes WHERE account = @from
      ON CONFLICT (account, minute) DO UPDATE SET calls = calls + excluded.calls, orders = orders + excluded.orders,
        order_wait_ms = order_wait_ms + excluded.order_wait_ms, order_wait_max_ms = max(order_wait_max_ms, excluded.order_wait_max_ms)` },
  // Readings of one balance: the one at the same millisecond is the same reading.
  { table: 'balance_readings', merge: `INSERT OR REPLACE INTO balance_readings (account, at, usd, rise) SELECT @to, at, usd, rise FROM balance_readings WHERE account = @from` },
]);
