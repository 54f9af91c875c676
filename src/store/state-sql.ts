/**
 * State names in SQL come from the state tables, as pg-boss writes its frozen JOB_STATES into
 * every statement: a statement names a state through these (typed: a state that does not exist
 * does not compile) and a set of states by the named list of row-states.ts or batch-states.ts that
 * says what the set means, never a list written out by hand. The migrations are the exception:
 * what they created is history, and the partial indexes' conditions, which a query must repeat
 * word for word for SQLite to use the index, are derived here from the same lists and held to the
 * migrations' text by test/store/state-sql.test.ts.
 */
import type { BatchState } from './batch-states.js';
import { FOLLOWED_STATES, IN_FLIGHT_STATES, CHECKED_STATES, SENDABLE_STATES, type RowState } from './row-states.js';

/** `'review'`: one row state as an SQL literal. */
export const rowState = (s: RowState): string => `'${s}'`;
/** `'pending', 'resending'`: a list of row states for an IN (…). */
export const rowStates = (list: readonly RowState[]): string => list.map(rowState).join(', ');
/** `'claimed'`: one batch state as an SQL literal. */
export const batchState = (s: BatchState): string => `'${s}'`;
/** A list of batch states for an IN (…). */
export const batchStates = (list: readonly BatchState[]): string => list.map(batchState).join(', ');

/** rows_send: rows that may be (re)sent. */
export const IN_SEND_INDEX = `state IN (${rowStates(SENDABLE_STATES)})`;
/** rows_poll: rows followed by polls or history checks. */
export const IN_POLL_INDEX = `state IN (${rowStates(FOLLOWED_STATES)})`;
/** rows_in_flight: rows an order may exist for that we do not know of yet. */
export const IN_DOUBT_STATES: readonly RowState[] = Object.freeze([...IN_FLIGHT_STATES, ...CHECKED_STATES]);
export const IN_DOUBT_INDEX = `state IN (${rowStates(IN_DOUBT_STATES)})`;
/** rows_review: review rows, by their next recheck. */
export const IN_REVIEW_INDEX = `state = ${rowState('review')}`;
