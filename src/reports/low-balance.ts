/**
 * Low-balance alert: when an account's balance is below TOPUP_LOW_BALANCE_USD, warn once — the
 * flag in `meta` keeps later checks quiet, across restarts too — with the account's runway, as
 * defined once in reports/runway.ts (its own spending over the last 7 days). Topped up to the threshold or above:
 * the alert clears (and says so), so the next fall warns again.
 *
 * Each account of the home on its own (its balance pays for its rows only): its own flag, its own
 * runway, its name in the text and in the notification's `data.account`. A home without
 * accounts.toml (account `default`) keeps the flag, text and data of before.
 */
import { Priority } from '../api/client.js';
import type { Runtime } from '../runtime.js';
import type { Notifier } from '../notify/notifier.js';
import { roundCents as cents } from '../kernel/money.js';
import { coerceError } from '../kernel/errors.js';
import { runwayDays, runwayText, usdPerDay } from './runway.js';
import { lowBalanceFlag } from '../store/account-keys.js';

export const LOW_BALANCE_FLAG = lowBalanceFlag('default');
/** The flag of an account (`default` keeps the key of before). */
export { lowBalanceFlag };
export type LowBalanceOutcome = 'off' | 'alerted' | 'still-low' | 'cleared' | 'ok';

type LowBalanceParts = Pick<Runtime, 'accounts' | 'clock' | 'config' | 'db' | 'log' | 'meta' | 'rows'>;

/**
 * Every account. The outcome is the most telling of the accounts' (alerted, cleared, still-low,
 * ok); `accounts` gives each. An account whose balance cannot be read does not hold back the
 * others: they are checked, then the run fails naming it.
 */
export async function runLowBalanceCheck(rt: LowBalanceParts, notifier: Notifier, now = rt.clock.now()): Promise<LowBalanceOutcome> {
  return (await checkEveryAccount(rt, notifier, now)).outcome;
}

export async function checkEveryAccount(rt: LowBalanceParts, notifier: Notifier, now = rt.clock.now()): Promise<{ outcome: LowBalanceOutcome; accounts: { account: string; outcome: LowBalanceOutcome }[] }> {
  if (rt.config.lowBalanceUsd === null) return { outcome: 'off', accounts: [] };
  const accounts: { account: string; outcome: LowBalanceOutcome }[] = [];
  const failed: string[] = [];
  for (const a of rt.accounts) {
    try {
      accounts.push({ account: a.id, outcome: await checkAccount(rt, notifier, a, now) });
    } catch (err) {
      failed.push(`${a.id}: ${coerceError(err).message}`);
    }
  }
  if (failed.length > 0) throw new Error(`low-balance check: ${failed.join('; ')}${accounts.length > 0 ? ' (the other accounts were checked)' : ''}`);
  const rank: LowBalanceOutcome[] = ['alerted', 'cleared', 'still-low', 'ok'];
  const outcome = rank.find((o) => accounts.some((a) => a.outcome === o)) ?? 'ok';
  return { outcome, accounts };
}

async function checkAccount(rt: LowBalanceParts, notifier: Notifier, a: LowBalanceParts['accounts'][number], now: number): Promise<LowBalanceOutcome> {
  const threshold = rt.config.lowBalanceUsd!;
  const plain = rt.accounts.length === 1 && a.id === 'default';
  const flag = lowBalanceFlag(a.id);
  const on = plain ? '' : ` on account ${a.id}`;
  const named = plain ? {} : { account: a.id };
  const { balanceUsd } = await a.client.balance({ priority: Priority.report });
  const alerted = rt.meta.get(flag) !== undefined;
  if (balanceUsd < threshold) {
    if (alerted) return 'still-low';
    const perDay = usdPerDay(rt.db, now, plain ? undefined : a.id);
    const days = runwayDays(balanceUsd, perDay);
    const text = `Low balance${on}: ${cents(balanceUsd)} USD, below the ${threshold} USD threshold; runway ${runwayText(balanceUsd, perDay)}. Top up${plain ? '' : ` ${a.id}`} to keep orders going.`;
    rt.meta.set(flag, new Date(now).toISOString());
    rt.log.warn({ ...named, balanceUsd, thresholdUsd: threshold }, text);
    notifier.send('low-balance', text, {
      ...named,
      balanceUsd,
      thresholdUsd: threshold,
      usdPerDay: cents(perDay),
      runwayHours: days === null ? null : Math.round(days * 24 * 10) / 10,
    });
    return 'alerted';
  }
  if (!alerted) return 'ok';
  rt.meta.delete(flag);
  const text = `Balance topped up${on}: ${cents(balanceUsd)} USD, at or above the ${threshold} USD threshold; the low-balance alert is cleared.`;
  rt.log.info({ ...named, balanceUsd, thresholdUsd: threshold }, text);
  notifier.send('low-balance-cleared', text, { ...named, balanceUsd, thresholdUsd: threshold });
  return 'cleared';
}
