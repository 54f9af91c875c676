/**
 * THE one definition of "the operator pauses / resumes an account", called by both
 * `topup account pause|resume` (commands/accounts.ts) and the console's Pause sending / Resume
 * sending buttons (console/pages/accounts.ts): the stored pause (account/pauses.ts hold()/resume(),
 * kind `operator`), its audit entry (the same action and words; only the actor differs: the CLI's
 * user, or the console's operator), and the figures both say it with. A second copy in the console
 * could drift from the CLI's (which pause a resume ends, what is audited), so neither has its own.
 *
 * Idempotent: pausing an account the operator already paused changes nothing and records nothing;
 * a resume ends only the operator's pause (a supplier's maintenance or account problem ends by
 * itself when the supplier answers again: its read probe, account/pauses.ts).
 */
import { Pauses, type PauseState } from '../account/pauses.js';
import { systemClock, type Clock } from '../kernel/clock.js';
import { UsageError } from '../kernel/errors.js';
import { AuditStore } from '../store/audit.js';
import type { Store } from '../store/store.js';
import { accountQueues } from './account-views.js';

/** What a pause or resume works with: the store (a CLI's own, or the daemon's runtime). */
export type PauseStore = Pick<Store, 'db' | 'meta' | 'batches' | 'rows'>;

export interface PauseBy {
  /** Who, as the audit table records it: `topup account pause (user)`, or `name (console)`. */
  actor: string;
  /** The caller's address (the console's); none for the CLI. */
  address?: string | null;
  /** The account's probe interval (config.pollIntervalMs), as every Pauses of the home is made with. */
  probeMs: number;
  clock?: Clock;
}

export interface PauseOutcome {
  account: string;
  /** False: the operator had already paused it (nothing changed, nothing recorded). */
  changed: boolean;
  /** The supplier's pause this one took the place of, if any. */
  replaced: PauseState | null;
  /** When the operator's pause in force began (wall). */
  since: number;
  /** Rows waiting on the account now (accountQueues: the figure `topup status` and the console show). */
  rowsWaiting: number;
}

export interface ResumeOutcome {
  account: string;
  /** The operator's pause that ended; null: the operator had not paused it (nothing changed). */
  ended: PauseState | null;
  /** A supplier's pause in force (not the operator's to end), if any. */
  supplier: PauseState | null;
  /**
   * The operator's pause in force when it is not the one the caller asked to end (`since` given and
   * not its start): nothing ended. A console confirm page left open must not end a newer pause.
   */
  changed: PauseState | null;
  rowsWaiting: number;
}

/** The account as the home names it (exact first, then case-insensitive); a UsageError names the home's accounts. */
export function accountNamed(names: readonly string[], name: string): string {
  const found = names.find((n) => n === name) ?? names.find((n) => n.toLowerCase() === name.toLowerCase());
  if (!found) throw new UsageError(`account "${name}" is not in this home's accounts (${names.join(', ')})`);
  return found;
}

/** The operator's note as stored and shown: one line, no control characters, at most 200 characters. */
export function cleanNote(raw: string | undefined): string {
  return (raw ?? '').replace(/[\u0000-\u001f\u007f]+/g, ' ').trim().slice(0, 200);
}

function waitingOn(store: PauseStore, account: string): number {
  return accountQueues(store, [account])[0]?.rowsWaiting ?? 0;
}

/** The operator pauses `account` (see the top). `note` is cleaned here (cleanNote). */
export function pauseAccount(store: PauseStore, account: string, rawNote: string | undefined, by: PauseBy): PauseOutcome {
  const clock = by.clock ?? systemClock;
  const pauses = new Pauses(store.meta, by.probeMs, clock, account);
  const before = pauses.current;
  const note = cleanNote(rawNote);
  const changed = pauses.hold(note);
  const now = clock.now();
  if (changed) {
    new AuditStore(store.db).record({
      at: now, actor: by.actor, address: by.address ?? null, action: 'account paused',
      detail: `account "${account}" paused by the operator${note ? `: ${note}` : ''}${before ? ` (it was paused by the supplier: ${before.kind} ${before.code})` : ''}`, outcome: 'ok',
    });
  }
  return { account, changed, replaced: changed ? before : null, since: pauses.current?.since ?? now, rowsWaiting: waitingOn(store, account) };
}

/**
 * The operator ends their pause of `account` (see the top). `since`: the start of the pause the
 * caller was shown (the console's confirm form carries it); another operator pause in force (the
 * one shown was resumed and a new one made meanwhile, say in another tab) is left standing and
 * returned as `changed`. Checked and ended in one write transaction, so no other process's
 * pause or resume comes between. Without `since` (the CLI): whatever operator pause is in force.
 */
export function resumeAccount(store: PauseStore, account: string, by: PauseBy, since?: number | null): ResumeOutcome {
  const clock = by.clock ?? systemClock;
  return store.db
    .transaction((): ResumeOutcome => {
      const pauses = new Pauses(store.meta, by.probeMs, clock, account);
      const cur = pauses.current;
      if (since !== undefined && cur?.kind === 'operator' && cur.since !== since) {
        return { account, ended: null, supplier: null, changed: cur, rowsWaiting: waitingOn(store, account) };
      }
      const ended = pauses.resume();
      const left = pauses.current;
      if (ended) {
        new AuditStore(store.db).record({ at: clock.now(), actor: by.actor, address: by.address ?? null, action: 'account resumed', detail: `account "${account}" resumed by the operator (paused since ${new Date(ended.since).toISOString()})`, outcome: 'ok' });
      }
      return { account, ended, supplier: left && left.kind !== 'operator' ? left : null, changed: null, rowsWaiting: waitingOn(store, account) };
    })
    .immediate();
}

/**
 * What a pause does to the account's waiting rows, in the words the CLI prints and the console's
 * confirm step shows: with several accounts they move to another that sells their pack (a row
 * pinned to the account waits); with one they wait.
 */
export function waitingRowsFate(waiting: number, severalAccounts: boolean): string {
  return `${waiting} row${waiting === 1 ? '' : 's'} waiting on it ${severalAccounts ? 'move to another account that sells their pack (a row pinned to it waits)' : 'wait'}`;
}
