/**
 * Issue 30, item 8: wrong console tokens are limited per caller (client address) and in total.
 * Each wrong token cost 0.5 s, but nothing serialised them: 40 guesses sent in parallel were all
 * answered in about 0.7 s. Now every token check waits its turn in one line, a wrong one holding
 * it for 0.5 s; 5 wrong tokens from one address lock that address out, 20 from all addresses
 * together lock every token check out (15 minutes): wrong tokens are then refused at once (429,
 * Retry-After) and, since trial s36 D8, the right one is still admitted. Measured here with guesses sent in parallel, over real HTTP to a real daemon,
 * from several loopback addresses (127.0.0.x: Linux answers the whole 127/8).
 */
import { request } from 'node:http';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { CALLER_LIMIT, TOTAL_LIMIT, WRONG_TOKEN_DELAY_MS } from '../../src/console/auth.js';
import { releaseAfterEach } from '../e2e/release.js';
import { Client, startConsoleDaemon } from './helpers.js';

releaseAfterEach();

const TOKEN = 'throttle-console-token-0123456789abcdef';

function audit(home: { jobs: string }): { action: string; outcome: string; address: string | null; detail: string | null }[] {
  const db = new Database(join(home.jobs, 'topup.db'), { readonly: true, fileMustExist: true });
  try {
    return db.prepare('SELECT action, outcome, address, detail FROM audit ORDER BY id').all() as never;
  } finally {
    db.close();
  }
}

