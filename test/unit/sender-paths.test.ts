/**
 * The sender's paths, in process (the daemon tests cover them over dist/, which no mutant
 * reaches): the intent and what is sent, the price cap, every kind of answer and what it does to
 * the row, the pauses, the back-off of resends and when resending stops for the history check.
 * The supplier is a scripted HTTP server on 127.0.0.1 (scripted-supplier.ts); the store, client,
 * gate and pauses are the real ones. Where an exact time matters, Date.now is frozen (the
 * sender reads the wall clock for what it stores); Math.random is pinned for the back-off's jitter.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { sendRow } from '../../src/dispatch/sender.js';
import { ErrorCode } from '../../src/kernel/errors.js';
import { TRXID_USED_CODE, type NewRow } from '../../src/store/rows.js';
import { pubgRow } from './fake-supplier.js';
import { CATALOG, linesOf, scriptedWorld, senderDeps, type Answer, type World } from './scripted-supplier.js';

afterEach(() => void vi.restoreAllMocks());

/** Freezes the wall clock (Date.now) at the current instant; returns it. */
function freeze(): number {
  const t = Date.now();
  vi.spyOn(Date, 'now').mockReturnValue(t);
  return t;
}

const order = (over: Record<string, unknown> = {}): Answer => ({ body: { orderCreated: true, orderId: 'ORD-1', status: 'processing', ...over } });
const posts = (w: World): number => w.seen.filter((s) => s.startsWith('POST')).length;
const row = (w: World, idx = 0) => w.rt.rows.get('b1', idx)!;

/** A world whose row 0 is in doubt: sent once, its answer lost. */
async function inDoubt(env: Record<string, string> = {}, rows: NewRow[] = [pubgRow(0)]): Promise<World> {
  const w = await scriptedWorld(rows, env);
  const t = Date.now() - 2_000;
  w.sql(0, `state = 'resending', attempts = 1, first_sent_at = ?, last_sent_at = ?, doubt_since = ?, doubt_tries = 1`, t, t, t);
  return w;
}

describe('the intent, and rows that are not sent', () => {
  it('a row without a stored request is an internal error; nothing is sent', async () => {
    const w = await scriptedWorld([{ ...pubgRow(0), request: null, error: 'pid: unknown' }]);
    w.set(() => order());
    await expect(sendRow(senderDeps(w.rt), row(w))).rejects.toMatchObject({ code: ErrorCode.Internal, message: expect.stringContaining('row 0 of b1') });
    expect(w.seen).toEqual([]);
  });

  it('the intent is committed before the request leaves: sending, attempt counted, not due again before the request timeout', async () => {
    const w = await scriptedWorld([pubgRow(0)], { TOPUP_REQUEST_TIMEOUT_MS: '300' });
    const t = freeze();
    vi.spyOn(Math, 'random').mockReturnValue(0);
    w.set(() => 'hang');
    const sent = sendRow(senderDeps(w.rt), row(w));
    await w.received(1, sent);
    expect(row(w)).toMatchObject({ state: 'sending', attempts: 1, firstSentAt: t, lastSentAt: t, nextTryAt: t + 300 });
    // The request timed out: the order may exist, so the row is in doubt and resent with the same trxid.
    expect(await sent).toBe('retry');
    expect(row(w)).toMatchObject({ state: 'resending', doubtSince: t, doubtTries: 1, nextTryAt: t + 500, error: null });
    expect(linesOf(w, /no definite answer/)).toMatchObject([{ level: 40, trxid: 'tu-row-0', line: 2, why: expect.stringContaining('no answer within 300 ms') }]);
    expect(posts(w)).toBe(1);
  });

  it('a row that moved on, or whose batch lease lapsed, is not sent', async () => {
    const w = await scriptedWorld([pubgRow(0), pubgRow(1)]);
    w.set(() => order());
    const stale = row(w, 0);
    w.sql(0, `state = 'processing', order_id = 'ORD-0'`);
    expect(await sendRow(senderDeps(w.rt), stale)).toBe('not-sent');
    w.rt.db.prepare(`UPDATE batches SET lease_until = 0 WHERE id = 'b1'`).run();
    expect(await sendRow(senderDeps(w.rt), row(w, 1))).toBe('not-sent');
    expect(posts(w)).toBe(0);
    expect(row(w, 1)).toMatchObject({ state: 'pending', attempts: 0 });
  });

  it('aborted before the request leaves: nothing sent, the row untouched; aborted during it: the row is in doubt', async () => {
    const w = await scriptedWorld([pubgRow(0), pubgRow(1)]);
    w.set(() => 'hang');
    const before = new AbortController();
    before.abort();
    expect(await sendRow(senderDeps(w.rt), row(w, 0), before.signal)).toBe('not-sent');
    expect(row(w, 0)).toMatchObject({ state: 'pending', attempts: 0 });
    expect(w.seen).toEqual([]);

    const during = new AbortController();
    const sent = sendRow(senderDeps(w.rt), row(w, 1), during.signal);
    await w.received(1, sent);
    during.abort();
    // The request had left: only a resend of the same trxid can tell whether it was charged.
    expect(await sent).toBe('retry');
    expect(row(w, 1)).toMatchObject({ state: 'resending', doubtTries: 1 });
  });

  it('a store failure at the intent (not an answer) keeps a row in doubt, not counted, looked at again in 5 s; nothing sent', async () => {
    const w = await inDoubt();
    w.rt.db.exec(`CREATE TRIGGER no_intent BEFORE UPDATE OF attempts ON rows BEGIN SELECT RAISE(ABORT, 'disk I/O error'); END`);
    w.set(() => order());
    const t = freeze();
    expect(await sendRow(senderDeps(w.rt), row(w))).toBe('retry');
    expect(posts(w)).toBe(0);
    expect(row(w)).toMatchObject({ state: 'resending', attempts: 1, doubtTries: 1, nextTryAt: t + 5_000 });
    expect(linesOf(w, /unexpected failure/)).toMatchObject([{ level: 50, batch: 'b1', line: 2, err: { message: expect.stringContaining('disk I/O error') } }]);
  });
});

