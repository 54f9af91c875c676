/**
 * The history check's paths, in process (the daemon tests cover them over dist/): which orders
 * of GET /history can be the row's, how far back history must reach before absence means "not
 * placed", what each kind of row says in review, and what a history that cannot be read does.
 * The supplier is a scripted HTTP server on 127.0.0.1 (scripted-supplier.ts); store and client
 * are the real ones. Date.now is frozen where a stored time is checked exactly.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { verifyFailed, verifyRow } from '../../src/poll/verify.js';
import { TRXID_USED_CODE, type NewRow } from '../../src/store/rows.js';
import { pubgRow } from './fake-supplier.js';
import { linesOf, scriptedWorld, type World } from './scripted-supplier.js';

afterEach(() => void vi.restoreAllMocks());

function freeze(): number {
  const t = Date.now();
  vi.spyOn(Date, 'now').mockReturnValue(t);
  return t;
}

type HistoryOrder = Record<string, unknown>;
/** An order in history for PUBG 60 UC, for row 0's player unless told otherwise. */
const order = (over: HistoryOrder = {}): HistoryOrder => ({ orderId: 'ORD-9', status: 'processing', game: 'pubg', packName: '60 UC', userId: '5123456789', ...over });
/** An order in history that is not row 0's (another player). */
const foreign = (i: number, over: HistoryOrder = {}): HistoryOrder => order({ orderId: `ORD-f${i}`, userId: `77${i}`, ...over });
const row = (w: World, idx = 0) => w.rt.rows.get('b1', idx)!;

const keyRow = (idx: number): NewRow => ({
  idx, line: idx + 2, cells: ['KEY-PUBG-660', '1'], request: { pid: 'KEY-PUBG-660', trxid: `tu-key-${idx}`, quantity: 1 }, error: null,
  productId: 'KEY-PUBG-660', slug: 'gamekeypubg', packName: 'PUBG 660 UC key', quantity: 1, unitPriceUsd: 9, expectedUsd: 9,
});

/**
 * A world whose supplier's history is `orders` and whose row 0 was refused after an uncertain
 * attempt (`verifying`, first sent 5 s ago), or is `searching` when told.
 */
async function world(orders: HistoryOrder[] | (() => HistoryOrder[]), opts: { rows?: NewRow[]; searching?: 'used' | 'unanswered'; error?: string | null; env?: Record<string, string> } = {}) {
  const w = await scriptedWorld(opts.rows ?? [pubgRow(0)], opts.env);
  w.set(() => {
    const list = typeof orders === 'function' ? orders() : orders;
    return { body: { success: true, count: list.length, orders: list } };
  });
  const first = Date.now() - 5_000;
  const error = opts.error === undefined ? 'INVALID_PACK: Invalid pack' : opts.error;
  if (opts.searching === 'used') w.sql(0, `state = 'searching', attempts = 1, first_sent_at = ?, error = ?, reject_code = ?`, first, error, TRXID_USED_CODE);
  else if (opts.searching === 'unanswered') w.sql(0, `state = 'searching', attempts = 6, first_sent_at = ?, error = ?, reject_code = NULL`, first, error);
  else w.sql(0, `state = 'verifying', attempts = 2, first_sent_at = ?, error = ?, reject_code = 'INVALID_PACK'`, first, error);
  return w;
}