/** GET with a Bearer token from a chosen local address. */
function bearerGet(base: string, path: string, token: string, localAddress: string): Promise<{ status: number; retryAfter: string | undefined; text: string }> {
  const url = new URL(path, base);
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: url.port, path: url.pathname, localAddress, headers: { authorization: `Bearer ${token}`, host: url.host } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode!, retryAfter: res.headers['retry-after'] as string | undefined, text }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('console login throttle', () => {
  it('40 wrong logins in parallel from one address: checked one at a time, 5 refused after 0.5 s each, the rest locked out; other addresses unaffected', async () => {
    const t = await startConsoleDaemon({ TOPUP_CONSOLE_TOKEN: TOKEN });
    const c = new Client(t.url);
    await c.get('/login');
    const started = performance.now();
    const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => c.post('/login', { token: `guess-${i}-0123456789abcdef`, name: 'eve' })));
    const elapsed = performance.now() - started;
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 401)).toHaveLength(CALLER_LIMIT);
    expect(statuses.filter((s) => s === 429)).toHaveLength(40 - CALLER_LIMIT);
    // Serialised: the wrong ones took their 0.5 s one after another (0.7 s for all 40 before).
    expect(elapsed).toBeGreaterThanOrEqual(CALLER_LIMIT * WRONG_TOKEN_DELAY_MS - 50);
    console.log(`40 parallel wrong logins from one address: ${Math.round(elapsed)} ms; ${CALLER_LIMIT} compared, ${40 - CALLER_LIMIT} locked out`);
    const locked = answers.find((a) => a.status === 429)!;
    expect(locked.text).toContain('Too many wrong tokens from your address: wrong tokens are refused for 15 min (the right token still works).');
    expect(Number(locked.headers.get('retry-after'))).toBeGreaterThan(800);

    // Locked out: a wrong token from this address is refused at once (not compared in the line) …
    const again = await bearerGet(t.url, '/metrics', 'another-guess-0123456789abcdef', '127.0.0.1');
    expect(again.status).toBe(429);
    // … while another address logs in as usual.
    const other = await bearerGet(t.url, '/metrics', TOKEN, '127.0.0.2');
    expect(other.status).toBe(200);

    // Logged and in the audit: 5 refused logins, one lockout naming the address.
    const entries = audit(t.home);
    expect(entries.filter((e) => e.action === 'login' && e.outcome === 'refused')).toHaveLength(CALLER_LIMIT);
    const lockouts = entries.filter((e) => e.action === 'login-lockout');
    expect(lockouts).toHaveLength(1);
    expect(lockouts[0]).toMatchObject({ outcome: 'refused', address: expect.stringMatching(/127\.0\.0\.1$/) });
    expect(lockouts[0]!.detail).toMatch(/^5 wrong tokens from .*127\.0\.0\.1: this address is locked out until \d{4}-/);
    expect(t.daemon.output()).toMatch(/console: 5 wrong tokens from .*127\.0\.0\.1: this address is locked out/);
    const page = await bearerGet(t.url, '/audit', TOKEN, '127.0.0.3');
    expect(page.status).toBe(200);
    expect(page.text).toContain('login-lockout');
    expect(page.text).not.toContain(TOKEN);
  }, 60_000);

  it(`${TOTAL_LIMIT} wrong Bearer tokens in parallel from five addresses, none at its own limit: every token check is locked out`, async () => {
    const t = await startConsoleDaemon({ TOPUP_CONSOLE_TOKEN: TOKEN });
    const per = TOTAL_LIMIT / 5;
    expect(per).toBeLessThan(CALLER_LIMIT);
    const started = performance.now();
    const answers = await Promise.all(
      Array.from({ length: TOTAL_LIMIT }, (_, i) => bearerGet(t.url, '/metrics', `wrong-${i}-0123456789abcdef`, `127.0.0.${10 + (i % 5)}`)),
    );
    const elapsed = performance.now() - started;
    console.log(`${TOTAL_LIMIT} parallel wrong Bearer tokens from 5 addresses: ${Math.round(elapsed)} ms`);
    expect(answers.map((a) => a.status)).toEqual(Array.from({ length: TOTAL_LIMIT }, () => 401));
    // One line for everyone: 20 wrong tokens cost 20 × 0.5 s however many callers send them.
    expect(elapsed).toBeGreaterThanOrEqual(TOTAL_LIMIT * WRONG_TOKEN_DELAY_MS - 50);

    // Now every address's wrong token is refused at once (the right one is admitted: see below).
    const fresh = await bearerGet(t.url, '/metrics', 'wrong-fresh-0123456789abcdef', '127.0.0.40');
    expect(fresh.status).toBe(429);
    expect(fresh.text).toContain('wrong tokens are refused from every address for 15 min');
    expect((await bearerGet(t.url, '/metrics', TOKEN, '127.0.0.41')).status).toBe(200);
    expect(Number(fresh.retryAfter)).toBeGreaterThan(800);
    const entries = audit(t.home);
    expect(entries.filter((e) => e.action === 'bearer' && e.outcome === 'refused')).toHaveLength(TOTAL_LIMIT);
    expect(entries.filter((e) => e.action === 'login-lockout' && e.outcome === 'refused').map((e) => e.detail)).toEqual([expect.stringMatching(/^20 wrong tokens from all addresses: token checks are locked out for everyone until /)]);
  }, 60_000);

  it('trial s36 D8: 5 wrong tokens from the operator\'s own address (loopback: every local process) do not lock the right token out', async () => {
    const t = await startConsoleDaemon({ TOPUP_CONSOLE_TOKEN: TOKEN });
    // Any local process: 5 wrong Bearer tokens from 127.0.0.1, the address the operator's browser uses too.
    const wrong = await Promise.all(Array.from({ length: CALLER_LIMIT + 3 }, (_, i) => bearerGet(t.url, '/metrics', `local-guess-${i}-0123456789abcdef`, '127.0.0.1')));
    expect(wrong.map((a) => a.status).sort()).toEqual([...Array.from({ length: CALLER_LIMIT }, () => 401), ...Array.from({ length: 3 }, () => 429)]);

    // The operator, same address, right token: the login form and Bearer both admitted, at once.
    const c = new Client(t.url);
    await c.get('/login');
    const started = performance.now();
    const login = await c.post('/login', { token: TOKEN, name: 'ana' });
    expect(login.status).toBe(303);
    expect((await c.get('/')).status).toBe(200);
    const scrape = await bearerGet(t.url, '/metrics', TOKEN, '127.0.0.1');
    expect(scrape.status).toBe(200);
    expect(performance.now() - started).toBeLessThan(5_000);

    // Wrong guesses from there stay refused while the lockout lasts, and are not compared in the line.
    const guess = await bearerGet(t.url, '/metrics', 'still-guessing-0123456789abcdef', '127.0.0.1');
    expect(guess.status).toBe(429);
    expect(guess.text).toContain('Too many wrong tokens from your address');
    const eve = new Client(t.url);
    await eve.get('/login');
    expect((await eve.post('/login', { token: 'form-guess-0123456789abcdef', name: 'eve' })).status).toBe(429);

    // The lockout and the right token admitted during it: in the log and the audit (once per lockout and address).
    const entries = audit(t.home);
    expect(entries.filter((e) => e.action === 'login-lockout' && e.outcome === 'refused')).toHaveLength(1);
    const admitted = entries.filter((e) => e.action === 'login-lockout' && e.outcome === 'ok');
    expect(admitted).toHaveLength(1);
    expect(admitted[0]!.detail).toMatch(/^the right token was admitted from .*127\.0\.0\.1 during its lockout \(wrong tokens stay refused until \d{4}-/);
    expect(t.daemon.output()).toMatch(/console: the right token was admitted from .*127\.0\.0\.1 during its lockout/);
    expect(entries.filter((e) => e.action === 'login' && e.outcome === 'ok')).toHaveLength(1);
  }, 60_000);
});
