/**
 * The state machines of rows and batches are told once, in src/store/row-states.ts and
 * batch-states.ts. This file holds the store to them:
 *  - every (state, event) pair is tried on a real row in a real SQLite store: a pair the table
 *    declares moves the row to the declared state, every other pair leaves it where it was. So the
 *    store takes no edge outside the table, and the table has no edge the store lacks;
 *  - send and poll outcomes are refused for a process that does not hold the batch's lease;
 *  - nothing else in src/ writes a state; the schema's CHECK lists exactly the declared states;
 *  - the README's diagram is the one generated from the tables (npm run diagram).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROW_EDGES, ROW_EVENTS, ROW_STATES, type RowEvent, type RowState } from '../../src/store/row-states.js';
import { BATCH_EDGES, BATCH_EVENTS, BATCH_STATES, type BatchEvent, type BatchState } from '../../src/store/batch-states.js';
import type { Runtime } from '../../src/runtime.js';
import { renderStateMachines, BEGIN, END } from '../../scripts/state-machine-doc.js';
import { pubgRow, supplierWorld } from './fake-supplier.js';

const ROOT = join(import.meta.dirname, '..', '..');

/** Calls the store method of `event`, aiming at `to` where the event can end in several states. */
function drive(rt: Runtime, event: RowEvent, to: RowState, owner = rt.owner): void {
  const now = Date.now();
  const a = { owner, now };
  const order = { orderId: `O-${event}-${to}`, status: to as 'processing' | 'completed' | 'cancelled' };
  switch (event) {
    case 'send': return void rt.rows.markSending('b1', 0, a, now + 1_000);
    case 'placed': return void rt.rows.placed('b1', 0, order, now, now);
    case 'refused': return void rt.rows.refused('b1', 0, a, { error: 'NO', code: 'NO', verifyAt: now, answer: null });
    case 'trxid-used': return void rt.rows.trxidUsed('b1', 0, a, { error: 'USED', verifyAt: now, answer: null });
    case 'no-answer': return void rt.rows.noAnswer('b1', 0, a, { nextTryAt: now, counted: true, answer: null });
    case 'busy': return void rt.rows.noAnswer('b1', 0, a, { nextTryAt: now, counted: false, answer: null });
    case 'not-created': return void rt.rows.notCreated('b1', 0, a, { nextTryAt: now, note: null, answer: null });
    case 'balance-short': return void rt.rows.balanceShort('b1', 0, a, null);
    case 'give-up': return void rt.rows.giveUp('b1', 0, a, 'why', now);
    case 'taken-over': return void rt.rows.takenOver('b1', now);
    case 'verified-none': return void rt.rows.verifiedNone('b1', 0, a, 'none');
    case 'verified-balance': return void rt.rows.verifiedBalance('b1', 0, a);
    case 'undecidable':
    case 'mismatch':
    case 'lost': return void rt.rows.toReview(event, 'b1', 0, a, 'REVIEW');
    case 'seen': return void rt.rows.seen('b1', 0, now, now, null);
    case 'finished': return void rt.rows.finished('b1', 0, { ...order, status: to as 'completed' | 'cancelled' }, now);
    case 'codes-awaited': return void rt.rows.codesAwaited('b1', 0, now, now, null);
    case 'not-seen': return void rt.rows.notSeen('b1', 0, a, now, null);
    case 'price-rose': return void rt.rows.priceRose('b1', 0, now, 'price');
    case 'cancel': return void rt.rows.cancelPending('b1', now);
    case 'repeat': {
      // The opening of b1 (claimed) finds an earlier purchase of the same fingerprint in b0.
      rt.db.prepare(`INSERT OR IGNORE INTO batches (id, seq, name, source_name, job_file, content_hash, origin, state, sandbox, created_at)
        VALUES ('b0', 0, 'b0', 'b0.csv', 'jobs/b0/b0.csv', 'h0', 'inbox', 'done', 0, ?)`).run(now);
      rt.db.prepare(`INSERT OR IGNORE INTO rows (batch_id, idx, line, cells_json, state, fingerprint, updated_at) VALUES ('b0', 0, 2, '[]', 'completed', 'fp-0', ?)`).run(now);
      rt.db.prepare(`UPDATE rows SET fingerprint = 'fp-0', repeat_check = 1 WHERE batch_id = 'b1' AND idx = 0`).run();
      rt.db.prepare(`UPDATE batches SET state = 'claimed' WHERE id = 'b1'`).run();
      for (const c of rt.rows.repeatCandidates('b1')) rt.rows.skipAsRepeat('b1', c.idx, now, 'repeat', { batchId: 'b0', idx: 0 });
      return void rt.db.prepare(`UPDATE batches SET state = 'open' WHERE id = 'b1'`).run();
    }
    case 'moved': {
      // (An operator's "not charged" frees the trxid: a row on its way has one.)
      rt.db.prepare(`UPDATE rows SET trxid = 'tu-sm-' || abs(random()) WHERE batch_id = 'b1' AND idx = 0 AND trxid IS NULL`).run();
      const row = rt.rows.get('b1', 0)!;
      const to = row.account === 'second' ? 'default' : 'second';
      const ok = rt.rows.move('b1', 0, a, {
        fromState: row.state as 'pending',
        from: row.account, fromTrxid: row.trxid!, to, trxid: `${row.trxid}-${to}-${now}`, request: JSON.stringify({ ...row.request, trxid: `${row.trxid}-${to}` }),
        productId: row.productId!, unitPriceUsd: 1, expectedUsd: 1, moves: '[]', note: 'moved',
      });
      return void ok;
    }
    case 'restored-moved': {
      // Only while a restore lookup holds the row (its marker: nothing of it can be sent).
      rt.db.prepare(`UPDATE rows SET trxid = 'tu-sm-' || abs(random()) WHERE batch_id = 'b1' AND idx = 0 AND trxid IS NULL`).run();
      const row = rt.rows.get('b1', 0)!;
      const to = row.account === 'second' ? 'default' : 'second';
      rt.meta.set('restore.reconcile', '{}');
      try {
        return void rt.rows.restoredMove('b1', 0, a, {
          fromState: row.state as 'resending',
          from: row.account, fromTrxid: row.trxid!, to, trxid: `${row.trxid}-${to}-${now}`, request: JSON.stringify({ ...row.request, trxid: `${row.trxid}-${to}` }),
          productId: row.productId!, unitPriceUsd: 1, expectedUsd: 1, moves: '[]', note: 'moved after a restore',
        });
      } finally {
        rt.meta.delete('restore.reconcile');
      }
    }
    case 'restored-found': return void rt.rows.restoredFound('b1', 0, a, order, now, 'found after a restore', null);
    case 'restored-unknown': return void rt.rows.restoredUnknown('b1', 0, a, 'REVIEW: after a restore');
    case 'uncovered':
      rt.db.prepare(`UPDATE batches SET run_covered = 1 WHERE id = 'b1'`).run();
      return void rt.rows.skipUncovered('b1', 0, now, 'not covered');
    case 'found':
    case 'resolved-charged':
    case 'resolved-not-charged': {
      const kind = event === 'found' ? 'found' : event === 'resolved-charged' ? 'charged' : 'not-charged';
      return void rt.rows.settleReview('b1', 0, { state: to as 'rejected', order, error: null, note: null }, { kind, by: 't', at: now }, null);
    }
  }
}

