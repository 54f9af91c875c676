/**
 * Every code and text alias classify.ts names, as suppliers send them, on a status where the alias
 * is what decides (a 400 or a 200 with success:false: on a 401/403/503 the status alone would
 * decide), and the longer codes that only look like one of them. Found by npm run mutate: an
 * alias removed from its list, or a pattern's anchor dropped, went unseen because the corpus
 * (corpus.test.ts) replays one answer per kind, not every alias.
 */
import { describe, expect, it } from 'vitest';
import { classifyFailure, isPlayerIdFailure, normaliseCode, wordsOf } from '../../src/api/classify.js';

const submit = { method: 'POST', path: '/orders' };
const poll = { method: 'GET', path: '/orders/ORD-1' };
const refusal = (body: Record<string, unknown>, status = 400, route = submit) => classifyFailure(status, { success: false, ...body }, route);

describe('account codes stop sending whatever the status', () => {
  it.each([
    'MISSING_API_KEY', 'INVALID_API_KEY_FORMAT', 'INVALID_API_KEY', 'API_DISABLED', 'API_DISABLED_BY_ADMIN',
    'API_NOT_ELIGIBLE', 'ACCOUNT_BANNED', 'ACCOUNT_RESTRICTED', 'IP_ALLOWLIST_REQUIRED', 'IP_NOT_ALLOWED',
  ])('%s on a 400 and on a 200 with success:false → account, nothing created', (code) => {
    expect(refusal({ code, error: 'Request refused' })).toMatchObject({ classification: 'account', mayExist: false, apiCode: code });
    expect(refusal({ code, error: 'Request refused' }, 200)).toMatchObject({ classification: 'account', mayExist: false });
  });

  it('written as words, in the error text alone ("IP not allowed", "account banned")', () => {
    expect(refusal({ error: 'IP not allowed' })).toMatchObject({ classification: 'account', apiCode: 'IP_NOT_ALLOWED' });
    expect(refusal({ error: 'account banned' })).toMatchObject({ classification: 'account', apiCode: 'ACCOUNT_BANNED' });
  });

  it('a longer code that only starts like one is not an account stop', () => {
    // A plain refusal of one row must not stop the whole account.
    expect(refusal({ code: 'INVALID_API_KEY_NAME_IN_NOTE', error: 'bad note' }).classification).toBe('rejected');
    expect(refusal({ code: 'IP_NOT_ALLOWED_FOR_PRODUCT_X', error: 'product limited' }).classification).toBe('rejected');
  });
});

describe('pause and rate codes', () => {
  it.each(['MAINTENANCE', 'API_ORDER_DISABLED'])('%s on a 400 or a 200 → paused, nothing created', (code) => {
    expect(refusal({ code, error: 'Try later' })).toMatchObject({ classification: 'paused', mayExist: false });
    expect(refusal({ code, error: 'Try later' }, 200)).toMatchObject({ classification: 'paused', mayExist: false });
  });

  it('a 503 pauses orders; only a documented pause code says nothing was created, any other leaves the order in doubt (issue 29)', () => {
    expect(refusal({ error: 'Server under maintenance until 10:00' }, 503)).toMatchObject({ classification: 'paused', mayExist: true });
    expect(classifyFailure(503, { success: false, error: 'Service unavailable, please wait 5 minutes' }, submit)).toMatchObject({ classification: 'paused', mayExist: true });
    expect(classifyFailure(503, { success: false, code: 'SOMETHING_ELSE', error: 'x' }, submit)).toMatchObject({ classification: 'paused', mayExist: true, holdCalls: false });
    expect(classifyFailure(503, { status: 503, error: 'Service Unavailable' }, submit)).toMatchObject({ classification: 'paused', mayExist: true });
  });

  it.each(['RATE_LIMIT', 'TOO_MANY_REQUESTS', 'RATE_LIMIT_UNAVAILABLE'])('%s on a 503 → retry-later, every call held when it names a Retry-After', (code) => {
    expect(refusal({ code, error: 'slow down' }, 503)).toMatchObject({ classification: 'retry-later', mayExist: false, holdCalls: 'with-retry-after' });
    expect(refusal({ code, error: 'slow down' }, 429)).toMatchObject({ classification: 'retry-later', mayExist: false, holdCalls: 'always' });
  });

  it('a rate code on a 400 is a refusal of that request, and holds no calls', () => {
    expect(refusal({ code: 'RATE_LIMIT', error: 'limit' })).toMatchObject({ classification: 'rejected', holdCalls: false });
  });

  it('any 429 holds every call, except DUPLICATE_IN_FLIGHT, which is about one trxid (and may exist)', () => {
    expect(refusal({ code: 'SOMETHING', error: 'x' }, 429)).toMatchObject({ classification: 'retry-later', mayExist: false, holdCalls: 'always' });
    expect(refusal({ code: 'DUPLICATE_IN_FLIGHT', error: 'x' }, 429)).toMatchObject({ classification: 'retry-later', mayExist: true, holdCalls: false });
    expect(refusal({ code: 'duplicate in flight', error: 'x' }, 409)).toMatchObject({ classification: 'retry-later', mayExist: true });
    expect(classifyFailure(429, 'not json', submit, false)).toMatchObject({ classification: 'retry-later', mayExist: true, holdCalls: 'always' });
  });
});