describe('the price cap (maxPriceUsd) is checked against a fresh catalog before a first send', () => {
  const capped = (cap: number | null, pid = 'PUBG-60'): NewRow => ({ ...pubgRow(0), maxPriceUsd: cap, productId: pid, request: { ...pubgRow(0).request!, pid } });
  const supplier = (price: number) => (req: { method?: string; url?: string }): Answer =>
    req.url === '/services' ? { body: CATALOG.services } : req.url === '/products' ? { body: CATALOG.products(price) } : order();

  it('the price rose above the cap: the row is invalid, with both prices, and nothing is sent', async () => {
    const w = await scriptedWorld([capped(1)]);
    w.set(supplier(1.05));
    expect(await sendRow(senderDeps(w.rt), row(w))).toBe('invalid-price');
    expect(row(w)).toMatchObject({ state: 'invalid', attempts: 0, error: expect.stringMatching(/1\.05 USD, above the cap of 1 USD/) });
    expect(w.seen).toContain('GET /products');
    expect(posts(w)).toBe(0);
  });

  it('a price equal to the cap, or above it by no more than floating-point noise (1e-9), is sent', async () => {
    for (const [cap, price] of [[0.92, 0.92], [1, 1 + 1e-9], [0.3, 0.1 + 0.2]]) {
      const w = await scriptedWorld([capped(cap!)]);
      w.set(supplier(price!));
      expect({ cap, price, result: await sendRow(senderDeps(w.rt), row(w)) }).toEqual({ cap, price, result: 'placed' });
      expect(posts(w)).toBe(1);
    }
  });

  it('a row without a cap is sent without looking at the catalog', async () => {
    const w = await scriptedWorld([capped(null)]);
    w.set(supplier(5));
    expect(await sendRow(senderDeps(w.rt), row(w))).toBe('placed');
    expect(w.seen).toEqual(['POST /orders']);
  });

  it('a pack the catalog no longer lists is sent (the API judges it; the cap cannot be applied to no price)', async () => {
    const w = await scriptedWorld([capped(1, 'PUBG-325')]);
    w.set(supplier(0.92));
    expect(await sendRow(senderDeps(w.rt), row(w))).toBe('placed');
    expect(posts(w)).toBe(1);
  });

  it('a resend of a row in doubt is never held back by the price: it may already have been charged', async () => {
    const w = await inDoubt({}, [capped(1)]);
    w.set(supplier(2));
    expect(await sendRow(senderDeps(w.rt), row(w))).toBe('placed');
    expect(w.seen).toEqual(['POST /orders']);
  });

  it('the catalog cannot be read: nothing is sent, the batch\'s pending rows wait 5 s', async () => {
    const w = await scriptedWorld([capped(1), pubgRow(1)]);
    w.set((req) => (req.method === 'GET' ? { status: 500, body: { success: false, error: 'DB DOWN' } } : order()));
    const t = freeze();
    expect(await sendRow(senderDeps(w.rt), row(w))).toBe('retry');
    expect(posts(w)).toBe(0);
    expect(row(w, 0)).toMatchObject({ state: 'pending', nextTryAt: t + 5_000 });
    expect(row(w, 1)).toMatchObject({ state: 'pending', nextTryAt: t + 5_000 });
    expect(linesOf(w, /price check/)).toMatchObject([{ level: 40, batch: 'b1', line: 2, err: expect.stringContaining('DB_DOWN') }]);
  });
});

