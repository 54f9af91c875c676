/**
 * Low-balance alert: when the balance is below TOPUP_LOW_BALANCE_USD, warn once — the flag in
 * `meta` keeps later checks quiet, across restarts too — with the runway at the spending rate
 * of the last 24 hours of our own orders. Topped up to the threshold or above: the alert clears
 * (and says so), so the next fall warns again.
 */
import { Priority } from '../api/client.js';
import type { Runtime } from '../runtime.js';
import type { Notifier } from '../notify/notifier.js';
import { roundCents as cents } from '../kernel/money.js';
import { chargedUsd } from '../store/cost.js';

export const LOW_BALANCE_FLAG = 'reports.lowBalance.alerted';
const RATE_WINDOW_MS = 24 * 3_600_000;

export type LowBalanceOutcome = 'off' | 'alerted' | 'still-low' | 'cleared' | 'ok';

/**
 * USD per hour this home's orders took from the balance over the last day (0 when none): the rule
 * CHARGED (store/cost.ts), since the runway is about the balance, which an order placed and not
 * ended has already left.
 */
export function spendingRate(rt: Pick<Runtime, 'rows'>, now: number): number {
  const since = now - RATE_WINDOW_MS;
  let spent = 0;
  for (const r of rt.rows.placedOrders(since)) spent += chargedUsd(r);
  return spent / 24;
}

export function runway(balanceUsd: number, usdPerHour: number): string {
  if (usdPerHour <= 0) return 'no orders in the last 24 hours, so no runway estimate';
  const h = balanceUsd / usdPerHour;
  const text = h >= 48 ? `${Math.round(h / 24)} days` : h >= 1 ? `${Math.round(h)} hours` : `${Math.max(1, Math.round(h * 60))} minutes`;
  return `about ${text} at the last 24 hours' rate of ${cents(usdPerHour * 24)} USD/day`;
}

export async function runLowBalanceCheck(rt: Pick<Runtime, 'account' | 'clock' | 'config' | 'log' | 'meta' | 'rows'>, notifier: Notifier, now = rt.clock.now()): Promise<LowBalanceOutcome> {
  const threshold = rt.config.lowBalanceUsd;
  if (threshold === null) return 'off';
  const { balanceUsd } = await rt.account.client.balance({ priority: Priority.report });
  const alerted = rt.meta.get(LOW_BALANCE_FLAG) !== undefined;
  if (balanceUsd < threshold) {
    if (alerted) return 'still-low';
    const rate = spendingRate(rt, now);
    const text = `Low balance: ${cents(balanceUsd)} USD, below the ${threshold} USD threshold; runway ${runway(balanceUsd, rate)}. Top up to keep orders going.`;
    rt.meta.set(LOW_BALANCE_FLAG, new Date(now).toISOString());
    rt.log.warn({ balanceUsd, thresholdUsd: threshold }, text);
    notifier.send('low-balance', text, {
      balanceUsd,
      thresholdUsd: threshold,
      usdPerDay: cents(rate * 24),
      runwayHours: rate > 0 ? Math.round((balanceUsd / rate) * 10) / 10 : null,
    });
    return 'alerted';
  }
  if (!alerted) return 'ok';
  rt.meta.delete(LOW_BALANCE_FLAG);
  const text = `Balance topped up: ${cents(balanceUsd)} USD, at or above the ${threshold} USD threshold; the low-balance alert is cleared.`;
  rt.log.info({ balanceUsd, thresholdUsd: threshold }, text);
  notifier.send('low-balance-cleared', text, { balanceUsd, thresholdUsd: threshold });
  return 'cleared';
}