describe('a cancelled order\'s reason that blames the player id', () => {
  it.each([
    'INVALID PLAYER', 'Invalid user', 'INVALID UID', 'Invalid UserID', 'INVALID_USER_ID', 'Invalid Player ID', 'invalid playerid',
    'Invalid Game ID', 'Invalid GameID', 'Invalid Account ID', 'INVALID ACCOUNTID', 'Player not found', 'USER NOT FOUND', 'UID not found',
    'User ID not found', 'Account not found', 'account-id-not-found', 'Wrong player', 'wrong user', 'Wrong UID',
  ])('"%s"', (reason) => expect(isPlayerIdFailure(reason)).toBe(true));

  it.each(['Product not found', 'INVALID PRODUCT', 'Supplier failed', 'Out of stock', 'Invalid game', 'Wrong server'])('not "%s"', (reason) => {
    expect(isPlayerIdFailure(reason)).toBe(false);
  });

  it('nothing at all is not a player-id failure', () => {
    expect(isPlayerIdFailure(null)).toBe(false);
    expect(isPlayerIdFailure(undefined)).toBe(false);
    expect(isPlayerIdFailure('')).toBe(false);
  });
});

describe('POST /orders: "still being processed" (a supplier\'s own DUPLICATE_IN_FLIGHT) → ambiguous, may exist', () => {
  it.each([
    'IN FLIGHT', 'Request in flight', 'Order is being processed', 'Orders are being processed', 'Order is still processing',
    'Currently processing', 'Still in progress', 'Order is currently being processed', 'Order in progress', 'Order is in progress',
    'Transaction in process', 'Transaksi sedang diproses', 'Pesanan masih proses', 'Sedang proses',
  ])('"%s"', (text) => expect(refusal({ error: text })).toMatchObject({ classification: 'ambiguous', mayExist: true }));

  it.each(['Processing failed', 'Order processed', 'PROCESSING_FEE_REQUIRED', 'INFLIGHT_MODE'])('but not "%s"', (text) => {
    expect(refusal({ error: text })).toMatchObject({ classification: 'rejected', mayExist: false });
  });

  it('the same words on GET /orders/:id are not a sign of a new order', () => {
    expect(refusal({ error: 'Order is being processed' }, 200, poll).classification).toBe('ambiguous');
    expect(refusal({ error: 'Order is being processed' }, 200, poll).mayExist).toBe(false);
  });
});

describe('GET /orders/:id: the order itself not found → not-found; anything longer is not', () => {
  it.each([
    'Order ID not found', 'Invoice not found', 'Record does not exist', 'Pesanan tidak ditemukan', 'Order is not found',
    'Transaksi tidak ditemukan', 'Order not exists', 'Order not exist', 'No such order', 'Unknown order', 'Unknown order id',
    'UNKNOWN_ORDERID', 'NOT_FOUND', 'order_id_not_found',
  ])('"%s"', (text) => expect(refusal({ error: text }, 200, poll).classification).toBe('not-found'));

  it('the code ORDER_NOT_FOUND, on any route read with GET', () => {
    expect(refusal({ code: 'ORDER_NOT_FOUND', error: 'x' }, 200, { method: 'GET', path: '/history' }).classification).toBe('not-found');
  });

  it.each(['Player not found', 'Product not found', 'NOT_FOUND_HANDLER_ERROR', 'PREORDER_NOT_FOUNDATION', 'Reorder not found', 'Metadata not found'])(
    'not "%s"',
    (text) => expect(refusal({ error: text }, 200, poll).classification).not.toBe('not-found'),
  );
});

describe('the forms codes and texts are read in', () => {
  it('normaliseCode: case, spaces, hyphens and underscores in runs become one _', () => {
    expect(normaliseCode('  Too many   requests ')).toBe('TOO_MANY_REQUESTS');
    expect(normaliseCode('ip-not_allowed')).toBe('IP_NOT_ALLOWED');
    expect(normaliseCode('a - b')).toBe('A_B');
    expect(normaliseCode('   ')).toBeUndefined();
    expect(normaliseCode(undefined)).toBeUndefined();
  });

  it('wordsOf: punctuation is a word break, none at either end', () => {
    expect(wordsOf('Trxid: already used.')).toBe('TRXID_ALREADY_USED');
    expect(wordsOf("  'Duplicate entry' -- ")).toBe('DUPLICATE_ENTRY');
    expect(wordsOf(undefined)).toBe('');
  });

  it('an error text is taken for a code only when it reads as one (letters, spaces, 3 to 40)', () => {
    expect(refusal({ error: 'IP NOT ALLOWED' }).apiCode).toBe('IP_NOT_ALLOWED');
    expect(refusal({ error: 'IP' }).apiCode).toBeUndefined();
    expect(refusal({ error: 'Your IP 10.0.0.1 is not allowed' }).apiCode).toBeUndefined();
    expect(refusal({ error: 'x'.repeat(41) }).apiCode).toBeUndefined();
    expect(refusal({ error: 'x'.repeat(40) }).apiCode).toBe('X'.repeat(40));
    expect(refusal({ error: 'abc' }).apiCode).toBe('ABC');
    // The code field wins over a text that reads as one.
    expect(refusal({ code: 'INVALID_PID', error: 'IP NOT ALLOWED' })).toMatchObject({ apiCode: 'INVALID_PID', classification: 'rejected' });
  });
});
