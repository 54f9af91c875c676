/**
 * Balance report: one timestamped row per run in outbox/reports/balance.csv.
 * Columns: at (ISO time), balanceUsd, currency, reservedUsd (what unfinished batches still have
 * to spend), mode (SANDBOX/LIVE).
 */
import { join } from 'node:path';
import { Priority } from '../api/client.js';
import type { Runtime } from '../runtime.js';
import { appendCsv } from './csv-append.js';

export const BALANCE_COLUMNS = ['at', 'balanceUsd', 'currency', 'reservedUsd', 'mode'] as const;

export async function runBalanceReport(rt: Pick<Runtime, 'account' | 'clock' | 'config' | 'rows'>, now = rt.clock.now()): Promise<{ balanceUsd: number; file: string }> {
  const b = await rt.account.client.balance({ priority: Priority.report });
  const reserved = rt.rows.reservedUsd();
  const file = join(rt.config.reportsDir, 'balance.csv');
  appendCsv(file, BALANCE_COLUMNS, [[new Date(now).toISOString(), b.balanceUsd, b.currency, reserved, rt.config.sandbox ? 'SANDBOX' : 'LIVE']]);
  return { balanceUsd: b.balanceUsd, file };
}