describe('an answer carrying an order', () => {
  it('is recorded with its facts; the row is polled again one poll interval later', async () => {
    const w = await scriptedWorld([pubgRow(0)], { TOPUP_POLL_INTERVAL_MS: '7000' });
    w.set(() => order({ amountUsd: 0.95 }));
    const t = freeze();
    expect(await sendRow(senderDeps(w.rt), row(w))).toBe('placed');
    expect(row(w)).toMatchObject({ state: 'processing', orderId: 'ORD-1', amountUsd: 0.95, nextPollAt: t + 7_000, note: null, error: null });
    expect(linesOf(w, /order placed/)).toMatchObject([{ level: 20, trxid: 'tu-row-0', orderId: 'ORD-1', status: 'processing' }]);
  });

  it('the game may be named as the catalog names it (game or service); an answer for another game goes to review', async () => {
    const w = await scriptedWorld([pubgRow(0), pubgRow(1), pubgRow(2), pubgRow(3)]);
    let next = 0;
    const games = ['PUBG Global', 'PUBG Mobile', 'pubg', 'Free Fire'];
    w.set((req) =>
      req.url === '/services'
        ? { body: { ...CATALOG.services, services: [{ ...CATALOG.services.services[0], productName: 'PUBG Mobile UC', gameName: 'PUBG Mobile' }] } }
        : req.url === '/products' ? { body: CATALOG.products() } : order({ orderId: `ORD-${next}`, game: games[next++], packName: '60 UC' }),
    );
    await w.rt.account.catalog.get();
    const d = senderDeps(w.rt);
    expect(await sendRow(d, row(w, 0))).toBe('placed');
    expect(await sendRow(d, row(w, 1))).toBe('placed');
    expect(await sendRow(d, row(w, 2))).toBe('placed');
    expect(await sendRow(d, row(w, 3))).toBe('review');
    expect(row(w, 3).error).toMatch(/game: sent "pubg", the order has "Free Fire"/);
  });

  it('without a catalog at hand only the slug names the game: an answer naming it otherwise is not taken as the row\'s', async () => {
    const w = await scriptedWorld([pubgRow(0)]);
    w.set(() => order({ game: 'PUBG Global', packName: '60 UC' }));
    expect(await sendRow(senderDeps(w.rt), row(w))).toBe('review');
    expect(row(w).orderId).toBeNull();
  });

  it('an order that came with an HTTP error status is recorded as placed, and the status is logged', async () => {
    for (const [status, warned] of [[200, false], [201, false], [299, false], [300, true], [400, true], [500, true]] as const) {
      const w = await scriptedWorld([pubgRow(0)]);
      w.set(() => ({ status, body: { orderCreated: true, orderId: `ORD-${status}`, status: 'processing' } }));
      expect(await sendRow(senderDeps(w.rt), row(w))).toBe('placed');
      expect(row(w)).toMatchObject({ state: 'processing', orderId: `ORD-${status}` });
      expect(w.logs.filter((l) => l.level === 40).map((l) => ({ http: l.http, trxid: l.trxid, orderId: l.orderId }))).toEqual(
        warned ? [{ http: status, trxid: 'tu-row-0', orderId: `ORD-${status}` }] : [],
      );
    }
  });

  it('a replay on the first send is noted (and logged); on a resend a replay is what is expected: no note', async () => {
    const first = await scriptedWorld([pubgRow(0)]);
    // On a first send, a replay settles a top-up only when it names every field of the purchase (issue 20).
    first.set(() => order({ orderId: 'ORD-R', idempotentReplay: true, game: 'pubg', packName: '60 UC', userId: '5123456789' }));
    expect(await sendRow(senderDeps(first.rt), row(first))).toBe('placed');
    expect(row(first).note).toMatch(/first send of this trxid with an existing order \(ORD-R, a replay\)/);
    expect(first.logs.filter((l) => l.level === 40)).toMatchObject([{ trxid: 'tu-row-0', orderId: 'ORD-R' }]);

    // A resend of a trxid this home derived: its replay is this row's order, whatever it names.
    const derived = `tu${'a'.repeat(30)}`;
    const resend = await inDoubt({}, [{ ...pubgRow(0), request: { ...pubgRow(0).request!, trxid: derived } }]);
    resend.set(() => order({ orderId: 'ORD-R', idempotentReplay: true }));
    expect(await sendRow(senderDeps(resend.rt), row(resend))).toBe('placed');
    expect(row(resend)).toMatchObject({ state: 'processing', orderId: 'ORD-R', note: null, doubtSince: null, doubtTries: 0 });
    expect(resend.logs.filter((l) => l.level === 40)).toEqual([]);

    // Under a trxid the file gave (it may have been used before), a resend's replay without a
    // creation time is of unknown origin: it must name every field (then it is taken, with a note),
    // or it goes to review (issue 20's adversarial review: yesterday's card completed a row).
    const given = await inDoubt();
    given.set(() => order({ orderId: 'ORD-R', idempotentReplay: true, game: 'pubg', packName: '60 UC', userId: '5123456789' }));
    expect(await sendRow(senderDeps(given.rt), row(given))).toBe('placed');
    expect(row(given).note).toMatch(/without saying when it was made.*If the trxid tu-row-0 was used before/);
    const sparse = await inDoubt();
    sparse.set(() => order({ orderId: 'ORD-R', idempotentReplay: true }));
    expect(await sendRow(senderDeps(sparse.rt), row(sparse))).toBe('review');
    expect(row(sparse)).toMatchObject({ state: 'review', orderId: null, rejectCode: null });
  });

  it('an order another row already holds goes to review, naming it; the other row is untouched', async () => {
    const w = await scriptedWorld([pubgRow(0), pubgRow(1)]);
    w.sql(1, `state = 'processing', order_id = 'ORD-1', attempts = 1`);
    w.set(() => ({ body: { orderCreated: true, orderId: 'ORD-1', status: 'Delivered' } }));
    expect(await sendRow(senderDeps(w.rt), row(w))).toBe('review');
    expect(row(w)).toMatchObject({ state: 'review', orderId: null, error: expect.stringMatching(/order ORD-1 \(completed\), which another row already holds/) });
    expect(row(w).lastAnswer).toContain('Delivered');
    expect(row(w, 1)).toMatchObject({ state: 'processing', orderId: 'ORD-1' });
    expect(w.logs.filter((l) => l.level === 50)).toMatchObject([{ trxid: 'tu-row-0', orderId: 'ORD-1' }]);
  });

  it('a store failure writing the answer is not turned into a review: it surfaces, and the row stays in flight (resent after a restart)', async () => {
    const w = await scriptedWorld([pubgRow(0)]);
    w.rt.db.exec(`CREATE TRIGGER no_answer BEFORE UPDATE OF order_id ON rows BEGIN SELECT RAISE(ABORT, 'disk I/O error'); END`);
    w.set(() => order());
    await expect(sendRow(senderDeps(w.rt), row(w))).rejects.toThrow(/disk I\/O error/);
    expect(row(w)).toMatchObject({ state: 'sending', orderId: null });
  });

  it('an order ends a pause for everyone, and says so once', async () => {
    const w = await scriptedWorld([pubgRow(0), pubgRow(1)]);
    w.set(() => order({ orderId: `ORD-${posts(w)}` }));
    const d = senderDeps(w.rt);
    d.pauses.pause('maintenance', 'MAINTENANCE', 'down for upgrades');
    expect(await sendRow(d, row(w, 0))).toBe('placed');
    expect(d.pauses.current).toBeNull();
    expect(await sendRow(d, row(w, 1))).toBe('placed');
    expect(w.logs.filter((l) => l.pause !== undefined)).toMatchObject([{ level: 30, pause: 'maintenance', code: 'MAINTENANCE' }]);
  });

  it('an order for another purchase: review, with the supplier\'s own status word and the mismatch logged', async () => {
    const w = await scriptedWorld([pubgRow(0)]);
    w.set(() => order({ orderId: 'ORD-X', status: 'Delivered', userId: '999' }));
    expect(await sendRow(senderDeps(w.rt), row(w))).toBe('review');
    expect(row(w).error).toMatch(/order ORD-X \(Delivered\).*userId: sent "5123456789", the order has "999".*trxid tu-row-0.*\(topup review\)$/);
    expect(w.logs.filter((l) => l.level === 50)).toMatchObject([{ trxid: 'tu-row-0', orderId: 'ORD-X', mismatch: [{ field: 'userId' }] }]);
  });
});

