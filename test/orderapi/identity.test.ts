/**
 * Issue 29: identities at the order API's door, against the real daemon (dist/cli.js), its real
 * order desk and store, and the in-process sandbox's ledger.
 *  - ÖD-9 then öd-9: one trxid (the fold of src/kernel/identity.ts), so the second is a 409 as
 *    SHOP-7 / shop-7 always was; one charge. (Before: 202, 202, two charges.)
 *  - "LS-\ud800" (valid JSON, a lone surrogate): 422 naming trxid, nothing stored. (Before: stored,
 *    then 500 building the Location header, 500 again on every resend, and the row pending for ever.)
 *  - every identity field and meta: well-formed text or a 422 naming the field.
 */
import { describe, expect, it } from 'vitest';
import { cliEnv, inProcessSandbox, tempHome, waitFor } from '../e2e/harness.js';
import { start as startWithConsole } from '../e2e/daemon.js';
import { releaseAfterEach } from '../e2e/release.js';
import { conforms } from './conformance.js';

releaseAfterEach();

const TOKEN = 'identity-test-order-api-token-0123456789';

async function start() {
  const home = tempHome('topup-orderapi-ident-');
  const sb = await inProcessSandbox();
  const env = cliEnv(home, sb, { TOPUP_ORDER_API_TOKEN: TOKEN, TOPUP_CONSOLE: '127.0.0.1:0' });
  let doc: Record<string, any> = {};
  const d = await startWithConsole(env, { check: async (method, url, res, text) => conforms(doc, method, url, res, text) });
  doc = (await (await fetch(`${d.url}/api/v1/openapi.json`)).json()) as Record<string, any>;
  const call = (method: string, path: string, body?: string) => d.call(method, path, { body });
  const daemon = d.daemon;
  return { sb, daemon, call, doc };
}

describe('identities at the order API', () => {
  it('ÖD-9 then öd-9 is one trxid: the second is 409, one charge', async () => {
    const { sb, call } = await start();
    const a = await call('POST', '/api/v1/orders', JSON.stringify({ trxid: 'ÖD-9', pid: 'PUBG-60', userId: '5123456701' }));
    expect(a.status, a.text).toBe(202);
    const b = await call('POST', '/api/v1/orders', JSON.stringify({ trxid: 'öd-9', pid: 'PUBG-60', userId: '5123456701' }));
    expect(b.status, b.text).toBe(409);
    expect(['TRXID_CONFLICT', 'TRXID_USED']).toContain(b.json.code);
    // The same trxid in full-width forms is the same trxid too.
    const c = await call('POST', '/api/v1/orders', JSON.stringify({ trxid: 'ＯＤ-9'.replace('Ｏ', 'Ö'), pid: 'PUBG-60', userId: '5123456701' }));
    expect(c.status, c.text).toBe(409);
    await waitFor('the order completed', async () => (await call('GET', `/api/v1/orders/${encodeURIComponent('ÖD-9')}`)).json?.status === 'completed', 30_000, 100);
    // Looked up in any spelling: the one order.
    const read = await call('GET', `/api/v1/orders/${encodeURIComponent('öd-9')}`);
    expect(read.json).toMatchObject({ trxid: 'ÖD-9', status: 'completed' });
    expect(sb.admin.ledger().orders.map((o) => o.trxid)).toEqual(['ÖD-9']);
  });

  it('a trxid with a lone surrogate is 422 naming trxid, and nothing is stored: the next good order is answered and bought', async () => {
    const { sb, call } = await start();
    const body = JSON.stringify({ trxid: 'LS-\ud800', pid: 'PUBG-60', userId: '5123456702' });
    expect(body).toContain('\\ud800'); // valid JSON: the surrogate is escaped
    for (let i = 0; i < 2; i++) {
      const r = await call('POST', '/api/v1/orders', body);
      expect(r.status, r.text).toBe(422);
      expect(r.json.code).toBe('INVALID_ORDER');
      expect(r.json.errors).toEqual([{ field: 'trxid', reason: expect.stringMatching(/not well-formed text/) }]);
    }
    const cr = await call('POST', '/api/v1/orders', JSON.stringify({ trxid: 'CR\r1', pid: 'PUBG-60', userId: '5123456702' }));
    expect(cr.status, cr.text).toBe(422);
    expect(cr.json.errors.map((e: any) => e.field)).toEqual(['trxid']);
    const ok = await call('POST', '/api/v1/orders', JSON.stringify({ trxid: 'LS-1', pid: 'PUBG-60', userId: '5123456702' }));
    expect(ok.status, ok.text).toBe(202);
    await waitFor('the order completed', async () => (await call('GET', '/api/v1/orders/LS-1')).json?.status === 'completed', 30_000, 100);
    expect(sb.admin.ledger().orders.map((o) => o.trxid)).toEqual(['LS-1']);
  });

  it('every identity field and meta must be well-formed text: 422 naming each field', async () => {
    const { call, doc } = await start();
    const r = await call('POST', '/api/v1/orders', JSON.stringify({ trxid: 'WF-1', pid: 'PUBG-60\udc00', userId: '51234\ud83d', zoneId: '\udfff1', account: 'main\ud800', meta: { note: 'x\ud800', ['k\udc00']: 1 } }));
    expect(r.status, r.text).toBe(422);
    expect((r.json.errors as { field: string }[]).map((e) => e.field).sort()).toEqual(['account', 'meta', 'pid', 'userId', 'zoneId']);
    // The published schema's trxid is the rule the server applies (one constant).
    const trxid = doc.components.schemas.OrderInput.properties.trxid;
    expect(trxid.maxLength).toBe(100);
    expect(new RegExp(trxid.pattern, 'u').test('shop-A-1001')).toBe(true);
    expect(new RegExp(trxid.pattern, 'u').test('LS-\ud800')).toBe(false);
    expect(new RegExp(trxid.pattern, 'u').test('CR\r1')).toBe(false);
  });
});