/** Events whose caller names the state they go to (`placed` into processing, completed or cancelled). */
const chosen = (event: RowEvent): boolean => {
  const edges = ROW_EDGES.filter((e) => e.event === event);
  return edges.some((x) => edges.some((y) => y.from === x.from && y.to !== x.to));
};
/** The targets to try: each chosen one, or (for events whose edge the row's state picks) any one. */
const targetsOf = (event: RowEvent): RowState[] =>
  chosen(event) ? [...new Set(ROW_EDGES.filter((e) => e.event === event).map((e) => e.to))] : [ROW_EDGES.find((e) => e.event === event)!.to];

describe('the row state machine', () => {
  it('every event has a store method, every declared edge moves, every other pair is refused', async () => {
    const rt = await supplierWorld(() => {}, [pubgRow(0)]);
    let tried = 0;
    for (const event of ROW_EVENTS) {
      for (const to of targetsOf(event)) {
        for (const from of ROW_STATES) {
          rt.db.prepare(`UPDATE rows SET state = ?, order_id = NULL, resolution = NULL WHERE batch_id = 'b1' AND idx = 0`).run(from);
          drive(rt, event, to);
          const after = rt.rows.get('b1', 0)!.state;
          const declared = ROW_EDGES.find((e) => e.from === from && e.event === event && (e.to === to || !chosen(event)));
          expect(after, `${from} --${event}--> ${to}`).toBe(declared ? declared.to : from);
          tried++;
        }
      }
    }
    expect(tried).toBeGreaterThanOrEqual(ROW_EVENTS.length * ROW_STATES.length);
  });

  it('outcomes (refusals, doubt, not charged, unknown) are not applied by a process whose lease lapsed; an order in hand always is', async () => {
    const rt = await supplierWorld(() => {}, [pubgRow(0)]);
    const leased: RowEvent[] = [
      'send', 'refused', 'trxid-used', 'no-answer', 'busy', 'not-created', 'balance-short', 'give-up',
      'verified-none', 'verified-balance', 'undecidable', 'mismatch', 'lost', 'not-seen', 'moved', 'restored-found', 'restored-unknown', 'restored-moved',
    ];
    for (const event of leased) {
      const edge = ROW_EDGES.find((e) => e.event === event)!;
      rt.db.prepare(`UPDATE rows SET state = ? WHERE batch_id = 'b1'`).run(edge.from);
      drive(rt, event, edge.to, 'someone-else:1:abc');
      expect(rt.rows.get('b1', 0)!.state, `${event} by a stranger`).toBe(edge.from);
    }
    rt.db.prepare(`UPDATE rows SET state = 'resending' WHERE batch_id = 'b1'`).run();
    drive(rt, 'placed', 'completed', 'someone-else:1:abc');
    expect(rt.rows.get('b1', 0)!.state).toBe('completed');
  });

  it('the intent to send needs both: this process owns the batch AND its lease has not lapsed', async () => {
    const rt = await supplierWorld(() => {}, [pubgRow(0)]);
    const now = Date.now();
    const lease = (owner: string, until: number): void => void rt.db.prepare(`UPDATE batches SET owner = ?, lease_until = ? WHERE id = 'b1'`).run(owner, until);
    const attempt = (): boolean => {
      rt.db.prepare(`UPDATE rows SET state = 'pending' WHERE batch_id = 'b1'`).run();
      return rt.rows.markSending('b1', 0, { owner: rt.owner, now }, now + 1_000);
    };
    lease(rt.owner, now - 1); // ours, but lapsed: another process may take it over any moment
    expect(attempt()).toBe(false);
    lease('someone-else:1:abc', now + 60_000); // another process holds it
    expect(attempt()).toBe(false);
    lease('someone-else:1:abc', now - 1); // nobody holds it: take it over first
    expect(attempt()).toBe(false);
    lease(rt.owner, now + 60_000);
    expect(attempt()).toBe(true);
  });

  it('a cancelled batch sends no new row, still resends a row in doubt, and cancel skips only rows never sent', async () => {
    const rt = await supplierWorld(() => {}, [pubgRow(0), pubgRow(1), pubgRow(2), pubgRow(3)]);
    const now = Date.now();
    const set = (idx: number, state: RowState): void => void rt.db.prepare(`UPDATE rows SET state = ? WHERE batch_id = 'b1' AND idx = ?`).run(state, idx);
    set(1, 'sending'); // its request may be on the wire: it may be charged
    set(2, 'resending'); // its answer was lost: only a resend tells
    set(3, 'verifying');
    rt.db.prepare(`UPDATE batches SET cancel_requested = 1 WHERE id = 'b1'`).run();
    expect(rt.rows.cancelPending('b1', now)).toBe(1);
    expect([0, 1, 2, 3].map((i) => rt.rows.get('b1', i)!.state)).toEqual(['skipped', 'sending', 'resending', 'verifying']);
    set(0, 'pending');
    expect(rt.rows.markSending('b1', 0, { owner: rt.owner, now }, now + 1_000)).toBe(false);
    const before = rt.rows.get('b1', 2)!.attempts;
    expect(rt.rows.markSending('b1', 2, { owner: rt.owner, now }, now + 1_000)).toBe(true);
    expect(rt.rows.get('b1', 2)!).toMatchObject({ state: 'resending', attempts: before + 1 }); // a resend stays in doubt until answered
  });

  it('each move writes what it records: the intent its attempt and times, a refusal its text and code, a hold its time', async () => {
    // Found by npm run mutate: emptying these SET clauses left every state right and went unseen.
    const rt = await supplierWorld(() => {}, [pubgRow(0)]);
    const now = Date.now();
    const a = { owner: rt.owner, now };
    const row = (): ReturnType<typeof rt.rows.get> & object => rt.rows.get('b1', 0)!;
    const stored = row();
    expect(stored).toMatchObject({ state: 'pending', productId: 'PUBG-60', attempts: 0, firstSentAt: null });
    expect(stored.request).toMatchObject({ trxid: 'tu-row-0' });

    expect(rt.rows.markSending('b1', 0, a, now + 15_000)).toBe(true);
    expect(row()).toMatchObject({ state: 'sending', attempts: 1, firstSentAt: now, lastSentAt: now, nextTryAt: now + 15_000 });
    expect(rt.rows.refused('b1', 0, { owner: rt.owner, now: now + 5 }, { error: 'INVALID PLAYER', code: 'INVALID_PLAYER', verifyAt: now + 9_000, answer: '{"a":1}' })).toBe('rejected');
    expect(row()).toMatchObject({ state: 'rejected', error: 'INVALID PLAYER', rejectCode: 'INVALID_PLAYER', lastAnswer: '{"a":1}' });

    rt.db.prepare(`UPDATE rows SET state = 'sending' WHERE batch_id = 'b1'`).run();
    expect(rt.rows.trxidUsed('b1', 0, a, { error: 'trxid already used', verifyAt: now + 9_000, answer: null })).toBe(true);
    expect(row()).toMatchObject({ state: 'searching', error: 'trxid already used', rejectCode: 'TOPUP_TRXID_ALREADY_USED', nextPollAt: now + 9_000, lastAnswer: '{"a":1}' });

    rt.db.prepare(`UPDATE rows SET state = 'sending' WHERE batch_id = 'b1'`).run();
    expect(rt.rows.balanceShort('b1', 0, { owner: rt.owner, now: now + 7 }, null)).toBe(true);
    expect(row()).toMatchObject({ state: 'pending', error: 'held: INSUFFICIENT BALANCE', nextTryAt: now + 7 });

    rt.db.prepare(`UPDATE batches SET cancel_requested = 1 WHERE id = 'b1'`).run();
    expect(rt.rows.cancelPending('b1', now)).toBe(1);
    expect(row()).toMatchObject({ state: 'skipped', error: 'batch cancelled by the operator before this row was sent' });
  });

  it('the schema CHECK lists exactly the declared states', async () => {
    const rt = await supplierWorld(() => {}, []);
    const sql = (rt.db.prepare(`SELECT sql FROM sqlite_master WHERE name = 'rows'`).get() as { sql: string }).sql;
    const listed = /state\s+TEXT NOT NULL CHECK \(state IN \(([^)]*)\)\)/.exec(sql)![1]!.match(/'([^']+)'/g)!.map((s) => s.slice(1, -1));
    expect(listed.sort()).toEqual([...ROW_STATES].sort());
    const bsql = (rt.db.prepare(`SELECT sql FROM sqlite_master WHERE name = 'batches'`).get() as { sql: string }).sql;
    const blisted = /state\s+TEXT NOT NULL CHECK \(state IN \(([^)]*)\)\)/.exec(bsql)![1]!.match(/'([^']+)'/g)!.map((s) => s.slice(1, -1));
    expect(blisted.sort()).toEqual([...BATCH_STATES].sort());
  });

  it('no code in src/ writes a row or batch state except the one guarded UPDATE of each store', () => {
    const files: string[] = [];
    const walk = (d: string): void => {
      for (const n of readdirSync(d)) {
        const p = join(d, n);
        if (statSync(p).isDirectory()) walk(p);
        else if (p.endsWith('.ts') && !p.includes(`${join('src', 'sandbox')}`)) files.push(p);
      }
    };
    walk(join(ROOT, 'src'));
    // A state assignment in a SET clause (before any WHERE), in any file.
    const setsState = /UPDATE (rows|batches) SET (?:(?!WHERE)[^`])*?\bstate\s*=/g;
    const writers = files.flatMap((f) => (readFileSync(f, 'utf8').match(setsState) ?? []).map((m) => `${f.slice(ROOT.length + 1)}: ${m.slice(0, 30)}`));
    // The one trigger that moves rows (batches_taken_over) is held to the table by the next test.
    expect(writers).toEqual(['src/store/batches.ts: UPDATE batches SET state =', 'src/store/migrations.ts: UPDATE rows SET state =', 'src/store/rows.ts: UPDATE rows SET state =']);
  });

  it('a batch changing hands moves its rows by the taken-over edges of the table, and no others (the batches_taken_over trigger)', async () => {
    const rt = await supplierWorld(() => {}, [pubgRow(0)]);
    const now = Date.now();
    for (const from of ROW_STATES) {
      rt.db.prepare(`UPDATE batches SET owner = 'someone:1:aa' WHERE id = 'b1'`).run();
      rt.db.prepare(`UPDATE rows SET state = ?, last_sent_at = ?, doubt_since = NULL, next_try_at = ? WHERE batch_id = 'b1' AND idx = 0`).run(from, now - 5_000, now + 60_000);
      // Released (owner NULL) moves nothing; taken by a new owner applies the edge.
      rt.batches.releaseAll('someone:1:aa');
      expect(rt.rows.get('b1', 0)!.state, `${from}, released`).toBe(from);
      expect(rt.batches.acquire('b1', rt.owner, now, 60_000)).toBe(true);
      const declared = ROW_EDGES.find((e) => e.from === from && e.event === 'taken-over');
      const row = rt.rows.get('b1', 0)!;
      expect(row.state, `${from} --taken-over-->`).toBe(declared ? declared.to : from);
      if (declared) expect(row).toMatchObject({ doubtSince: now - 5_000, nextTryAt: 0 });
      // Renewing one's own lease is not a change of hands.
      rt.db.prepare(`UPDATE rows SET state = ? WHERE batch_id = 'b1' AND idx = 0`).run(from);
      expect(rt.batches.acquire('b1', rt.owner, now, 60_000)).toBe(true);
      expect(rt.rows.get('b1', 0)!.state, `${from}, renewed`).toBe(from);
    }
  });
});

describe('the batch state machine', () => {
  function driveBatch(rt: Runtime, event: BatchEvent): void {
    const now = Date.now();
    switch (event) {
      case 'stored': return void rt.batches.open('b1', ['pid']);
      case 'file-failed': return void rt.batches.fail('b1', 'bad', now);
      case 'duplicate-stored': return void rt.batches.markDuplicate('b1', ['pid']);
      case 'finished': return void rt.batches.finish('b1', null, '/tmp/x.result.csv', now);
      case 'reopened': return void rt.batches.reopen('b1');
    }
  }

  it('every declared edge moves, every other pair is refused', async () => {
    const rt = await supplierWorld(() => {}, []);
    for (const event of BATCH_EVENTS) {
      for (const from of BATCH_STATES) {
        rt.db.prepare(`UPDATE batches SET state = ? WHERE id = 'b1'`).run(from);
        driveBatch(rt, event);
        const declared = BATCH_EDGES.find((e) => e.from === from && e.event === event);
        expect(rt.batches.get('b1')!.state as BatchState, `${from} --${event}-->`).toBe(declared ? declared.to : from);
      }
    }
  });
});

describe('docs/state-machine.md tells the same state machines', () => {
  it('its generated section is what the tables render (run npm run diagram after changing a table)', () => {
    const readme = readFileSync(join(ROOT, 'docs', 'state-machine.md'), 'utf8');
    const a = readme.indexOf(BEGIN);
    const b = readme.indexOf(END);
    expect(a, 'docs/state-machine.md has the state-machine markers').toBeGreaterThanOrEqual(0);
    expect(readme.slice(a, b + END.length)).toBe(renderStateMachines());
  });
});
