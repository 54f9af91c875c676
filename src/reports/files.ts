/**
 * Where each account's report files are, and what it has reserved (docs/reports.md, "Several
 * accounts"). The appended reports (balance, history) keep one file per account, each with the
 * columns of before, so a file never changes its meaning or its header: account `default` (every
 * home without accounts.toml) keeps `balance.csv` and `history-YYYY-MM.csv`; an account of
 * accounts.toml writes `balance-<account>.csv` and `history-<account>-YYYY-MM.csv`. (Reconciliation,
 * rewritten whole each day, has one file with an `account` column instead.)
 */
import { join } from 'node:path';
import type { Runtime } from '../runtime.js';
import { reservedByAccount } from '../ops/account-views.js';
import { monthOf } from './csv-append.js';

const tag = (account: string): string => (account === 'default' ? '' : `-${account}`);

export function balanceFile(reportsDir: string, account: string): string {
  return join(reportsDir, `balance${tag(account)}.csv`);
}

/** The month in the name is the export's month in TOPUP_TIME_ZONE (`zone`). */
export function historyFile(reportsDir: string, account: string, now: number, zone: string): string {
  return join(reportsDir, `history${tag(account)}-${monthOf(now, zone)}.csv`);
}

/**
 * USD the unfinished batches still have to spend, per account. A home whose one account is
 * `default` holds every row on it: the home's figure, one read of the counters.
 */
export function reservedOf(rt: Pick<Runtime, 'accounts' | 'batches' | 'rows'>): (account: string) => number {
  if (rt.accounts.length === 1 && rt.accounts[0]!.id === 'default') {
    const all = rt.rows.reservedUsd();
    return () => all;
  }
  const by = reservedByAccount(rt);
  return (account) => by.get(account) ?? 0;
}