describe('a refusal', () => {
  const refuse = (code: string, error: string, status = 400): Answer => ({ status, body: { success: false, code, error } });

  it('of a first send is final: rejected, with the API\'s code and words', async () => {
    const w = await scriptedWorld([pubgRow(0)], { TOPUP_REQUEST_TIMEOUT_MS: '4000' });
    w.set(() => refuse('INVALID_PLAYER', 'Player not found'));
    const t = freeze();
    expect(await sendRow(senderDeps(w.rt), row(w))).toBe('rejected');
    expect(row(w)).toMatchObject({ state: 'rejected', rejectCode: 'INVALID_PLAYER', error: 'INVALID_PLAYER: Player not found', nextPollAt: t + 4_000 });
    expect(w.logs.filter((l) => l.level >= 30)).toMatchObject([{ level: 30, trxid: 'tu-row-0', code: 'INVALID_PLAYER', status: 400, reason: 'INVALID_PLAYER: Player not found' }]);
  });

  it('without a code: rejected with its text and no code', async () => {
    const w = await scriptedWorld([pubgRow(0)]);
    w.set(() => ({ status: 400, body: { success: false, error: 'This pack cannot be bought for that player right now.' } }));
    expect(await sendRow(senderDeps(w.rt), row(w))).toBe('rejected');
    expect(row(w)).toMatchObject({ state: 'rejected', rejectCode: null, error: 'This pack cannot be bought for that player right now.' });
  });

  it('of a resend proves nothing: the history check decides, once the earlier attempt cannot be in flight', async () => {
    const w = await inDoubt({ TOPUP_REQUEST_TIMEOUT_MS: '4000' });
    w.set(() => refuse('INVALID_PLAYER', 'Player not found'));
    const t = freeze();
    expect(await sendRow(senderDeps(w.rt), row(w))).toBe('verify');
    expect(row(w)).toMatchObject({ state: 'verifying', rejectCode: 'INVALID_PLAYER', nextPollAt: t + 4_000 });
    expect(w.logs.filter((l) => l.level >= 30)).toMatchObject([{ level: 40, trxid: 'tu-row-0', code: 'INVALID_PLAYER' }]);
  });

  it('403 FORBIDDEN on a first send: the trxid belongs to another account', async () => {
    const w = await scriptedWorld([pubgRow(0)]);
    w.set(() => refuse('FORBIDDEN', 'FORBIDDEN', 403));
    expect(await sendRow(senderDeps(w.rt), row(w))).toBe('rejected');
    expect(row(w)).toMatchObject({ state: 'rejected', error: 'FORBIDDEN: this trxid belongs to another account', rejectCode: 'FORBIDDEN' });
  });

  it('"trxid already used": never read as not charged; the history check looks for it after one request timeout', async () => {
    const w = await scriptedWorld([pubgRow(0)], { TOPUP_REQUEST_TIMEOUT_MS: '4000' });
    w.set(() => refuse('DUPLICATE_TRXID', 'Trxid already used'));
    const t = freeze();
    expect(await sendRow(senderDeps(w.rt), row(w))).toBe('verify');
    expect(row(w)).toMatchObject({ state: 'searching', rejectCode: TRXID_USED_CODE, error: 'DUPLICATE_TRXID: Trxid already used', nextPollAt: t + 4_000 });
    expect(w.logs.filter((l) => l.level === 40)).toMatchObject([{ trxid: 'tu-row-0', code: 'DUPLICATE_TRXID' }]);
  });

  it('a judged answer ends a maintenance pause, but not an account pause (only a working call ends that)', async () => {
    const w = await scriptedWorld([pubgRow(0), pubgRow(1)]);
    w.set(() => refuse('INVALID_PLAYER', 'Player not found'));
    const d = senderDeps(w.rt);
    d.pauses.pause('maintenance', 'MAINTENANCE', 'down');
    await sendRow(d, row(w, 0));
    expect(d.pauses.current).toBeNull();
    d.pauses.pause('account', 'INVALID_API_KEY', 'bad key');
    await sendRow(d, row(w, 1));
    expect(d.pauses.current).toMatchObject({ kind: 'account', code: 'INVALID_API_KEY' });
  });

  it('INSUFFICIENT BALANCE on a first send holds the row for a top-up; on a resend the history check decides', async () => {
    const w = await scriptedWorld([pubgRow(0)]);
    w.set(() => refuse('INSUFFICIENT_BALANCE', 'Insufficient balance'));
    const d = senderDeps(w.rt);
    expect(await sendRow(d, row(w))).toBe('hold-balance');
    expect(row(w)).toMatchObject({ state: 'pending', error: 'held: INSUFFICIENT BALANCE' });
    expect(d.events).toEqual(['short:b1:the API answered INSUFFICIENT BALANCE']);

    const r = await inDoubt();
    r.set(() => refuse('INSUFFICIENT_BALANCE', 'Insufficient balance'));
    const d2 = senderDeps(r.rt);
    expect(await sendRow(d2, row(r))).toBe('verify');
    expect(row(r)).toMatchObject({ state: 'verifying', rejectCode: 'INSUFFICIENT_BALANCE' });
    expect(d2.events).toEqual([]);
  });
});

