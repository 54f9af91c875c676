/**
 * Failure bodies in the shapes suppliers send them (classify.ts readFailureBody), read in-process,
 * and the status/route rules of classifyFailure that the corpus replays only once each. Found by
 * npm run mutate: a key name a supplier uses ("msg", "error_code", "errors"), an envelope, or a
 * route rule could be dropped unseen.
 */
import { describe, expect, it } from 'vitest';
import { classifyFailure, parseRetryAfter, readFailureBody } from '../../src/api/classify.js';

const submit = { method: 'POST', path: '/orders' };

describe('readFailureBody', () => {
  it('the spec\'s shape, and nothing it does not say', () => {
    expect(readFailureBody({ success: false, code: 'INVALID_PID', error: 'Unknown pid' })).toStrictEqual({ success: false, code: 'INVALID_PID', error: 'Unknown pid' });
    expect(readFailureBody({ error: 'Unknown pid' })).toStrictEqual({ error: 'Unknown pid' });
    expect(readFailureBody({ orderCreated: false, status: 'failed', message: 'Refused' })).toStrictEqual({ error: 'Refused', orderCreated: false, status: 'failed' });
    expect(readFailureBody('<html>502</html>')).toBeUndefined();
    expect(readFailureBody(null)).toBeUndefined();
  });

  it('the other names of code and text: errorCode, error_code, msg, errorMessage', () => {
    expect(readFailureBody({ errorCode: 'IP_NOT_ALLOWED', msg: 'IP not allowed' })).toStrictEqual({ code: 'IP_NOT_ALLOWED', error: 'IP not allowed' });
    expect(readFailureBody({ error_code: 'ACCOUNT_BANNED', errorMessage: 'Banned' })).toStrictEqual({ code: 'ACCOUNT_BANNED', error: 'Banned' });
  });

  it('an HTTP-ish number in code is the envelope\'s, not an API code; a supplier\'s own numeric code is kept', () => {
    expect(readFailureBody({ code: 400, message: 'Bad request' })).toStrictEqual({ error: 'Bad request' });
    expect(readFailureBody({ code: ' 200 ', message: 'x' })).toStrictEqual({ error: 'x' });
    expect(readFailureBody({ code: 1001, message: 'Saldo kurang' })).toStrictEqual({ code: '1001', error: 'Saldo kurang' });
  });

  it('error as an object: {code, message}, {type, detail}, {msg}', () => {
    expect(readFailureBody({ success: false, error: { code: 'ACCOUNT_BANNED', message: 'Banned' } })).toStrictEqual({ success: false, code: 'ACCOUNT_BANNED', error: 'Banned' });
    expect(readFailureBody({ error: { type: 'rate_limit', detail: 'Slow down' } })).toStrictEqual({ code: 'rate_limit', error: 'Slow down' });
    expect(readFailureBody({ error: { msg: 'Maintenance' } })).toStrictEqual({ error: 'Maintenance' });
  });

  it('inside an envelope: `data` holds the failure; what it lacks, the envelope says', () => {
    expect(readFailureBody({ status: false, data: { code: 'IP_NOT_ALLOWED', message: 'IP not allowed' } })).toMatchObject({ code: 'IP_NOT_ALLOWED', error: 'IP not allowed', success: false });
    expect(readFailureBody({ status: false, msg: 'Saldo tidak cukup', errorCode: 'E_BALANCE', data: { success: false } })).toMatchObject({ code: 'E_BALANCE', error: 'Saldo tidak cukup', success: false });
    // The envelope's own fields are not read twice when there is no envelope.
    expect(readFailureBody({ success: false, message: 'Refused', data: { orderCreated: true, status: 'processing' } })).toStrictEqual({ success: false, error: 'Refused', orderCreated: true, status: 'processing' });
  });

  it('a validation bag: texts of every field, of a list, of {code, message} items, a few levels deep', () => {
    const laravel = { message: 'The given data was invalid.', errors: { trxid: ['The trxid has already been taken.'], userId: ['The user id field is required.'], ok: false } };
    expect(readFailureBody(laravel)).toStrictEqual({ error: 'The given data was invalid.', details: 'The trxid has already been taken.; The user id field is required.' });
    expect(readFailureBody({ errors: [{ code: 'E1', message: 'first' }, { message: 'second', field: 'trxid' }] })?.details).toBe('E1; first; second');
    expect(readFailureBody({ errors: { a: { b: { c: 'three deep' } } } })?.details).toBe('three deep');
    expect(readFailureBody({ errors: { a: { b: { c: { d: 'four deep' } } } } })).toStrictEqual({});
    expect(readFailureBody({ errors: {} })).toStrictEqual({});
    expect(readFailureBody({ errors: [[['three deep']]] })?.details).toBe('three deep');
    expect(readFailureBody({ errors: [[[['four deep']]]] })).toStrictEqual({});
    // An item with a code or a message is read for those two only, not for its other fields.
    expect(readFailureBody({ errors: [{ code: 'E1', field: 'trxid' }] })?.details).toBe('E1');
  });

  it('a bag\'s text is part of the answer\'s text (classification and apiError)', () => {
    const bag = (error?: string) => classifyFailure(422, { success: false, ...(error ? { error } : {}), errors: { trxid: ['The trxid has already been taken.'] } }, submit);
    expect(bag('The given data was invalid.')).toMatchObject({ classification: 'duplicate-trxid', apiError: 'The given data was invalid. (The trxid has already been taken.)' });
    expect(bag()).toMatchObject({ classification: 'duplicate-trxid', apiError: '(The trxid has already been taken.)' });
  });

  it('a code with no text at all is read as the whole answer (DUPLICATE alone: the trxid was used)', () => {
    expect(classifyFailure(400, { success: false, code: 'DUPLICATE' }, submit)).toMatchObject({ classification: 'duplicate-trxid', mayExist: true });
  });

  it('an error text with a line break after it still reads as a code', () => {
    expect(classifyFailure(400, { success: false, error: 'IP NOT ALLOWED\n' }, submit)).toMatchObject({ apiCode: 'IP_NOT_ALLOWED', classification: 'account' });
  });
});

