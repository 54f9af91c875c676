/**
 * The refusal texts classify.ts reads, beyond the few the corpus replays over HTTP: phrasings
 * real suppliers use for "trxid already used", "balance too low" and "still being processed",
 * and the look-alikes that must stay plain refusals (a pattern that matched "trxid unused" or
 * "NOT ENOUGH STOCK" would hold batches or send rows to review for nothing).
 */
import { describe, expect, it } from 'vitest';
import { classifyFailure, isBalanceRefusal } from '../../src/api/classify.js';

const submit = { method: 'POST', path: '/orders' };
const refused = (error: string) => classifyFailure(400, { success: false, error }, submit);

describe('refusal texts on POST /orders', () => {
  it.each([
    'trxid already used', 'Trxid telah digunakan', 'trxid must be unique', 'Transaction ID has been used', 'idtrx already exist',
    'Reference already exists', 'Duplicate', 'DUPLICATE_REQUEST', 'Transaksi sudah ada', 'The trx id has already been taken.',
    "Duplicate entry 'SHOP-1' for key 'trxid'", 'order_id already exists', 'Reused trxid', 'Order has already been placed', 'Transaction already exists',
  ])('"%s" → duplicate-trxid, the order may exist', (text) => {
    expect(refused(text)).toMatchObject({ classification: 'duplicate-trxid', mayExist: true });
  });

  it.each([
    'Insufficient balance', 'INSUFFICIENT_FUNDS', 'Balance too low', 'Low balance', 'Saldo kurang', 'Saldo anda tidak cukup',
    'Not enough credits', 'insufficient credit', 'Balance is not sufficient', 'Insufficient wallet balance',
  ])('"%s" → insufficient-balance, nothing created', (text) => {
    expect(refused(text)).toMatchObject({ classification: 'insufficient-balance', mayExist: false });
  });

  it.each(['Order is being processed', 'Still processing', 'Transaction in process', 'Order in progress', 'Pesanan masih diproses'])(
    '"%s" → ambiguous, the order may exist (resent on the doubt clock)',
    (text) => expect(refused(text)).toMatchObject({ classification: 'ambiguous', mayExist: true }),
  );

  it.each([
    'INVALID TRXID', 'trxid is required', 'trxid unused', 'INVALID REQUEST', 'UNKNOWN PID', 'QUANTITY EXCEEDS MAX', 'Stock not enough',
    'NOT ENOUGH STOCK', 'Order failed: player not found', 'Processing failed', 'Order ID format invalid', 'The order id field is required.',
    'Balance check failed', 'Process failed', 'Daily order limit already reached', 'Order already cancelled', 'Transaction failed, already refunded',
  ])('"%s" → rejected (a plain refusal, nothing created)', (text) => {
    expect(refused(text)).toMatchObject({ classification: 'rejected', mayExist: false });
  });
});

describe('stored refusals (the history check decides "held for balance" on them)', () => {
  it('reads codes and texts in any case and punctuation', () => {
    for (const t of ['INSUFFICIENT_BALANCE', 'insufficient_funds', 'Insufficient account balance.', 'Saldo tidak mencukupi']) expect(isBalanceRefusal(t), t).toBe(true);
    for (const t of ['INVALID PLAYER', 'NOT ENOUGH STOCK', null, '']) expect(isBalanceRefusal(t), String(t)).toBe(false);
  });
});

describe('GET /orders/:id texts', () => {
  const get = (error: string) => classifyFailure(200, { success: false, error }, { method: 'GET', path: '/orders/X' }).classification;
  it('"Order not found." and its kin are not-found; a cancelled order\'s reason is not', () => {
    for (const t of ['Order not found.', 'Data tidak ditemukan', 'Transaction does not exist', 'Not found']) expect(get(t), t).toBe('not-found');
    for (const t of ['USER NOT FOUND', 'Player ID not found', 'INVALID PLAYER']) expect(get(t), t).not.toBe('not-found');
  });
});
