/**
 * The console's Pause sending / Resume sending (console/pages/accounts.ts), in a real Chromium
 * (Debian's, through playwright-core) against a real daemon and real sandboxes, axe-clean, no CSP
 * error: the button stores the operator's pause through the same operation as `topup account pause`
 * (ops/account-pause.ts), the dispatch honours it (no POST /orders reaches the sandbox while
 * paused), Resume sends the waiting rows, each once; a form without the console's form token is
 * refused 403 and changes nothing; pausing twice says so and records once; a supplier's pause is
 * named as such and not ended by Resume. Screenshots to test/artifacts/console/, and with
 * TOPUP_DOCS_SCREENSHOT=1 to docs/ (docs/console.md).
 * Without /usr/bin/chromium these tests skip (as browser.test.ts does).
 */
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, csv, readResult, startDaemon, waitFor, waitForResult } from '../e2e/harness.js';
import { consoleUrl } from '../e2e/daemon.js';
import { releaseAfterEach } from '../e2e/release.js';
import { twoAccountHome } from '../e2e/accounts.js';
import { pauseKey } from '../../src/store/account-keys.js';
import type { PauseState } from '../../src/account/pauses.js';
import type { RunningSandbox } from '../../src/sandbox/index.js';
import { Client, startConsoleDaemon } from './helpers.js';

const CHROMIUM = '/usr/bin/chromium';
const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];
const ARTIFACTS = join(ROOT, 'test', 'artifacts', 'console');
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const available = existsSync(CHROMIUM);

releaseAfterEach();
let browser: Browser;

