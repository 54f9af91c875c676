/**
 * Low-balance alert: when an account's balance is below TOPUP_LOW_BALANCE_USD, warn once — the
 * flag in `meta` keeps later checks quiet, across restarts too — with the runway at the spending
 * rate of that account's own orders over the last 24 hours. Topped up to the threshold or above:
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
import { chargedUsd } from '../store/cost.js';

export const LOW_BALANCE_FLAG = 'reports.lowBalance.alerted';
/** The flag of an account (`default` keeps the key of before). */
export const lowBalanceFlag = (account: string): string => (account === 'default' ? LOW_BALANCE_FLAG : `${LOW_BALANCE_FLAG}:${account}`);
const RATE_WINDOW_MS = 24 * 3_600_000;

export type LowBalanceOutcome = 'off' | 'alerted' | 'still-low' | 'cleared' | 'ok';

/**
 * USD per hour this home's orders took from the balance over the last day (0 when none): the rule
 * CHARGED (store/cost.ts), since the runway is about the balance, which an order placed and not
 * ended has already left. With `account`, that account's orders only.
 */
export function spendingRate(rt: Pick<Runtime, 'rows'>, now: number, account?: string): number {
  const since = now - RATE_WINDOW_MS;
  let spent = 0;
  for (const r of rt.rows.placedOrders(since)) if (account === undefined || r.account === account) spent += chargedUsd(r);
  return spent / 24;
}

export function runway(balanceUsd: number, usdPerHour: number): string {
  if (usdPerHour <= 0) return 'no orders in the last 24 hours, so no runway estimate';
  const h = balanceUsd / usdPerHour;
  const text = h >= 48 ? `${Math.round(h / 24)} days` : h >= 1 ? `${Math.round(h)} hours` : `${Math.max(1, Math.round(h * 60))} minutes`;
  return `about ${text} at the last 24 hours' rate of ${cents(usdPerHour * 24)} USD/day`;
}

type LowBalanceParts = Pick<Runtime, 'accounts' | 'clock' | 'config' | 'log' | 'meta' | 'rows'>;

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
    const rate = spendingRate(rt, now, plain ? undefined : a.id);
    const text = `Low balance${on}: ${cents(balanceUsd)} USD, below the ${threshold} USD threshold; runway ${runway(balanceUsd, rate)}. Top up${plain ? '' : ` ${a.id}`} to keep orders going.`;
    rt.meta.set(flag, new Date(now).toISOString());
    rt.log.warn({ ...named, balanceUsd, thresholdUsd: threshold }, text);
    notifier.send('low-balance', text, {
      ...named,
      balanceUsd,
      thresholdUsd: threshold,
      usdPerDay: cents(rate * 24),
      runwayHours: rate > 0 ? Math.round((balanceUsd / rate) * 10) / 10 : null,
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
