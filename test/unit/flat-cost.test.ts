/**
 * Flat cost per order (issue 12): every question the runner asks per step or per row is answered
 * from an index or a maintained counter, never a scan of the batch.
 *  - the plans: every statement the step questions and the row moves prepare is run against a
 *    real store of two batches in every state, and EXPLAIN QUERY PLAN must show no scan of rows or
 *    counters, no sort of a range, no walk of a whole batch by its primary key;
 *  - the counters the triggers keep equal a count of the rows, whatever wrote them, and the
 *    migration fills them for a database that already holds batches;
 *  - sendable / nextTryAt / duePolls / nextPollAt / placedAfter answer as the scans they replace;
 *  - the poller asks for history depths once per round, not once per row;
 *  - what is fsynced: the intent to send fully, the answers and the call log not.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { openDb, type Db } from '../../src/store/db.js';
import { MIGRATIONS } from '../../src/store/migrations.js';
import { BatchStore } from '../../src/store/batches.js';
import { RowStore, ROW_STATES, type NewRow, type RowState } from '../../src/store/rows.js';
import { roundCents } from '../../src/kernel/money.js';
import { Poller } from '../../src/poll/poller.js';
import { RateScheduler } from '../../src/account/rate-gate.js';
import { pubgRow, supplierWorld } from './fake-supplier.js';
import { prng } from '../e2e/prng.js';

const dbPath = (): string => join(mkdtempSync(join(tmpdir(), 'flat-')), 'topup.db');
const OWNER = 'me';

/** Every statement prepared on `db` from now on, with the arguments of each run (and `tag()` at that moment). */
function recordStatements(db: Db, tag: () => unknown = () => undefined): { sql: string; args: unknown[]; tag: unknown }[] {
  const seen: { sql: string; args: unknown[]; tag: unknown }[] = [];
  const prepare = db.prepare.bind(db);
  (db as { prepare: unknown }).prepare = (sql: string) => {
    const stmt = prepare(sql);
    return new Proxy(stmt, {
      get(target, key) {
        const v = Reflect.get(target, key) as unknown;
        if (typeof v !== 'function') return v;
        if (['all', 'get', 'iterate', 'run'].includes(key as string)) {
          return (...args: unknown[]) => {
            seen.push({ sql, args, tag: tag() });
            return (v as (...a: unknown[]) => unknown).apply(target, args);
          };
        }
        // pluck()/raw() return the statement itself: keep recording through it.
        return (...args: unknown[]) => {
          const r = (v as (...a: unknown[]) => unknown).apply(target, args);
          return r === target ? new Proxy(target, this) : r;
        };
      },
    });
  };
  return seen;
}

const row = (batchId: string, idx: number, usd: number): NewRow => ({
  ...pubgRow(idx),
  request: { pid: 'PUBG-60', trxid: `t-${batchId}-${idx}`, userId: String(5_000_000_000 + idx) },
  expectedUsd: usd,
  unitPriceUsd: usd,
});

/** Two open batches (b1 older than b2) of `n` rows each, spread over every state. */
function store(n: number, path = dbPath()): { db: Db; rows: RowStore; batches: BatchStore; now: number } {
  const db = openDb(path);
  const batches = new BatchStore(db);
  const rows = new RowStore(db);
  const now = Date.now();
  for (const id of ['b1', 'b2']) {
    batches.create({ id, name: id, sourceName: `${id}.csv`, jobFile: `jobs/${id}/x.csv`, contentHash: id, origin: 'inbox', sandbox: false, owner: OWNER, leaseUntil: now + 86_400_000, now });
    batches.open(id, ['pid', 'userId']);
    db.transaction(() => rows.insertAll(id, Array.from({ length: n }, (_, i) => row(id, i, 0.1 + (i % 7) * 0.35)), now))();
  }
  // Spread the rows over the states as direct writes (the triggers see those too).
  const set = db.prepare(`UPDATE rows SET state = ?, order_id = ?, first_sent_at = ?, next_poll_at = ?, next_try_at = ? WHERE batch_id = ? AND idx = ?`);
  db.transaction(() => {
    for (const id of ['b1', 'b2']) {
      for (let i = 0; i < n; i++) {
        const state = ROW_STATES[i % ROW_STATES.length]!;
        if (state === 'pending') continue;
        const placed = ['processing', 'unseen', 'completed', 'cancelled'].includes(state);
        set.run(state, placed ? `O-${id}-${i}` : null, now - (n - i) * 10, now - 1_000 + (i % 50) * 100, now - 1_000 + (i % 30) * 100, id, i);
      }
    }
  })();
  return { db, rows, batches, now };
}