describe('turned away before any order: pauses and rate limits', () => {
  it.each([
    { status: 401, code: 'INVALID_API_KEY', text: 'Invalid API key', result: 'paused-account', kind: 'account' },
    { status: 503, code: 'MAINTENANCE', text: 'Down for maintenance', result: 'paused-maintenance', kind: 'maintenance' },
  ] as const)('$status $code pauses ($kind) once, by its code; the rows wait, unsent and unblamed', async ({ status, code, text, result, kind }) => {
    const w = await scriptedWorld([pubgRow(0), pubgRow(1)]);
    w.set(() => ({ status, body: { success: false, code, error: text } }));
    const d = senderDeps(w.rt);
    const t = freeze();
    expect(await sendRow(d, row(w, 0))).toBe(result);
    expect(row(w, 0)).toMatchObject({ state: 'pending', nextTryAt: t, error: null, doubtTries: 0 });
    expect(d.pauses.current).toMatchObject({ kind, code, detail: `${code}: ${text}` });
    expect(await sendRow(d, row(w, 1))).toBe(result);
    expect(row(w, 1)).toMatchObject({ state: 'pending', error: null, doubtTries: 0 });
    expect(d.events).toEqual([`pause:${kind}:${code}:${code}: ${text}`]);
  });

  it('401 without a code pauses the account as "HTTP 401" and leaves the row in doubt', async () => {
    const w = await scriptedWorld([pubgRow(0)]);
    w.set(() => ({ status: 401, body: 'Unauthorized' }));
    const d = senderDeps(w.rt);
    expect(await sendRow(d, row(w))).toBe('paused-account');
    expect(d.pauses.current).toMatchObject({ kind: 'account', code: 'HTTP 401' });
    // A body that is not the API's (a proxy's page) proves nothing was turned away: the row is in doubt.
    expect(row(w)).toMatchObject({ state: 'resending', doubtTries: 1 });
    // The event (the log line, the notification, the console's recent errors) names the cause as
    // the stored pause does (ApiError.codeOrStatus); it said nothing ('') before issue 24.
    expect(d.events).toHaveLength(1);
    expect(d.events[0]).toMatch(/^pause:account:HTTP 401:/);
  });

  it('a redirect pauses the account, and leaves the row in doubt (the request may have been acted on)', async () => {
    const w = await scriptedWorld([pubgRow(0)]);
    w.set(() => ({ status: 302, body: '', headers: { location: 'https://elsewhere.example/orders' } }));
    const d = senderDeps(w.rt);
    expect(await sendRow(d, row(w))).toBe('paused-account');
    expect(row(w)).toMatchObject({ state: 'resending', doubtTries: 1 });
    expect(d.pauses.current).toMatchObject({ kind: 'account', code: 'HTTP 302' });
  });

  it('503 without a code pauses as "HTTP 503" and leaves the row in doubt', async () => {
    const w = await scriptedWorld([pubgRow(0)]);
    w.set(() => ({ status: 503, body: 'Service Unavailable' }));
    const d = senderDeps(w.rt);
    expect(await sendRow(d, row(w))).toBe('paused-maintenance');
    expect(row(w)).toMatchObject({ state: 'resending', doubtTries: 1 });
    expect(d.pauses.current).toMatchObject({ kind: 'maintenance', code: 'HTTP 503' });
    expect(d.events).toEqual([expect.stringMatching(/^pause:maintenance:HTTP 503:/)]);
  });

  it('429 RATE_LIMIT: the row waits Retry-After (1 s without one, capped), unsent and not in doubt', async () => {
    const cases: [headers: Record<string, string>, wait: number][] = [[{}, 1_000], [{ 'retry-after': '3' }, 3_000], [{ 'retry-after': '600' }, 5_000]];
    for (const [headers, wait] of cases) {
      const w = await scriptedWorld([pubgRow(0)], { TOPUP_RETRY_AFTER_MAX_MS: '5000' });
      w.set(() => ({ status: 429, body: { success: false, code: 'RATE_LIMIT', error: 'Too many requests' }, headers }));
      const before = Date.now();
      expect(await sendRow(senderDeps(w.rt), row(w))).toBe('retry');
      const after = Date.now();
      const r = row(w);
      expect(r).toMatchObject({ state: 'pending', doubtTries: 0, error: null });
      expect(r.nextTryAt).toBeGreaterThanOrEqual(before + wait);
      expect(r.nextTryAt).toBeLessThanOrEqual(after + wait);
    }
  });

  it('429 RATE_LIMIT on a resend: the doubt stays, the wait is not counted as an unanswered send', async () => {
    const w = await inDoubt();
    w.set(() => ({ status: 429, body: { success: false, code: 'RATE_LIMIT', error: 'Too many requests' }, headers: { 'retry-after': '2' } }));
    const before = Date.now();
    expect(await sendRow(senderDeps(w.rt), row(w))).toBe('retry');
    expect(row(w)).toMatchObject({ state: 'resending', doubtTries: 1 });
    expect(row(w).nextTryAt).toBeGreaterThanOrEqual(before + 2_000);
  });

  it('DUPLICATE_IN_FLIGHT: the API is still working on this trxid: in doubt, backed off, not counted', async () => {
    const w = await scriptedWorld([pubgRow(0)]);
    w.set(() => ({ status: 409, body: { success: false, code: 'DUPLICATE_IN_FLIGHT', error: 'Order is being processed' } }));
    vi.spyOn(Math, 'random').mockReturnValue(0);
    const t = freeze();
    expect(await sendRow(senderDeps(w.rt), row(w))).toBe('retry');
    expect(row(w)).toMatchObject({ state: 'resending', doubtTries: 0, nextTryAt: t + 500 });
    w.sql(0, 'attempts = 3');
    expect(await sendRow(senderDeps(w.rt), row(w))).toBe('retry');
    expect(row(w)).toMatchObject({ state: 'resending', doubtTries: 0, nextTryAt: t + 4_000 });
  });
});