describe('what is asked, and an order with the row\'s own trxid', () => {
  it('asks for the newest 200 orders; an aborted check asks nothing', async () => {
    const w = await world([]);
    await verifyRow(w.rt, row(w));
    expect(w.seen).toEqual(['GET /history?limit=200']);
    const stop = new AbortController();
    stop.abort();
    await expect(verifyRow(w.rt, row(w), stop.signal)).rejects.toThrow();
    expect(w.seen).toHaveLength(1);
  });

  it('the trxid is matched whatever its case and surrounding spaces; the order is recorded with the answer it came in', async () => {
    const w = await world([foreign(1, { trxid: 'someone-else' }), order({ orderId: 'ORD-own', trxid: '  TU-Row-0 ', amountUsd: 0.93 })], { env: { TOPUP_POLL_INTERVAL_MS: '7000' } });
    const t = freeze();
    expect(await verifyRow(w.rt, row(w))).toBe('placed');
    expect(row(w)).toMatchObject({ state: 'processing', orderId: 'ORD-own', amountUsd: 0.93, nextPollAt: t + 7_000 });
    expect(JSON.parse(row(w).lastAnswer!)).toMatchObject({ route: 'GET /history', status: 200, body: { orderId: 'ORD-own' } });
    expect(w.logs.filter((l) => l.level === 40)).toMatchObject([{ batch: 'b1', line: 2, orderId: 'ORD-own' }]);
  });

  it('an order with the row\'s trxid that is another purchase: review, both sides shown and the order kept', async () => {
    const w = await world([order({ orderId: 'ORD-own', trxid: 'tu-row-0', userId: '42' })]);
    expect(await verifyRow(w.rt, row(w))).toBe('review');
    expect(row(w)).toMatchObject({ state: 'review', orderId: null });
    expect(row(w).error).toMatch(/order ORD-own in history carries this trxid but is another purchase \(userId: sent "5123456789", the order has "42"\)/);
    expect(JSON.parse(row(w).lastAnswer!)).toMatchObject({ route: 'GET /history', body: { orderId: 'ORD-own' } });
  });
});