/** What a plan may not contain: a scan of rows or counters, a sort of a range, a walk of a batch by its key. */
function planProblems(db: Db, sql: string, args: unknown[]): string[] {
  const plan = (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...(args as never[])) as { detail: string }[]).map((r) => r.detail);
  const readsRows = /\b(FROM|UPDATE|INTO) (rows|batch_counts)\b/.test(sql);
  return plan.filter((d) =>
    /^SCAN (rows|batch_counts)\b/.test(d) ||
    (readsRows && /USE TEMP B-TREE/.test(d)) ||
    /sqlite_autoindex_rows_1 \(batch_id=\?\)$/.test(d),
  ).map((d) => `${sql.replace(/\s+/g, ' ').slice(0, 120)} → ${d}`);
}

describe('flat cost per order: each step question is a seek or a counter', () => {
  it('no statement a step or a row move runs scans the batch (EXPLAIN QUERY PLAN of each, on two batches in every state)', () => {
    const { db, rows, batches, now } = store(2_000);
    const seen = recordStatements(db);
    const scope = { newOrders: ['b1'], resendsOnly: ['b2'] };
    const busy = { has: (_b: string, idx: number) => idx < 2 };
    // The questions of one runner step (leases, funding, dispatch, polling, finishing, snapshot).
    batches.ownedBy(OWNER);
    batches.unfinished();
    for (const id of ['b1', 'b2']) {
      rows.counts(id);
      rows.unsentTotal(id);
      rows.hasPending(id);
    }
    rows.sendable(scope, now, 32, busy);
    rows.nextTryAt(scope);
    rows.duePolls(['b1', 'b2'], now, 2_000);
    rows.nextPollAt(['b1', 'b2']);
    rows.countUnsent(['b1', 'b2']);
    rows.countProcessing(['b1', 'b2']);
    rows.nextReviewCheckAt(0);
    rows.reservedUsd();
    rows.dueReviews(0, now, 20);
    // Per row: a send and its answer, a poll round, a history check.
    const a = { owner: OWNER, now };
    rows.markSending('b1', 0, a, now + 1_000);
    rows.placed('b1', 0, { orderId: 'NEW-1', status: 'processing' }, now, now);
    rows.seen('b1', 0, now, now + 1, null);
    rows.notSeen('b1', 0, a, now + 2, null);
    rows.finished('b1', 0, { orderId: 'NEW-1', status: 'completed' }, now);
    rows.processingByOrderIds(['O-b1-5', 'O-b2-5']);
    rows.placedAfter([now - 5_000, now - 1_000]);
    rows.hasTwinInFlight(rows.get('b1', 1)!);
    rows.schedulePoll('b1', 5, now + 5_000);
    expect(new Set(seen.map((s) => s.sql)).size).toBeGreaterThan(25);
    const problems = seen.flatMap((s) => planProblems(db, s.sql, s.args));
    expect([...new Set(problems)]).toEqual([]);
    db.close();
  });

  it('the counters equal a count of the rows after any mix of moves, direct writes, deletes and inserts', () => {
    const { db, rows, now } = store(300);
    const r = prng(7);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
    const truth = (): unknown[] => db.prepare(
      `SELECT batch_id, state, count(*) AS n, sum(CAST(round(coalesce(expected_usd, 0) * 1000000) AS INTEGER)) AS usd_micros FROM rows GROUP BY batch_id, state ORDER BY 1, 2`,
    ).all();
    const kept = (): unknown[] => db.prepare(`SELECT batch_id, state, n, usd_micros FROM batch_counts WHERE n != 0 ORDER BY 1, 2`).all();
    for (let step = 0; step < 1_500; step++) {
      const id = pick(['b1', 'b2']);
      const idx = Math.floor(r() * 300);
      const a = { owner: OWNER, now };
      switch (Math.floor(r() * 9)) {
        case 0: rows.markSending(id, idx, a, now); break;
        case 1: rows.placed(id, idx, { orderId: `P-${id}-${idx}-${step}`, status: pick(['processing', 'completed', 'cancelled'] as const) }, now, now); break;
        case 2: rows.noAnswer(id, idx, a, { nextTryAt: now, counted: true, answer: null }); break;
        case 3: rows.refused(id, idx, a, { error: 'NO', code: 'NO', verifyAt: now, answer: null }); break;
        case 4: rows.finished(id, idx, { orderId: 'x', status: pick(['completed', 'cancelled'] as const) }, now); break;
        case 5: db.prepare('UPDATE rows SET state = ? WHERE batch_id = ? AND idx = ?').run(pick(ROW_STATES), id, idx); break;
        case 6: db.prepare('UPDATE rows SET expected_usd = ? WHERE batch_id = ? AND idx = ?').run(Math.round(r() * 1e4) / 100, id, idx); break;
        case 7: rows.toReview('undecidable', id, idx, a, 'REVIEW'); break;
        case 8: if (r() < 0.05) { rows.deleteBatchRows(id); rows.insertAll(id, Array.from({ length: 300 }, (_, i) => row(`${id}-${step}`, i, 1.23)), now); } break;
      }
      if (step % 100 === 0) expect(kept()).toEqual(truth());
    }
    expect(kept()).toEqual(truth());
    for (const id of ['b1', 'b2']) {
      const pending = db.prepare(`SELECT coalesce(sum(expected_usd), 0) AS usd FROM rows WHERE batch_id = ? AND state = 'pending'`).get(id) as { usd: number };
      expect(rows.unsentTotal(id)).toBe(roundCents(pending.usd));
    }
    db.close();
  });

  it('the migration fills the counters of a database that already holds batches, and the new indexes replace rows_state', () => {
    const path = dbPath();
    const old = new Database(path);
    old.pragma('journal_mode = WAL');
    old.exec('CREATE TABLE schema_version (version INTEGER NOT NULL)');
    // Every migration before the one that brings the counters.
    const before = MIGRATIONS.findIndex((m) => m.includes('CREATE TABLE batch_counts'));
    for (const m of MIGRATIONS.slice(0, before)) old.exec(m);
    old.prepare('INSERT INTO schema_version (version) VALUES (?)').run(before);
    old.prepare(`INSERT INTO batches (id, seq, name, source_name, job_file, content_hash, origin, state, sandbox, created_at) VALUES ('old', 1, 'o', 'o.csv', 'j', 'h', 'inbox', 'open', 0, 0)`).run();
    const ins = old.prepare(`INSERT INTO rows (batch_id, idx, line, cells_json, state, expected_usd, updated_at) VALUES ('old', ?, ?, '[]', ?, ?, 0)`);
    for (let i = 0; i < 50; i++) ins.run(i, i + 2, ['pending', 'processing', 'completed'][i % 3], 0.1 * i);
    old.close();
    const db = openDb(path);
    const rows = new RowStore(db);
    expect(rows.counts('old')).toMatchObject({ pending: 17, processing: 17, completed: 16 });
    const pendingUsd = Array.from({ length: 50 }, (_, i) => i).filter((i) => i % 3 === 0).reduce((s, i) => s + 0.1 * i, 0);
    expect(rows.unsentTotal('old')).toBe(roundCents(pendingUsd));
    const indexes = (db.prepare(`SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'rows'`).all() as { name: string }[]).map((x) => x.name);
    expect(indexes).toEqual(expect.arrayContaining(['rows_send', 'rows_poll', 'rows_in_flight', 'rows_placed']));
    expect(indexes).not.toContain('rows_state');
    db.close();
  });
});

