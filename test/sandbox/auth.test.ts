import { describe, expect, it } from 'vitest';
import type { AccountState } from '../../src/sandbox/index.js';
import { admin, call, get, KEY, start, trx } from './helpers.js';

describe('§5 authentication', () => {
  it('§5.1 X-API-Key and Authorization: Bearer both authenticate', async () => {
    const sb = await start();
    expect((await get(sb, '/balance')).status).toBe(200);
    const r = await call(sb, 'GET', '/balance', undefined, { key: null, headers: { authorization: `Bearer ${KEY}` } });
    expect(r.status).toBe(200);
  });

  it('§5 table: 401 MISSING_API_KEY when neither header is present', async () => {
    const sb = await start();
    expect(await get(sb, '/balance', null))
      .toMatchObject({ status: 401, body: { success: false, code: 'MISSING_API_KEY', error: 'MISSING_API_KEY' } });
  });

  it('§5 table: 401 INVALID_API_KEY_FORMAT for a malformed key or a non-Bearer Authorization', async () => {
    const sb = await start();
    for (const k of ['short', 'has space in it', 'x'.repeat(257), 'bad/char/key']) {
      expect((await get(sb, '/balance', k)).body).toMatchObject({ success: false, code: 'INVALID_API_KEY_FORMAT' });
    }
    const basic = await call(sb, 'GET', '/balance', undefined, { key: null, headers: { authorization: 'Basic abcdefghij' } });
    expect(basic).toMatchObject({ status: 401, body: { code: 'INVALID_API_KEY_FORMAT' } });
  });

  it('§5 table: 401 INVALID_API_KEY for a well-formed unknown key', async () => {
    const sb = await start();
    expect(await get(sb, '/balance', 'unknown-key-123'))
      .toMatchObject({ status: 401, body: { success: false, code: 'INVALID_API_KEY', error: 'INVALID_API_KEY' } });
  });

  it('§5 table: 401 INVALID JSON (no code) when a POST body is not JSON', async () => {
    const sb = await start();
    for (const raw of ['{not json', '']) {
      const r = await call(sb, 'POST', '/orders', undefined, { raw });
      expect(r.status).toBe(401);
      expect(r.body).toEqual({ success: false, error: 'INVALID JSON' });
    }
  });

  const states: [AccountState, string][] = [
    ['api_disabled', 'API_DISABLED'], ['disabled_by_admin', 'API_DISABLED_BY_ADMIN'], ['not_eligible', 'API_NOT_ELIGIBLE'],
    ['banned', 'ACCOUNT_BANNED'], ['restricted', 'ACCOUNT_RESTRICTED'],
  ];
  for (const [state, code] of states) {
    it(`§5 table: 403 ${code} for an account in state ${state}`, async () => {
      const sb = await start({ accounts: [{ apiKey: 'state-key-01', state }] });
      const r = await get(sb, '/balance', 'state-key-01');
      expect(r).toMatchObject({ status: 403, body: { success: false, code, error: code } });
      expect((await get(sb, '/balance')).status).toBe(200); // the other account is unaffected
    });
  }

  it('§5 table: an account state set through the admin takes effect at once, and can be undone', async () => {
    const sb = await start();
    expect((await admin(sb, 'POST', 'account', { state: 'banned' })).status).toBe(200);
    expect((await get(sb, '/services')).body.code).toBe('ACCOUNT_BANNED');
    sb.admin.setAccount({ state: 'active' });
    expect((await get(sb, '/services')).status).toBe(200);
  });

  it('§5.2 IP allowlist: empty list → IP_ALLOWLIST_REQUIRED, caller not listed → IP_NOT_ALLOWED, listed → allowed', async () => {
    const sb = await start({ accounts: [
      { apiKey: 'ip-key-empty', ipAllowlist: [] },
      { apiKey: 'ip-key-other', ipAllowlist: ['10.1.2.3'] },
      { apiKey: 'ip-key-local', ipAllowlist: ['10.1.2.3', '127.0.0.1'] },
    ] });
    expect(await get(sb, '/balance', 'ip-key-empty')).toMatchObject({ status: 403, body: { code: 'IP_ALLOWLIST_REQUIRED' } });
    expect(await get(sb, '/balance', 'ip-key-other')).toMatchObject({ status: 403, body: { code: 'IP_NOT_ALLOWED' } });
    expect((await get(sb, '/balance', 'ip-key-local')).status).toBe(200);
  });

  it('§5 order of checks: the key is checked before the body (bad key + bad JSON → 401 key code)', async () => {
    const sb = await start();
    const r = await call(sb, 'POST', '/orders', undefined, { key: 'unknown-key-123', raw: '{' });
    expect(r.body.code).toBe('INVALID_API_KEY');
    const placed = await call(sb, 'POST', '/orders', { pid: 'PUBG-60', trxid: trx(), userId: '51234567' }, { key: null });
    expect(placed.body.code).toBe('MISSING_API_KEY');
    expect(sb.admin.ledger().orders).toHaveLength(0);
  });

  it('sandbox admin routes need X-Sandbox-Admin and never expose the API key', async () => {
    const sb = await start();
    expect((await admin(sb, 'GET', 'ledger', undefined, 'wrong')).status).toBe(403);
    const ok = await admin(sb, 'GET', 'ledger');
    expect(ok.status).toBe(200);
    expect(JSON.stringify(ok.body)).not.toContain(KEY);
    expect(Object.keys(ok.body.balances)).toHaveLength(1);
    expect(Object.keys(ok.body.balances)[0]).toMatch(/^[0-9a-f]{12}$/);
  });
});