describe('no definite answer: resent with the same trxid, backing off, until the history check takes over', () => {
  const proxy502: Answer = { status: 502, body: '<html>502 Bad Gateway</html>', headers: { 'content-type': 'text/html' } };

  it('each unanswered send is counted and backed off: 0.5 s, 1 s, 2 s … up to 30 s, plus up to a quarter of jitter', async () => {
    const cases: [attempts: number, random: number, wait: number][] = [
      [0, 0, 500], [0, 0.999, 624], [1, 0, 1_000], [3, 0, 4_000], [3, 0.5, 4_500], [6, 0, 30_000], [20, 0, 30_000], [20, 0.999, 37_492],
    ];
    for (const [attempts, random, wait] of cases) {
      const w = await scriptedWorld([pubgRow(0)]);
      w.set(() => proxy502);
      w.sql(0, 'attempts = ?', attempts);
      vi.spyOn(Math, 'random').mockReturnValue(random);
      const t = freeze();
      expect(await sendRow(senderDeps(w.rt), row(w))).toBe('retry');
      expect({ attempts, random, wait: row(w).nextTryAt - t }).toEqual({ attempts, random, wait });
      expect(row(w)).toMatchObject({ state: 'resending', doubtTries: 1, error: null, lastAnswer: expect.stringContaining('502 Bad Gateway') });
      vi.restoreAllMocks();
    }
  });

  it('the reason of each unanswered send is logged with the row and trxid (the row keeps no error while in doubt)', async () => {
    const w = await scriptedWorld([pubgRow(0)]);
    w.set(() => proxy502);
    await sendRow(senderDeps(w.rt), row(w));
    expect(linesOf(w, /no definite answer/)).toMatchObject([{ level: 40, batch: 'b1', line: 2, trxid: 'tu-row-0', status: 502, why: expect.stringContaining('HTTP 502') }]);
  });

  /** Row 0 in doubt since `sinceAgo` ms before the frozen now, after `tries` unanswered sends; one more is answered 502. */
  async function lastTry(sinceAgo: number, tries: number) {
    const w = await scriptedWorld([pubgRow(0)], { TOPUP_REVIEW_AFTER_MS: '60000', TOPUP_REQUEST_TIMEOUT_MS: '3000' });
    w.set(() => proxy502);
    const t = freeze();
    w.sql(0, `state = 'resending', attempts = ?, first_sent_at = ?, last_sent_at = ?, doubt_since = ?, doubt_tries = ?`, tries, t - sinceAgo, t - 1_000, t - sinceAgo, tries);
    return { w, t, result: await sendRow(senderDeps(w.rt), row(w)) };
  }

  it('in doubt for TOPUP_REVIEW_AFTER_MS over 5 unanswered sends: no more resends; history is looked at after 4 request timeouts', async () => {
    const { w, t, result } = await lastTry(60_000, 4);
    expect(result).toBe('verify');
    const since = new Date(t - 60_000).toISOString();
    expect(row(w)).toMatchObject({ state: 'searching', rejectCode: null, nextPollAt: t + 12_000, doubtTries: 5 });
    expect(row(w).error).toMatch(new RegExp(`since ${since.replace(/\./g, '\\.')} \\(5 sends unanswered, last: .*HTTP 502`));
    expect(w.logs.filter((l) => l.level === 50)).toMatchObject([{ trxid: 'tu-row-0', since, unanswered: 5, last: expect.stringContaining('HTTP 502') }]);
  });

  it('1 ms short of TOPUP_REVIEW_AFTER_MS: resent again', async () => {
    const { w, result } = await lastTry(59_999, 4);
    expect(result).toBe('retry');
    expect(row(w)).toMatchObject({ state: 'resending', doubtTries: 5 });
  });

  it('long in doubt but only 4 unanswered sends (resends were held back): resent again', async () => {
    const { w, result } = await lastTry(3_600_000, 3);
    expect(result).toBe('retry');
    expect(row(w)).toMatchObject({ state: 'resending', doubtTries: 4 });
  });

  it('an answer that comes after this process lost the batch\'s lease writes nothing', async () => {
    const w = await scriptedWorld([pubgRow(0)]);
    w.set(() => 'hang');
    const sent = sendRow(senderDeps(w.rt), row(w));
    await w.received(1, sent);
    w.rt.db.prepare(`UPDATE batches SET lease_until = 0, owner = 'another-process' WHERE id = 'b1'`).run();
    // The taker's lease made the row `resending` (the batches_taken_over trigger), its doubt from the
    // last send. The open request is cut (a reset): no definite answer, and the batch is not ours
    // any more: the late answer writes nothing (its doubt would count one more unanswered send).
    const taken = row(w);
    expect(taken).toMatchObject({ state: 'resending', doubtTries: 0 });
    w.cut();
    expect(await sent).toBe('retry');
    expect(row(w)).toMatchObject({ state: 'resending', doubtSince: taken.doubtSince, doubtTries: 0, nextTryAt: 0 });
  });
});