describe('flat cost per order: the answers are the ones the scans gave', () => {
  it('sendable: rows owed an answer first, oldest batch first, then in the order they became due; busy rows skipped; resends only where funds wait', () => {
    const { db, rows, now } = store(0);
    const add = (id: string, idx: number, state: RowState, nextTryAt: number): void => {
      rows.insertAll(id, [row(id, idx, 1)], now);
      db.prepare('UPDATE rows SET state = ?, next_try_at = ? WHERE batch_id = ? AND idx = ?').run(state, nextTryAt, id, idx);
    };
    add('b2', 0, 'resending', now - 5);
    add('b1', 9, 'resending', now - 1);
    add('b1', 3, 'pending', 0);
    add('b1', 1, 'pending', now - 10); // held back, due again: after the rows due since ever
    add('b1', 2, 'pending', 0);
    add('b1', 4, 'pending', now + 60_000); // not due yet
    add('b2', 5, 'pending', 0); // b2 waits for funds: no new orders
    const got = (limit: number, busy?: Set<string>) =>
      rows.sendable({ newOrders: ['b1'], resendsOnly: ['b2'] }, now, limit, busy ? { has: (b, i) => busy.has(`${b}:${i}`) } : undefined).map((x) => `${x.batchId}:${x.idx}`);
    expect(got(10)).toEqual(['b1:9', 'b2:0', 'b1:2', 'b1:3', 'b1:1']);
    expect(got(2)).toEqual(['b1:9', 'b2:0']);
    expect(got(2, new Set(['b1:9', 'b1:2']))).toEqual(['b2:0', 'b1:3']);
    expect(rows.nextTryAt({ newOrders: ['b1'], resendsOnly: ['b2'] })).toBe(0);
    expect(rows.nextTryAt({ newOrders: [], resendsOnly: ['b1'] })).toBe(now - 1);
    expect(rows.nextTryAt({ newOrders: [], resendsOnly: ['b2'] })).toBe(now - 5);
    db.close();
  });

  it('duePolls and nextPollAt: earliest first over every followed state and batch, up to the limit', () => {
    const { db, rows, now } = store(400);
    const truth = db.prepare(
      `SELECT batch_id AS b, idx, next_poll_at AS t FROM rows WHERE state IN ('processing', 'unseen', 'verifying', 'searching') ORDER BY next_poll_at`,
    ).all() as { b: string; idx: number; t: number }[];
    const due = truth.filter((x) => x.t <= now);
    const got = rows.duePolls(['b1', 'b2'], now, 25);
    expect(got).toHaveLength(25);
    expect(got.map((x) => x.nextPollAt)).toEqual(due.slice(0, 25).map((x) => x.t));
    expect(rows.duePolls(['b1', 'b2'], now, 100_000)).toHaveLength(due.length);
    expect(rows.nextPollAt(['b1', 'b2'])).toBe(truth[0]!.t);
    expect(rows.countProcessing(['b1', 'b2'])).toBe((db.prepare(`SELECT count(*) AS n FROM rows WHERE state IN ('processing', 'unseen')`).get() as { n: number }).n);
    db.close();
  });

  it('placedAfter answers for many instants at once what a count per instant answers', () => {
    const { db, rows, now } = store(500);
    const r = prng(3);
    const instants = Array.from({ length: 40 }, () => now - Math.floor(r() * 8_000));
    const count = db.prepare('SELECT count(*) AS n FROM rows WHERE order_id IS NOT NULL AND first_sent_at > ?');
    expect(rows.placedAfter(instants)).toEqual(instants.map((t) => (count.get(t) as { n: number }).n));
    expect(rows.placedAfter([])).toEqual([]);
    db.close();
  });

  it('a poll round reads the history depths of all its rows once, not once per row', async () => {
    const rt = await supplierWorld((req, res) => {
      if (req.url?.includes('/history')) return void res.end(JSON.stringify({ success: true, count: 0, orders: [], hasMore: false }));
      const id = /orders\/([^/?]+)/.exec(req.url ?? '')?.[1];
      res.end(JSON.stringify({ success: true, data: { orderId: id, status: 'processing', game: 'pubg', packName: '60 UC' } }));
    }, Array.from({ length: 300 }, (_, i) => pubgRow(i)), { TOPUP_RATE_LIMITS: '10000/1s' });
    const now = Date.now();
    rt.db.prepare(`UPDATE rows SET state = 'processing', order_id = 'ORD-' || idx, first_sent_at = ? - idx * 100, next_poll_at = 0`).run(now);
    const seen = recordStatements(rt.db);
    const due = rt.rows.duePolls(['b1'], now, 2_000);
    await new Poller(rt, rt.account).round(due, due.length, false);
    expect(seen.filter((s) => /first_sent_at >/.test(s.sql))).toHaveLength(1);
  });
});