async function axe(page: Page, what: string): Promise<void> {
  await page.evaluate(AXE);
  const violations = await page.evaluate(async () => {
    const r = await (globalThis as unknown as { axe: { run: (o: unknown) => Promise<{ violations: { id: string; impact: string; nodes: { target: string[] }[] }[] }> } }).axe.run({
      runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] },
    });
    return r.violations.map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(' ')).slice(0, 3).join(', ')}`);
  });
  expect(violations, `accessibility of ${what}`).toEqual([]);
}

async function shot(page: Page, name: string, docs?: string): Promise<void> {
  mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
  if (docs && process.env.TOPUP_DOCS_SCREENSHOT === '1') await page.screenshot({ path: join(ROOT, 'docs', docs), fullPage: true });
}

async function newPage(): Promise<{ page: Page; close: () => Promise<void>; cspErrors: string[] }> {
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  await ctx.route('**/*', (route) => (new URL(route.request().url()).hostname === '127.0.0.1' ? route.continue() : route.abort()));
  const page = await ctx.newPage();
  const cspErrors: string[] = [];
  page.on('console', (m) => {
    if (/Content.Security.Policy|Refused to/i.test(m.text())) cspErrors.push(m.text());
  });
  page.on('pageerror', (e) => cspErrors.push(`page error: ${e.message}`));
  return { page, cspErrors, close: () => ctx.close() };
}

const squash = (s: string | null): string => (s ?? '').replace(/\s+/g, ' ').trim();
const posts = (sb: RunningSandbox): number => sb.admin.calls().filter((c) => c.method === 'POST' && c.route.includes('orders')).length;

/** The store as another process reads it: the stored pause and the audit entries. */
function storeOf(jobs: string) {
  const db = new Database(join(jobs, 'topup.db'), { readonly: true, fileMustExist: true });
  return {
    pause(account: string): PauseState | null {
      const r = db.prepare('SELECT value FROM meta WHERE key = ?').get(pauseKey(account)) as { value: string } | undefined;
      return r ? (JSON.parse(r.value) as PauseState) : null;
    },
    audit(action: string): { actor: string; address: string | null; detail: string; outcome: string }[] {
      return db.prepare('SELECT actor, address, detail, outcome FROM audit WHERE action = ? ORDER BY id').all(action) as { actor: string; address: string | null; detail: string; outcome: string }[];
    },
    close: () => db.close(),
  };
}

/** Names the browser's operator (a console without a token: the name is who acts). */
async function nameYourself(page: Page, url: string, name: string): Promise<void> {
  await page.goto(`${url}/login`);
  await page.getByLabel('Your name').fill(name);
  await page.getByRole('button', { name: 'Save' }).click();
  await page.waitForURL(`${url}/`);
}

describe.skipIf(!available)('Pause sending / Resume sending in the console, in a real browser', () => {
  beforeAll(async () => {
    browser = await chromium.launch({ executablePath: CHROMIUM, args: FLAGS });
  });
  afterAll(async () => {
    await browser?.close();
  });

  it('Pause: confirm, the stored pause is the operator\'s, no order leaves; twice says so; no form token is 403; Resume sends the waiting rows once each', { timeout: 180_000 }, async () => {
    // 2 calls a second: the file of 60 rows is still being sent (30 s) when the operator pauses.
    const t = await startConsoleDaemon({ TOPUP_RATE_LIMITS: '2/1s' });
    const store = storeOf(t.home.jobs);
    const rows: string[][] = [['pid', 'userId']];
    for (let i = 0; i < 60; i++) rows.push(['PUBG-60', String(5_123_400_300 + i)]);
    t.home.drop('gate.csv', csv(rows));
    await waitFor('a few orders sent', () => posts(t.sb) >= 3, 60_000, 50);

    const { page, close, cspErrors } = await newPage();
    await nameYourself(page, t.url, 'alice');
    await page.goto(`${t.url}/accounts`);
    const row = page.locator('tr[data-account="default"]');
    expect(squash(await row.locator('[data-pause]').textContent())).toBe('sending');
    await axe(page, 'the Accounts page, sending');
    await row.getByRole('link', { name: 'Pause sending…' }).click();
    await page.waitForURL(`${t.url}/accounts/default/pause`);

    // The confirm step says what it does before anything is done.
    const said = squash(await page.locator('[data-consequences]').textContent());
    expect(said).toContain('No order is sent to account default until you resume');
    expect(said).toMatch(/\d+ rows? waiting on it wait\./);
    expect(said).toContain('Rows already sent there are still followed to their end');
    expect(said).toContain('Recorded in the audit log as alice (console)');
    expect(store.pause('default'), 'nothing stored before the confirm').toBeNull();
    await page.getByLabel(/^Note/).fill('supplier asked us to hold');
    await axe(page, 'the Pause confirm step');
    await shot(page, '40-account-pause-confirm', 'console-account-pause-confirm.png');
    await page.getByRole('button', { name: 'Pause sending on default' }).click();
    await page.waitForURL(/\/accounts\?did=paused&account=default/);
    const atPause = posts(t.sb);

    // Stored: the operator's pause, with the note; audited once, as the console's operator.
    const stored = store.pause('default');
    expect(stored?.kind).toBe('operator');
    expect(stored?.code).toBe('OPERATOR');
    expect(stored?.detail).toBe('supplier asked us to hold');
    const paused = store.audit('account paused');
    expect(paused).toHaveLength(1);
    expect(paused[0]).toMatchObject({ actor: 'alice (console)', outcome: 'ok', detail: 'account "default" paused by the operator: supplier asked us to hold' });
    expect(paused[0]!.address).toMatch(/127\.0\.0\.1$/);

    // The page says what happened and what kind of pause is in force; the control is now Resume.
    expect(squash(await page.locator('[data-did="paused"]').textContent())).toMatch(/^Account "default" is paused: no order is sent to it until you resume\./);
    expect(squash(await row.locator('[data-kind="operator"]').textContent())).toBe('Paused by the operator');
    expect(squash(await row.locator('[data-note]').textContent())).toBe('(supplier asked us to hold)');
    await row.getByRole('link', { name: 'Resume sending…' }).waitFor();
    expect(await row.getByRole('link', { name: 'Pause sending…' }).count()).toBe(0);
    expect(squash(await page.locator('[data-pause-banner]').textContent())).toContain('Sending paused by the operator on account default');
    await axe(page, 'the Accounts page, paused by the operator');
    await shot(page, '41-account-paused', 'console-account-paused.png');

    // The dispatch honours it: no order leaves (at most the one already on the wire).
    await new Promise((r) => setTimeout(r, 5_000));
    const afterWait = posts(t.sb);
    expect(afterWait - atPause, 'POST /orders while paused').toBeLessThanOrEqual(1);
    expect(afterWait).toBeLessThan(60);

    // Pausing a paused account says so, changes nothing and records nothing: the page, and a POST.
    await page.goto(`${t.url}/accounts/default/pause`);
    expect(squash(await page.locator('[data-already]').textContent())).toMatch(/^Account default is already paused by the operator, since .* \(supplier asked us to hold\): nothing to do\./);
    expect(await page.getByRole('button', { name: /^Pause sending/ }).count()).toBe(0);
    const http = new Client(t.url);
    // The form token as a page with a form gives it (the Accounts page itself has links, not forms).
    await http.get('/upload');
    const again = await http.post('/accounts/default/pause', { note: 'again' });
    expect(again.status).toBe(303);
    expect(again.headers.get('location')).toContain('did=already-paused');
    const againPage = await http.get(again.headers.get('location')!);
    expect(squash(againPage.text)).toContain('Account &quot;default&quot; was already paused by the operator: nothing changed.');
    expect(store.pause('default')).toEqual(stored);
    expect(store.audit('account paused')).toHaveLength(1);

    // A request without the form token (or with a wrong one) is refused 403 and changes nothing.
    for (const csrf of [null, 'not-the-token']) {
      const refused = await http.post('/accounts/default/resume', {}, { csrf });
      expect(refused.status, `resume with form token ${csrf}`).toBe(403);
    }
    const noOrigin = await http.post('/accounts/default/resume', {}, { origin: 'http://evil.example' });
    expect(noOrigin.status, 'resume from another origin').toBe(403);
    expect(store.pause('default'), 'still paused after the refused resumes').toEqual(stored);
    expect(store.audit('account resumed')).toHaveLength(0);
    await new Promise((r) => setTimeout(r, 2_000));
    expect(posts(t.sb) - afterWait, 'no order after the refused resumes').toBe(0);

    // Resume: the confirm step, then the waiting rows are sent, each once.
    await page.goto(`${t.url}/accounts`);
    await row.getByRole('link', { name: 'Resume sending…' }).click();
    await page.waitForURL(`${t.url}/accounts/default/resume`);
    expect(squash(await page.locator('[data-consequences]').textContent())).toMatch(/\d+ rows? waiting on it (is|are) sent within seconds/);
    await axe(page, 'the Resume confirm step');
    await page.getByRole('button', { name: 'Resume sending on default' }).click();
    await page.waitForURL(/\/accounts\?did=resumed&account=default/);
    expect(store.pause('default')).toBeNull();
    expect(store.audit('account resumed')).toEqual([expect.objectContaining({ actor: 'alice (console)', outcome: 'ok' })]);
    expect(squash(await row.locator('[data-pause]').textContent())).toBe('sending');
    await waitForResult(t.home, 'gate', 90_000);
    const result = readResult(t.home, 'gate');
    expect(result).toHaveLength(60);
    expect(result.every((r) => r.status === 'completed')).toBe(true);
    const trxids = t.sb.admin.ledger().orders.map((o) => o.trxid);
    expect(trxids).toHaveLength(60);
    expect(new Set(trxids).size).toBe(60);
    expect(cspErrors).toEqual([]);
    store.close();
    await close();
  });

  it('a supplier\'s pause is named as the supplier\'s, Resume does not end it; Pause over it is the operator\'s and moves the rows', { timeout: 150_000 }, async () => {
    const t = await twoAccountHome();
    const daemon = startDaemon({ ...t.env, TOPUP_CONSOLE: '127.0.0.1:0' });
    const url = await consoleUrl(daemon);
    await waitFor('the daemon started', () => daemon.output().includes('topup daemon started'), 30_000, 20);
    const store = storeOf(t.home.jobs);
    // second (cheaper for PUBG-60) has its API access switched off: the supplier's pause, an account
    // problem (its read probe fails on, so the pause holds while the page is read; a maintenance
    // lets reads through and its probe lifts it on trial within seconds).
    t.second.admin.setAccount({ state: 'api_disabled' });
    t.home.drop('one.csv', csv([['pid', 'userId'], ['PUBG-60', '5123456783']]));
    await waitFor('second paused by the supplier', () => (store.pause('second')?.kind === 'account' ? true : undefined), 30_000, 200);
    const supplier = store.pause('second')!;

    const { page, close, cspErrors } = await newPage();
    await page.goto(`${url}/accounts`);
    const second = page.locator('tr[data-account="second"]');
    expect(squash(await second.locator('[data-kind="account"]').textContent())).toBe('Paused by the supplier: account problem');
    expect(squash(await second.locator('[data-pause]').textContent())).toContain('Ends by itself when the supplier answers again');
    // Its control is Pause (the operator may hold it), never Resume: that pause is not the operator's.
    await second.getByRole('link', { name: 'Pause sending…' }).waitFor();
    expect(await second.getByRole('link', { name: 'Resume sending…' }).count()).toBe(0);
    await axe(page, 'the Accounts page with a supplier\'s pause');
    await shot(page, '42-account-supplier-pause');
    // The Overview's Accounts table carries the same control.
    await page.goto(`${url}/`);
    await page.locator('tr[data-account="second"] [data-control="pause"]').waitFor();
    await page.locator('tr[data-account="main"] [data-control="pause"]').waitFor();

    // Resume, asked for anyway (the page, then a POST): said and refused, the supplier's pause stands.
    await page.goto(`${url}/accounts/second/resume`);
    expect(squash(await page.locator('[data-not-operator]').textContent())).toContain(`Account second is not paused by the operator: it is paused by the supplier: account problem ${supplier.code}, since `);
    expect(squash(await page.locator('[data-not-operator]').textContent())).toContain('That pause is not yours to end: it ends by itself when the supplier answers again');
    expect(await page.getByRole('button', { name: /^Resume sending/ }).count()).toBe(0);
    const http = new Client(url);
    await http.get('/upload');
    const resumed = await http.post('/accounts/second/resume', {});
    expect(resumed.status).toBe(303);
    expect(resumed.headers.get('location')).toContain('did=supplier');
    expect(store.pause('second')?.kind).toBe('account');
    expect(store.pause('second')?.since).toBe(supplier.since);
    expect(store.audit('account resumed')).toHaveLength(0);

    // Pause over it: the confirm says whose pause it replaces and that the rows move; stored as the operator's.
    await page.goto(`${url}/accounts`);
    await second.getByRole('link', { name: 'Pause sending…' }).click();
    expect(squash(await page.locator('[data-supplier-pause]').textContent())).toContain(`It is paused by the supplier: account problem ${supplier.code} now (since `);
    expect(squash(await page.locator('[data-supplier-pause]').textContent())).toContain('your pause takes its place, and holds even once the supplier answers again, until you resume');
    expect(squash(await page.locator('[data-consequences]').textContent())).toMatch(/\d+ rows? waiting on it move to another account that sells their pack \(a row pinned to it waits\)/);
    await axe(page, 'the Pause confirm step over a supplier\'s pause');
    await page.getByRole('button', { name: 'Pause sending on second' }).click();
    await page.waitForURL(/did=paused&account=second/);
    expect(store.pause('second')?.kind).toBe('operator');
    expect(store.audit('account paused')).toEqual([expect.objectContaining({ actor: 'local (console)', detail: `account "second" paused by the operator (it was paused by the supplier: account ${supplier.code})` })]);
    expect(squash(await second.locator('[data-kind="operator"]').textContent())).toBe('Paused by the operator');
    // The row moved to main and was bought there: nothing is sent to second while it is paused.
    await waitForResult(t.home, 'one', 60_000);
    expect(readResult(t.home, 'one')[0]).toMatchObject({ status: 'completed', account: 'main' });
    expect(cspErrors).toEqual([]);
    store.close();
    await close();
  });
});