describe('classifyFailure: status and route rules', () => {
  it('any 3xx (never followed) is the wrong URL: account, and a POST may have made an order', () => {
    for (const status of [300, 301, 302, 307, 308]) expect(classifyFailure(status, undefined, submit), String(status)).toMatchObject({ classification: 'account', mayExist: true });
    expect(classifyFailure(299, { success: false, error: 'x' }, submit).classification).toBe('rejected');
  });

  it('404 and 501: not-found on GET /orders/:id and /history; elsewhere the URL is wrong (and a POST may have made an order)', () => {
    expect(classifyFailure(404, { error: 'x' }, { method: 'GET', path: '/orders/ORD-1' }).classification).toBe('not-found');
    expect(classifyFailure(501, { error: 'x' }, { method: 'GET', path: '/history?page=1' }).classification).toBe('not-found');
    expect(classifyFailure(404, { error: 'x' }, { method: 'GET', path: '/balance' })).toMatchObject({ classification: 'account', mayExist: false });
    expect(classifyFailure(404, { error: 'Not Found' }, submit)).toMatchObject({ classification: 'account', mayExist: true });
  });

  it('a "not found" text on GET /history is an empty page, not "no history here"', () => {
    expect(classifyFailure(200, { success: false, error: 'Data not found' }, { method: 'GET', path: '/history' }).classification).toBe('ambiguous');
  });

  it('a 400 refusal of a GET is a refusal (rejected); other refusals of a GET are ambiguous', () => {
    expect(classifyFailure(400, { success: false, error: 'Invalid order id format' }, { method: 'GET', path: '/orders/x' }).classification).toBe('rejected');
    expect(classifyFailure(422, { success: false, error: 'Invalid order id format' }, { method: 'GET', path: '/orders/x' }).classification).toBe('ambiguous');
  });

  it('maintenance in a refusal\'s text refuses that row; only a 503 saying it pauses every order', () => {
    expect(classifyFailure(400, { success: false, error: 'Game server under maintenance' }, submit)).toMatchObject({ classification: 'rejected', mayExist: false });
    expect(classifyFailure(503, { success: false, error: 'Game server under maintenance' }, submit)).toMatchObject({ classification: 'paused' });
  });

  it('a body that cannot be read leaves a POST in doubt and a GET ambiguous', () => {
    expect(classifyFailure(500, undefined, submit)).toMatchObject({ classification: 'ambiguous', mayExist: true, body: undefined });
    expect(classifyFailure(400, '<html>', submit, false)).toMatchObject({ classification: 'ambiguous', mayExist: true });
  });
});

describe('parseRetryAfter, beyond whole seconds', () => {
  it('fractions of a second, rounded up; a date with spaces around it', () => {
    const now = Date.UTC(2025, 0, 1, 12, 0, 0);
    expect(parseRetryAfter('1.5', now)).toBe(1500);
    expect(parseRetryAfter('0.25', now)).toBe(250);
    expect(parseRetryAfter(' Wed, 01 Jan 2025 12:00:30 GMT ', now)).toBe(30_000);
    expect(parseRetryAfter('1.', now)).toBeUndefined();
  });
});