describe('a history without trxids: which orders could be the row\'s', () => {
  it('a history that echoes trxids for some orders is read by trxid alone: a lookalike without one is not taken', async () => {
    const w = await world([foreign(1, { trxid: 'someone-else' }), order({ orderId: 'ORD-look' })]);
    expect(await verifyRow(w.rt, row(w))).toBe('not-placed');
    expect(row(w)).toMatchObject({ state: 'rejected', orderId: null });
  });

  it('an order another row already holds is not a candidate', async () => {
    const w = await world([order({ orderId: 'ORD-held' })], { rows: [pubgRow(0), pubgRow(1)] });
    w.sql(1, `state = 'completed', order_id = 'ORD-held', request_json = ?`, JSON.stringify({ pid: 'PUBG-60', trxid: 'tu-row-1', userId: '5123456789' }));
    expect(await verifyRow(w.rt, row(w))).toBe('not-placed');
    expect(row(w).orderId).toBeNull();
  });

  it('a top-up\'s order is taken only if it names the player and the pack; naming only one of them: review', async () => {
    const cases: [HistoryOrder, string][] = [
      [{ orderId: 'ORD-a', status: 'processing', userId: '5123456789', packName: '60 UC' }, 'placed'],
      [{ orderId: 'ORD-b', status: 'processing', userId: '5123456789', pid: 'PUBG-60' }, 'placed'],
      [{ orderId: 'ORD-c', status: 'processing', userId: '5123456789', game: 'pubg' }, 'review'],
      [{ orderId: 'ORD-d', status: 'processing', pid: 'PUBG-60' }, 'review'],
      [{ orderId: 'ORD-e', status: 'processing', packName: '60 UC' }, 'review'],
    ];
    for (const [o, outcome] of cases) {
      const w = await world([o]);
      expect({ o, outcome: await verifyRow(w.rt, row(w)) }).toEqual({ o, outcome });
      // A taken order is recorded with the history answer it was found in, for operators.
      if (outcome === 'placed') expect(JSON.parse(row(w).lastAnswer!)).toMatchObject({ route: 'GET /history', status: 200, body: { orderId: o.orderId } });
    }
  });

  it('one full candidate beside an order that names too little to tell (the row\'s own, listed without its pack): review, not the candidate (found by the simulator)', async () => {
    // The panel's order an hour earlier names the player and the pack; the row's own order, made by
    // the attempt whose answer was lost, is listed without its pack. Before: the first was taken.
    const w = await world([order({ orderId: 'ORD-panel' }), { orderId: 'ORD-ours', status: 'completed', game: 'pubg', userId: '5123456789' }]);
    expect(await verifyRow(w.rt, row(w))).toBe('review');
    expect(row(w)).toMatchObject({ state: 'review', orderId: null });
    expect(row(w).error).toMatch(/another could be its order too/);
  });

  it('a single full candidate is taken with a note saying it was told apart by player and pack alone', async () => {
    const w = await world([order({ orderId: 'ORD-one' })]);
    expect(await verifyRow(w.rt, row(w))).toBe('placed');
    expect(row(w).note).toMatch(/found in history by its player and pack \(order ORD-one; history shows no trxids or times\)/);
  });

  it('a key\'s order without the row\'s trxid is never taken (a key/card order names no buyer: issue 20, defect 3): review; another pack: not placed', async () => {
    const cases: [HistoryOrder, string][] = [
      [{ orderId: 'ORD-a', status: 'processing', pid: 'KEY-PUBG-660' }, 'review'],
      [{ orderId: 'ORD-b', status: 'processing', packName: 'PUBG 660 UC key' }, 'review'],
      [{ orderId: 'ORD-c', status: 'processing', game: 'gamekeypubg' }, 'review'],
      [{ orderId: 'ORD-d', status: 'processing', userId: '5123456789', game: 'gamekeypubg' }, 'review'],
      [{ orderId: 'ORD-e', status: 'processing', pid: 'KEY-PUBG-325' }, 'not-placed'],
    ];
    for (const [o, outcome] of cases) {
      const w = await world([o], { rows: [keyRow(0)] });
      expect({ o, outcome: await verifyRow(w.rt, row(w)) }).toEqual({ o, outcome });
      if (outcome === 'review') expect(row(w)).toMatchObject({ orderId: null, codes: [] });
    }
  });

  it('an unclaimed order that differs from the row in nothing it names, but names too little to be taken as its own, may be the row\'s: never "not placed"', async () => {
    // Spec 2.3: "Empty fields may be omitted". The first attempt's answer was lost and the resend
    // refused; history names our player and game but no pack. Before: the row was rejected as
    // "order history checked: no order was placed", and `topup retry` would buy it again.
    const w = await world([foreign(1), { orderId: 'ORD-np', status: 'processing', game: 'pubg', userId: '5123456789', amountUsd: 0.92 }]);
    expect(await verifyRow(w.rt, row(w))).toBe('review');
    expect(row(w)).toMatchObject({ state: 'review', orderId: null });
    expect(row(w).error).toMatch(/order history holds an order that could be this row's but names too little to tell \(no pack, or no player\), so it is unknown whether this row was charged/);
  });

  it('no candidate at all: a twin row in flight does not matter, the refusal stands', async () => {
    const w = await world([foreign(1)], { rows: [pubgRow(0), pubgRow(1)] });
    w.sql(1, `state = 'resending', request_json = ?`, JSON.stringify({ pid: 'PUBG-60', trxid: 'tu-row-1', userId: '5123456789' }));
    expect(await verifyRow(w.rt, row(w))).toBe('not-placed');
  });
});

describe('absence means "not placed" only when history reaches back before the first attempt', () => {
  /** A full page (200 orders, none of them the row's); the oldest (last) gets `oldest`. */
  const fullPage = (oldest: HistoryOrder): HistoryOrder[] => [...Array.from({ length: 199 }, (_, i) => foreign(i)), foreign(199, oldest)];

  it('the oldest order is more than 15 h older than the first attempt (no zone or clock can put that between two clocks): not placed; less, or a text without a zone: review', async () => {
    const t = Date.now();
    const first = t - 600_000;
    const H15 = 15 * 3_600_000;
    const naive = (ms: number): string => new Date(ms).toISOString().replace('T', ' ').slice(0, 19);
    for (const [createdAt, outcome] of [
      [first - H15 - 1, 'not-placed'],
      [first - H15, 'review'],
      [new Date(first - H15 - 120_000).toISOString(), 'not-placed'],
      [new Date(first - 3_600_000).toISOString(), 'review'],
      // "2026-11-26 03:04:05": no zone, so not read at all (issue 20's adversarial review: read in the host's zone).
      [naive(first - 2 * H15), 'review'],
    ] as const) {
      const w = await world(fullPage({ createdAt }));
      w.sql(0, 'first_sent_at = ?', first);
      expect({ createdAt, outcome: await verifyRow(w.rt, row(w)) }).toEqual({ createdAt, outcome });
    }
  });

  it('without a readable time, the oldest order must be one of ours placed before the first attempt', async () => {
    const first = Date.now() - 600_000;
    for (const [ours, sentAt, outcome] of [
      [true, first - 1, 'not-placed'],
      [true, first, 'review'],
      [true, null, 'review'],
      [false, null, 'review'],
    ] as const) {
      const w = await world(fullPage({ orderId: 'ORD-old', createdAt: 'last Tuesday' }), { rows: [pubgRow(0), pubgRow(1)] });
      w.sql(0, 'first_sent_at = ?', first);
      if (ours) w.sql(1, `state = 'completed', order_id = 'ORD-old', first_sent_at = ?`, sentAt);
      expect({ ours, sentAt, outcome: await verifyRow(w.rt, row(w)) }).toEqual({ ours, sentAt, outcome });
    }
  });

  it('a full page that does not reach back: review, saying so', async () => {
    const w = await world(fullPage({ createdAt: Date.now() }));
    expect(await verifyRow(w.rt, row(w))).toBe('review');
    expect(row(w).error).toMatch(/order history does not reach back far enough to tell, so it is unknown whether this row was charged/);
  });

  it('a refusal for balance, proven not placed: the row waits for a top-up (by its code, or by its words alone)', async () => {
    for (const [code, error] of [['INSUFFICIENT_BALANCE', 'INSUFFICIENT_BALANCE: Insufficient balance'], [null, 'Saldo tidak cukup']] as const) {
      const w = await world([foreign(1)], { error });
      w.sql(0, `reject_code = ?, doubt_since = 1, doubt_tries = 3`, code);
      expect(await verifyRow(w.rt, row(w))).toBe('held-balance');
      expect(row(w)).toMatchObject({ state: 'pending', error: null, doubtSince: null, doubtTries: 0 });
    }
  });

  it('the refusal stands with its words, or "rejected" when it had none', async () => {
    const w = await world([], { error: null });
    expect(await verifyRow(w.rt, row(w))).toBe('not-placed');
    expect(row(w).error).toBe('rejected (order history checked: no order was placed)');
  });

  it('a process that lost the batch writes nothing: the row stays for the new owner', async () => {
    const w = await world([]);
    w.rt.db.prepare(`UPDATE batches SET owner = 'another-process' WHERE id = 'b1'`).run();
    expect(await verifyRow(w.rt, row(w))).toBe('review');
    expect(row(w)).toMatchObject({ state: 'verifying', error: 'INVALID_PACK: Invalid pack' });
    expect(linesOf(w, /not applied/)).toMatchObject([{ level: 40, batch: 'b1', line: 2 }]);
  });
});

describe('what a row in review says happened to it', () => {
  it('refused as "trxid already used": an empty history is not "not charged"', async () => {
    const t = freeze();
    const w = await world([], { searching: 'used', error: 'DUPLICATE_TRXID: Trxid already used' });
    expect(await verifyRow(w.rt, row(w))).toBe('review');
    expect(row(w).error).toBe(
      `REVIEW: the API refused the trxid as already used (DUPLICATE_TRXID: Trxid already used); order history showed no order with this trxid at ${new Date(t).toISOString()}, ` +
        'but an order can still appear (or be older than history shows). Check the order history for trxid tu-row-0 (and again later) before ordering it again.',
    );
  });

  it('never answered: the story says so, with why', async () => {
    const w = await world([order()], { searching: 'unanswered', error: 'no definite answer since …' });
    expect(await verifyRow(w.rt, row(w))).toBe('review');
    expect(row(w).error).toMatch(/^REVIEW: no attempt got a definite answer: no definite answer since …; order history does not show trxids/);
  });

  it('refused after a lost answer: the story names the refusal', async () => {
    const w = await world([order({ orderId: 'ORD-1' }), order({ orderId: 'ORD-2' })]);
    expect(await verifyRow(w.rt, row(w))).toBe('review');
    expect(row(w).error).toMatch(/^REVIEW: an earlier attempt got no answer and the resend was refused \(INVALID_PACK: Invalid pack\); 2 orders in history match this row/);
  });

  it('a row without a recorded error still reads as a sentence', async () => {
    const stories: [opts: { searching?: 'used' | 'unanswered' }, story: string][] = [
      [{ searching: 'used' }, 'REVIEW: the API refused the trxid as already used (refused);'],
      [{ searching: 'unanswered' }, 'REVIEW: no attempt got a definite answer: no answer;'],
      [{}, 'REVIEW: an earlier attempt got no answer and the resend was refused (rejected);'],
    ];
    for (const [opts, story] of stories) {
      const w = await world([order({ orderId: 'ORD-1' }), order({ orderId: 'ORD-2' })], { ...opts, error: null });
      await verifyRow(w.rt, row(w));
      expect(row(w).error!.startsWith(story)).toBe(true);
    }
  });
});

describe('a history that cannot be read', () => {
  async function failing(status: number, env: Record<string, string> = {}) {
    const w = await world([], { env });
    w.set(() => ({ status, body: { success: false, error: status === 404 ? 'Not Found' : 'DB DOWN' } }));
    const err: unknown = await verifyRow(w.rt, row(w)).then(() => expect.fail('the history check should fail'), (e: unknown) => e);
    return { w, err };
  }

  it('a deployment without history (404) can never settle it: review at once', async () => {
    const { w, err } = await failing(404);
    verifyFailed(w.rt, row(w), err);
    expect(row(w)).toMatchObject({ state: 'review' });
    expect(row(w).error).toMatch(/^REVIEW: an earlier attempt got no answer .*; this API has no order history to check, so it is unknown whether this row was charged/);
    expect(row(w).lastAnswer).toContain('Not Found');
    expect(w.logs.filter((l) => l.level === 50)).toMatchObject([{ batch: 'b1', line: 2, trxid: 'tu-row-0', err: expect.stringContaining('404') }]);
  });

  it('a failing history is looked at again after the poll interval (at least 5 s), on the row\'s doubt clock', async () => {
    for (const [poll, wait] of [['1000', 5_000], ['7000', 7_000]] as const) {
      const { w, err } = await failing(500, { TOPUP_POLL_INTERVAL_MS: poll });
      const t = freeze();
      verifyFailed(w.rt, row(w), err);
      expect(row(w)).toMatchObject({ state: 'verifying', nextPollAt: t + wait, doubtSince: t });
      expect(row(w).lastAnswer).toContain('DB DOWN');
      expect(w.logs.filter((l) => l.level >= 40)).toMatchObject([{ level: 40, batch: 'b1', line: 2, err: expect.stringContaining('500') }]);
      vi.restoreAllMocks();
    }
  });

  it('failing for TOPUP_REVIEW_AFTER_MS: review, saying since when; 1 ms less: looked at again', async () => {
    for (const [ago, state] of [[60_000, 'review'], [59_999, 'verifying']] as const) {
      const { w, err } = await failing(500, { TOPUP_REVIEW_AFTER_MS: '60000' });
      const t = freeze();
      w.sql(0, 'doubt_since = ?', t - ago);
      verifyFailed(w.rt, row(w), err);
      expect({ ago, state: row(w).state }).toEqual({ ago, state });
      if (state === 'review') expect(row(w).error).toContain(`order history could not be read since ${new Date(t - ago).toISOString()} (GET /history?limit=200: HTTP 500`);
      vi.restoreAllMocks();
    }
  });

  it('a failure that is not an answer at all is looked at again like any other', async () => {
    const w = await world([]);
    verifyFailed(w.rt, row(w), new Error('socket closed'));
    expect(row(w).state).toBe('verifying');
    expect(w.logs.filter((l) => l.level >= 40)).toMatchObject([{ level: 40, err: 'socket closed' }]);
  });
});