describe('what is fsynced per order', () => {
  it('the intent to send is committed with synchronous=FULL; its answer and the call log are not fsynced; FULL is restored', async () => {
    const { db, rows, now } = store(10);
    let level = db.pragma('synchronous', { simple: true }) as number;
    const exec = db.exec.bind(db);
    (db as { exec: unknown }).exec = (sql: string) => {
      const m = /PRAGMA synchronous = (NORMAL|FULL)/.exec(sql);
      const r = exec(sql);
      if (m) level = m[1] === 'FULL' ? 2 : 1;
      return r;
    };
    const seen = recordStatements(db, () => level);
    const gate = new RateScheduler(db, [{ limit: 100, windowMs: 1_000 }], 0);
    const levelOf = (re: RegExp): number[] => seen.filter((x) => re.test(x.sql)).map((x) => x.tag as number);
    const release = await gate.acquire({ route: 'submit', method: 'POST', priority: 30 });
    rows.markSending('b1', 0, { owner: OWNER, now }, now + 1_000);
    release();
    rows.placed('b1', 0, { orderId: 'Z', status: 'processing' }, now, now);
    rows.finished('b1', 0, { orderId: 'Z', status: 'completed' }, now);
    expect(levelOf(/THEN 'sending'/)).toEqual([2]);
    expect(levelOf(/THEN 'processing'/)).toEqual([1]);
    expect(levelOf(/THEN 'completed'/)).toEqual([1]);
    expect(levelOf(/INSERT INTO api_calls/)).toEqual([1]);
    expect(levelOf(/UPDATE api_calls SET done/)).toEqual([1]);
    expect(db.pragma('synchronous', { simple: true })).toBe(2);
    // Inside a transaction the enclosing commit decides (SQLite refuses to change the level there).
    db.transaction(() => rows.seen('b1', 0, now, now, null))();
    db.close();
  });
});

