/**
 * TOPUP_SUPPLIER_HISTORY_DAYS's margin (ops/restore-reconcile.ts keptTooShort). A supplier may
 * count its N days as calendar days in its own time zone (UTC+7), from a midnight there: it may
 * keep up to ~23 h less than N×24 h. The margin was min(1 h, N/24 days), so a copy 29.5 days old
 * was trusted under "30 days" though the supplier may have dropped the orders made after it: a
 * purchase there read as "not bought", the row bought again. The margin is now a whole day: a copy
 * N−0.5 days old counts as possibly cut off (its rows go to review, never sent).
 */
import { describe, expect, it } from 'vitest';
import { keptTooShort } from '../../src/ops/restore-reconcile.js';

const DAY = 86_400_000;
const NOW = Date.UTC(2026, 10, 28, 12);

function verdict(days: number | null, ageDays: number, cut: string | null = null): string | null {
  const rt = { clock: { now: () => NOW }, config: { backup: { supplierHistoryDays: days } } } as unknown as Parameters<typeof keptTooShort>[0];
  return keptTooShort(rt, NOW - ageDays * DAY, cut);
}

describe('TOPUP_SUPPLIER_HISTORY_DAYS: a whole day of margin', () => {
  it('a copy N−0.5 days old may be past what a supplier counting calendar days keeps: cut off', () => {
    expect(verdict(30, 29.5)).toMatch(/is older than the 30 day\(s\) of orders the supplier keeps/);
    // 23 h short of 30×24 h: what a UTC+7 supplier counting from its midnight may keep.
    expect(verdict(30, 30 - 23 / 24)).not.toBeNull();
    expect(verdict(1.5, 1)).not.toBeNull();
  });
  it('a copy more than a day inside N: the history is trusted (cutOff\'s verdict alone)', () => {
    expect(verdict(30, 28.9)).toBeNull();
    expect(verdict(30, 28.9, 'ended early')).toBe('ended early');
    expect(verdict(30, 29.5, 'ended early')).toMatch(/; ended early$/);
  });
  it('under a day kept: every copy counts as cut off; not set: never', () => {
    expect(verdict(0.5, 0)).not.toBeNull();
    expect(verdict(null, 400)).toBeNull();
  });
});
