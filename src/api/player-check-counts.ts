/**
 * The one definition of `topup_player_checks_total{source, outcome}` (metrics.ts renders it):
 * player-name checks by who asked (`file`: a file's rows, claim/player-checks.ts; `api`: the order
 * API, orders/player-check-desk.ts) and how each question was answered:
 *
 *   found, not_found, in_doubt, refused, rate_limited   a check call's outcome (api/player-check.ts's
 *                                                       classification); `rate_limited` for the
 *                                                       order API also when the account's rate gate
 *                                                       did not admit the check in time (not sent)
 *   cached                                              answered with no call: for a file, each
 *                                                       distinct player of a stored batch whose
 *                                                       kept answer was made before the batch was
 *                                                       claimed; for the order API, each ask answered
 *                                                       from the kept answer, the repeat window, or
 *                                                       a call another ask made at the same moment
 *
 * The deciding code says what happened through countCheck; this process's /metrics listens. A
 * process-wide hub rather than a runtime field: checks are made by code that holds only a part of
 * the runtime (ShopChecks, runChecks, the load), and a process without /metrics (`topup validate`)
 * has no listener, so its counts go nowhere.
 */
import type { CheckOutcome } from './player-check.js';

export const CHECK_SOURCES = ['file', 'api'] as const;
export type CheckSource = (typeof CHECK_SOURCES)[number];
export const CHECK_COUNTED = ['found', 'not_found', 'in_doubt', 'refused', 'rate_limited', 'cached'] as const;
export type CheckCounted = (typeof CHECK_COUNTED)[number];

const LABEL: Record<CheckOutcome, CheckCounted> = { found: 'found', 'not-found': 'not_found', 'in-doubt': 'in_doubt', refused: 'refused', 'rate-limited': 'rate_limited' };

/** A check call's outcome as the metric's label. */
export function countedOutcome(o: CheckOutcome): CheckCounted {
  return LABEL[o];
}

type Listener = (source: CheckSource, outcome: CheckCounted, n: number) => void;
const listeners = new Set<Listener>();

export function countCheck(source: CheckSource, outcome: CheckCounted, n = 1): void {
  if (n <= 0) return;
  for (const l of listeners) l(source, outcome, n);
}

/** Listens until the returned function is called. */
export function onCheckCounted(l: Listener): () => void {
  listeners.add(l);
  return () => void listeners.delete(l);
}
