/**
 * Issue 13, "Security": the console of a real daemon, over real HTTP. Headers, the session
 * cookie, the host check, CSRF on every POST, read-only mode, the token beyond loopback, the
 * upload limit, file names, and the key in no page, log line or metric.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { TEST_KEY, cliEnv, inProcessSandbox, runCli, tempHome, waitFor } from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';
import { Client, EXAMPLE_MIXED, getWithHost, rawPost, startConsoleDaemon } from './helpers.js';

releaseAfterEach();

const mixed = () => new Blob([readFileSync(EXAMPLE_MIXED)], { type: 'text/csv' });

function audit(home: { jobs: string }): { action: string; outcome: string; detail: string | null }[] {
  const db = new Database(join(home.jobs, 'topup.db'), { readonly: true, fileMustExist: true });
  try {
    return db.prepare('SELECT action, outcome, detail FROM audit ORDER BY id').all() as { action: string; outcome: string; detail: string | null }[];
  } finally {
    db.close();
  }
}

/** Uploads a file through the form; returns the check page's path (/upload/<id>). */
async function upload(c: Client, name: string, blob: Blob): Promise<string> {
  await c.get('/upload');
  const form = new FormData();
  form.set('file', blob, name);
  const r = await c.post('/upload', form);
  expect(r.status, r.text).toBe(303);
  return r.headers.get('location')!;
}

