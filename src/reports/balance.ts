/**
 * Balance report: one timestamped row per run and account, each account in its own file
 * (reports/files.ts): outbox/reports/balance.csv for account `default` (every home without
 * accounts.toml), balance-<account>.csv for the accounts of accounts.toml.
 * Columns: at (ISO time), balanceUsd, currency, reservedUsd (what unfinished batches still have
 * to spend on that account), mode (SANDBOX/LIVE).
 *
 * One account whose balance cannot be read does not hold back the others' rows: they are written,
 * then the run fails naming it (the job's last run says so).
 */
import { Priority } from '../api/client.js';
import { coerceError } from '../kernel/errors.js';
import type { Runtime } from '../runtime.js';
import { appendCsv } from './csv-append.js';
import { balanceFile, reservedOf } from './files.js';

export const BALANCE_COLUMNS = ['at', 'balanceUsd', 'currency', 'reservedUsd', 'mode'] as const;

export interface BalanceReportResult {
  /** The first account's (the only one without accounts.toml). */
  balanceUsd: number;
  file: string;
  accounts: { account: string; balanceUsd: number | null; file: string; error?: string }[];
}

export async function runBalanceReport(rt: Pick<Runtime, 'accounts' | 'batches' | 'clock' | 'config' | 'rows'>, now = rt.clock.now()): Promise<BalanceReportResult> {
  const reserved = reservedOf(rt);
  const accounts: BalanceReportResult['accounts'] = [];
  for (const a of rt.accounts) {
    const file = balanceFile(rt.config.reportsDir, a.id);
    try {
      const b = await a.client.balance({ priority: Priority.report });
      appendCsv(file, BALANCE_COLUMNS, [[new Date(now).toISOString(), b.balanceUsd, b.currency, reserved(a.id), rt.config.sandbox ? 'SANDBOX' : 'LIVE']]);
      accounts.push({ account: a.id, balanceUsd: b.balanceUsd, file });
    } catch (err) {
      accounts.push({ account: a.id, balanceUsd: null, file, error: coerceError(err).message });
    }
  }
  const failed = accounts.filter((a) => a.error !== undefined);
  if (failed.length > 0) throw new Error(`balance report: ${failed.map((f) => `${f.account}: ${f.error}`).join('; ')}${failed.length < accounts.length ? ' (the other accounts were written)' : ''}`);
  return { balanceUsd: accounts[0]!.balanceUsd!, file: accounts[0]!.file, accounts };
}
