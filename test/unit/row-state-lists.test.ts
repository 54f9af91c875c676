/**
 * The lists row-states.ts derives from its states (final, unsent, in flight, followed, live), held
 * to what they mean in the edge table, and through the one reader where a wrong list costs money
 * to misjudge: `topup cancel`'s preview of what is skipped and what may still be charged. Found by
 * npm run mutate: a list emptied or shortened went unseen (the console and metrics read them).
 */
import { describe, expect, it } from 'vitest';
import {
  CHECKED_STATES, FINAL_ROW_STATES, FOLLOWED_STATES, IN_FLIGHT_STATES, LIVE_STATES, ORDER_END_STATES, PLACED_STATES, ROW_EDGES, ROW_STATES, SENDABLE_STATES,
  UNSENT_STATES, fromStates, isEdge,
  type RowEvent, type RowState,
} from '../../src/store/row-states.js';
import { cancelPreview } from '../../src/ops/cancel.js';
import { pubgRow, supplierWorld } from './fake-supplier.js';

const sorted = (xs: readonly RowState[]): RowState[] => [...new Set(xs)].sort();
const leaving = (events: RowEvent[]): RowState[] => sorted(ROW_EDGES.filter((e) => events.includes(e.event)).map((e) => e.from));

describe('the derived row-state lists, by their meaning', () => {
  it('every state is either live (its batch waits for it) or final, never both', () => {
    expect(sorted([...LIVE_STATES, ...FINAL_ROW_STATES])).toEqual(sorted(ROW_STATES));
    expect(LIVE_STATES.filter((s) => FINAL_ROW_STATES.includes(s))).toEqual([]);
    expect(LIVE_STATES).toHaveLength(new Set(LIVE_STATES).size);
  });

  it('final: no event of the engine leaves it; only a review row is moved, by its recheck or an operator', () => {
    const engineFrom = leaving(ROW_EDGES.map((e) => e.event).filter((e) => e !== 'found' && e !== 'resolved-charged' && e !== 'resolved-not-charged'));
    expect(sorted(ROW_STATES.filter((s) => !engineFrom.includes(s)))).toEqual(sorted(FINAL_ROW_STATES));
  });

  it('in flight: exactly the states the intent (`send`) moves a row into, where a request may be on its way', () => {
    expect(sorted(IN_FLIGHT_STATES)).toEqual(sorted(ROW_EDGES.filter((e) => e.event === 'send').map((e) => e.to)));
    expect(sorted(IN_FLIGHT_STATES)).toEqual(['resending', 'sending']);
  });

  it('unsent: owed a (re)send: the states the intent leaves, and the ones it leads into', () => {
    const send = ROW_EDGES.filter((e) => e.event === 'send');
    expect(sorted(UNSENT_STATES)).toEqual(sorted([...send.map((e) => e.from), ...send.map((e) => e.to)]));
    expect(sorted(UNSENT_STATES)).toEqual(['pending', 'resending', 'sending']);
  });

  it('followed: the states polls and history checks move', () => {
    expect(sorted(FOLLOWED_STATES)).toEqual(leaving(['seen', 'finished', 'codes-awaited', 'not-seen', 'lost', 'verified-none', 'verified-balance', 'undecidable']));
  });

  it('placed: the states polls move; checked: the states history checks move; followed is both', () => {
    expect(sorted(PLACED_STATES)).toEqual(leaving(['seen', 'finished', 'codes-awaited', 'not-seen']));
    expect(sorted(CHECKED_STATES)).toEqual(leaving(['verified-none', 'verified-balance', 'undecidable']));
    expect(sorted(FOLLOWED_STATES)).toEqual(sorted([...PLACED_STATES, ...CHECKED_STATES]));
  });

  it('sendable: the states the intent (`send`) leaves; order ends: where `finished` leads', () => {
    expect(sorted(SENDABLE_STATES)).toEqual(leaving(['send']));
    expect(sorted(ORDER_END_STATES)).toEqual(sorted(ROW_EDGES.filter((e) => e.event === 'finished').map((e) => e.to)));
  });

  it('topup cancel tells apart what it skips (never sent) and what may still be charged (sent, not ended)', async () => {
    const rt = await supplierWorld(() => {}, ROW_STATES.map((_, i) => pubgRow(i)));
    const set = rt.db.prepare(`UPDATE rows SET state = ? WHERE batch_id = 'b1' AND idx = ?`);
    ROW_STATES.forEach((s, i) => set.run(s, i));
    const preview = cancelPreview(rt, 'b1');
    expect(preview.skip).toEqual({ rows: 1, usd: 0.92 }); // pending
    // sending, resending (a request may be on its way), verifying, searching, processing, unseen.
    expect(preview.mayCharge).toEqual({ rows: 6, usd: 5.52 });
  });
});

describe('reading the edge table', () => {
  it('fromStates: the states an event leaves to reach a state; isEdge: whether one edge is declared', () => {
    expect(fromStates('placed', 'completed').sort()).toEqual(['resending', 'searching', 'sending', 'verifying']);
    expect(fromStates('refused', 'verifying')).toEqual(['resending']);
    expect(fromStates('refused', 'processing')).toEqual([]);
    expect(isEdge('pending', 'send', 'sending')).toBe(true);
    expect(isEdge('pending', 'send', 'resending')).toBe(false);
    expect(isEdge('resending', 'cancel', 'skipped')).toBe(false);
    expect(isEdge('sending', 'cancel', 'skipped')).toBe(false);
    // The event must be the one asked about: pending → sending is an edge of `send`, not of `cancel`.
    expect(isEdge('pending', 'cancel', 'sending')).toBe(false);
  });
});