describe('console security', () => {
  it('sends security headers (a strict CSP among them) and an HttpOnly, SameSite=Strict session cookie; pages are not cached', async () => {
    const t = await startConsoleDaemon();
    const res = await fetch(`${t.url}/`);
    expect(res.status).toBe(200);
    const csp = res.headers.get('content-security-policy')!;
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toMatch(/unsafe-inline|unsafe-eval|https?:/);
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('referrer-policy')).toBe('no-referrer');
    expect(res.headers.get('cache-control')).toBe('no-store');
    const cookie = res.headers.getSetCookie().find((c) => c.startsWith('topup_session='))!;
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Strict/);
    // Every asset comes from the daemon itself.
    const page = await res.text();
    for (const m of page.matchAll(/(?:src|href|action)="([^"]+)"/g)) expect(/^(\/(?!\/)|#)/.test(m[1]!), m[1]).toBe(true);
  });

  it('bound to loopback, answers only requests addressed to a loopback name (DNS rebinding)', async () => {
    const t = await startConsoleDaemon();
    const port = new URL(t.url).port;
    expect((await getWithHost(`${t.url}/`, `evil.example:${port}`)).status).toBe(421);
    expect((await getWithHost(`${t.url}/`, `localhost:${port}`)).status).toBe(200);
    expect((await getWithHost(`${t.url}/`, `127.0.0.1:9999`)).status).toBe(200); // an SSH tunnel's port
  });

  it('refuses a POST without the form token, with a forged one, or from another origin, and nothing reaches the inbox', async () => {
    const t = await startConsoleDaemon();
    const c = new Client(t.url);
    const check = await upload(c, 'mixed.csv', mixed());
    expect((await c.get(check)).text).toContain('Submit 9 rows');
    const submit = `${check}/submit`;
    expect((await c.post(submit, {}, { csrf: null })).status).toBe(403);
    expect((await c.post(submit, {}, { csrf: 'forged' })).status).toBe(403);
    expect((await c.post(submit, {}, { origin: 'http://evil.example' })).status).toBe(403);
    // Another browser (no session cookie) with this page's token: the token belongs to a session.
    const other = new Client(t.url);
    await other.get('/');
    expect((await other.post(submit, {}, { csrf: c.csrf })).status).toBe(403);
    expect(readdirSync(t.home.inbox)).toEqual([]);
    const ok = await c.post(submit, {});
    expect(ok.status).toBe(303);
    await waitFor('the batch', () => audit(t.home).some((a) => a.action === 'submit' && a.outcome === 'ok'));
  });

  it('answers a POST it refuses with a 4xx, never a 500: no content type, a chunked body, a broken form, on every POST route (issue 20, item 4)', async () => {
    const token = 'console-token-0123456789abcdef';
    const t = await startConsoleDaemon({ TOPUP_CONSOLE_TOKEN: token });
    const c = new Client(t.url);
    await c.get('/login');
    expect((await c.post('/login', { token, name: 'ana' })).status).toBe(303);
    await c.get('/upload');
    const routes = ['/login', '/logout', '/upload', '/upload/nope/submit', '/batches/nope/cancel', '/batches/nope/retry', '/batches/nope/rows/1/reveal', '/review/resolve', '/reports/run/nope', '/accounts/nope/pause', '/accounts/default/resume'];
    const session = { cookie: c.cookie, 'x-csrf-token': c.csrf };
    const variants: Record<string, Record<string, string>> = {
      'nothing': {},
      'origin only': { origin: t.url },
      'cookie, origin and form token': { ...session, origin: t.url },
      'cookie and form token, no origin': session,
      'same-origin fetch metadata': { cookie: c.cookie, 'sec-fetch-site': 'same-origin' },
      'bearer token': { authorization: `Bearer ${token}` },
      'a JSON body': { ...session, origin: t.url, 'content-type': 'application/json' },
      'an empty content type': { ...session, origin: t.url, 'content-type': '' },
      'multipart without a boundary': { ...session, origin: t.url, 'content-type': 'multipart/form-data' },
      'multipart, body not multipart': { cookie: c.cookie, origin: t.url, 'content-type': 'multipart/form-data; boundary=xyz' },
      'bearer, multipart without a boundary': { authorization: `Bearer ${token}`, 'content-type': 'multipart/form-data' },
    };
    const answers: string[] = [];
    for (const path of routes) {
      for (const [name, headers] of Object.entries(variants)) {
        for (const [body, chunked] of [['a=b', false], ['a=b', true], ['', true], [null, false]] as const) {
          const r = await rawPost(t.url, path, headers, body, { chunked });
          answers.push(`${r.status} POST ${path} (${name}; body ${JSON.stringify(body)}${chunked ? ', chunked' : ''})`);
        }
      }
    }
    expect(answers.filter((a) => !/^4\d\d|^30[13]/.test(a))).toEqual([]);
    expect(t.daemon.output()).not.toContain('console: request failed');

    // A chunked form that is right is taken, like any other: a login, and an upload with the token.
    // From another address: the broken logins above locked 127.0.0.1 out (console/auth.ts LoginThrottle).
    const login = await rawPost(t.url, '/login', { ...session, origin: t.url, 'content-type': 'application/x-www-form-urlencoded' }, new URLSearchParams({ token, name: 'bo', _csrf: c.csrf }).toString(), { chunked: true, localAddress: '127.0.0.2' });
    expect(login.status).toBe(303);
    const form = new FormData();
    form.set('file', mixed(), 'mixed.csv');
    const req = new Request('http://x/', { method: 'POST', body: form });
    const multipart = Buffer.from(await req.arrayBuffer());
    const up = await rawPost(t.url, '/upload', { authorization: `Bearer ${token}`, 'content-type': req.headers.get('content-type')! }, multipart, { chunked: true, localAddress: '127.0.0.2' });
    expect(up.status, up.text).toBe(303);
    expect(audit(t.home).some((a) => a.action === 'upload' && a.outcome === 'ok')).toBe(true);
  });

  it('read-only mode refuses every request that is not GET (recorded), and still shows the pages', async () => {
    const t = await startConsoleDaemon({ TOPUP_CONSOLE_READ_ONLY: '1' });
    const c = new Client(t.url);
    const page = await c.get('/upload');
    expect(page.status).toBe(200);
    expect(page.text).toContain('Read-only console');
    const form = new FormData();
    form.set('file', mixed(), 'mixed.csv');
    expect((await c.post('/upload', form)).status).toBe(403);
    expect((await c.post('/batches/x/cancel', {})).status).toBe(403);
    expect((await fetch(`${t.url}/review/resolve`, { method: 'PUT' })).status).toBe(403);
    expect(readdirSync(t.home.inbox)).toEqual([]);
    expect(audit(t.home).filter((a) => a.outcome === 'refused').map((a) => a.action)).toEqual(['POST /upload', 'POST /batches/x/cancel', 'PUT /review/resolve']);
  });

  it('beyond loopback: refuses to start without a token; with one, pages need a login and /metrics the Bearer token', async () => {
    const home = tempHome();
    const sb = await inProcessSandbox();
    const refused = await runCli(['daemon'], cliEnv(home, sb, { TOPUP_CONSOLE: '0.0.0.0:0' }), { timeoutMs: 30_000 });
    expect(refused.code).toBe(3);
    expect(refused.stderr).toMatch(/TOPUP_CONSOLE: 0\.0\.0\.0:0 lets other machines reach the console.*TOPUP_CONSOLE_TOKEN or TOPUP_CONSOLE_TOKEN_FILE/);

    const token = 'console-token-0123456789abcdef';
    const t = await startConsoleDaemon({ TOPUP_CONSOLE: '0.0.0.0:0', TOPUP_CONSOLE_TOKEN: token });
    const base = t.url.replace(/\/\/[^:/]+:/, '//127.0.0.1:');
    const c = new Client(base);
    const first = await c.get('/batches?q=x');
    expect(first.status).toBe(303);
    expect(first.headers.get('location')).toBe('/login?next=%2Fbatches%3Fq%3Dx');
    expect((await c.get('/login')).status).toBe(200);
    expect((await fetch(`${base}/metrics`)).status).toBe(401);
    expect((await fetch(`${base}/metrics`, { headers: { authorization: 'Bearer wrong-token-wrong-token' } })).status).toBe(401);
    const metrics = await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${token}` } });
    expect(metrics.status).toBe(200);
    expect(await metrics.text()).toContain('topup_rows{state="pending"}');
    const wrong = await c.post('/login', { token: 'not-the-token-at-all', name: 'eve', next: '/batches' });
    expect(wrong.status).toBe(401);
    expect((await c.get('/')).status).toBe(303);
    // After login only a path of this console, never another site.
    const away = await c.post('/login', { token, name: 'ana', next: '//evil.example/' });
    expect(away.headers.get('location')).toBe('/');
    await c.get('/login'); // a new session: its page carries the new form token
    const right = await c.post('/login', { token, name: 'ana', next: '/batches' });
    expect(right.status).toBe(303);
    expect(right.headers.get('location')).toBe('/batches');
    const page = await c.get('/');
    expect(page.status).toBe(200);
    expect(page.text).toContain('Acting as <strong>ana (console)</strong>');
    expect(page.text).not.toContain(token);
    expect(t.daemon.output()).not.toContain(token);
    // The wrong Bearer token is in the audit too (auth.ts LoginThrottle).
    expect(audit(t.home).map((a) => `${a.action}:${a.outcome}`)).toEqual(['bearer:refused', 'login:refused', 'login:ok', 'login:ok']);
  });

  it('refuses an upload above TOPUP_CONSOLE_UPLOAD_MB and keeps nothing of it', async () => {
    const t = await startConsoleDaemon({ TOPUP_CONSOLE_UPLOAD_MB: '1' });
    const c = new Client(t.url);
    await c.get('/upload');
    const big = new Blob([Buffer.alloc(2 * 1024 * 1024, 'a')], { type: 'text/csv' });
    const form = new FormData();
    form.set('file', big, 'big.csv');
    const r = await c.post('/upload', form);
    expect(r.status).toBe(413);
    expect(r.text).toMatch(/larger than the 1 MB the console accepts/);
    expect(readdirSync(t.home.inbox)).toEqual([]);
    const kept = readdirSync(join(t.home.jobs, '.console-uploads'), { recursive: true, withFileTypes: true }).filter((e) => e.isFile());
    expect(kept).toEqual([]);
  });

  it('makes uploaded file names safe: no path, no hidden name, only the formats topup reads', async () => {
    const t = await startConsoleDaemon();
    const c = new Client(t.url);
    const check = await upload(c, '../../../tmp/..\\x/.evil "name"<b>.csv', mixed());
    const page = await c.get(check);
    expect(page.text).toContain('Quote for evil _name__b_.csv');
    expect(page.text).not.toContain('<b>');
    expect((await c.post(`${check}/submit`, {})).status).toBe(303);
    await waitFor('the file claimed', () => existsSync(t.home.outbox) && readdirSync(t.home.outbox).some((f) => f.startsWith('evil _name__b_')), 30_000);
    await c.get('/upload');
    const form = new FormData();
    form.set('file', new Blob(['x']), 'orders.pdf');
    const refused = await c.post('/upload', form);
    expect(refused.status).toBe(400);
    expect(refused.text).toMatch(/topup reads \.csv, \.tsv, \.txt, \.xlsx files/);
  });

  it('never shows the API key: not in a page, a log line or /metrics', async () => {
    const t = await startConsoleDaemon();
    const c = new Client(t.url);
    const check = await upload(c, 'mixed.csv', mixed());
    await c.post(`${check}/submit`, {});
    const batchPath = await waitFor('the batch page', async () => {
      const r = await c.get(check);
      return r.status === 303 ? r.headers.get('location')! : undefined;
    });
    const pages = ['/', '/upload', '/batches', batchPath, '/review', '/reports', '/audit', '/login', '/metrics', '/assets/console.js'];
    for (const p of pages) {
      const r = await c.get(p);
      expect(r.status, p).toBe(200);
      expect(r.text, p).not.toContain(TEST_KEY);
    }
    expect(t.daemon.output()).not.toContain(TEST_KEY);
  });
});