describe('reserved USD: one figure for balance, validate, the report, the console and /metrics', () => {
  it('sums the unsent rows of claimed and open batches from the counters; finished, cancel-requested batches and sent rows reserve nothing', () => {
    const { db, rows, batches, now } = store(70);
    const pendingOf = (id: string): number => (db.prepare(`SELECT coalesce(sum(expected_usd), 0) AS s FROM rows WHERE batch_id = ? AND state = 'pending'`).get(id) as { s: number }).s;
    expect(pendingOf('b1')).toBeGreaterThan(0);
    expect(rows.reservedUsd()).toBe(roundCents(pendingOf('b1') + pendingOf('b2')));
    // A claimed batch's rows (stored in chunks, about to open) are promised too.
    batches.create({ id: 'b3', name: 'b3', sourceName: 'b3.csv', jobFile: 'jobs/b3/x.csv', contentHash: 'b3', origin: 'inbox', sandbox: false, owner: OWNER, leaseUntil: now + 86_400_000, now });
    db.transaction(() => rows.insertAll('b3', [row('b3', 0, 2.5), row('b3', 1, 1.25)], now))();
    expect(rows.reservedUsd()).toBe(roundCents(pendingOf('b1') + pendingOf('b2') + 3.75));
    // Cancel asked for: its unsent rows will be skipped.
    expect(batches.requestCancel('b2')).toBe(true);
    expect(rows.reservedUsd()).toBe(roundCents(pendingOf('b1') + 3.75));
    // A finished batch promises nothing, whatever rows it kept.
    db.prepare(`UPDATE batches SET state = 'done' WHERE id = 'b1'`).run();
    expect(rows.reservedUsd()).toBe(3.75);
    // A row on its way is no longer reserved (the balance pays it).
    rows.markSending('b3', 0, { owner: OWNER, now }, now + 1_000);
    expect(rows.reservedUsd()).toBe(1.25);
    db.close();
  });
});
