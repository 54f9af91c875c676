/**
 * The console's Resume confirm form ends the pause it showed, not whichever pause is in force
 * (console/pages/accounts.ts, ops/account-pause.ts resumeAccount). Before, the form carried only
 * the form token: a confirm page left open in one tab, after that pause was resumed and a new one
 * made in another tab (a new reason to hold the account), ended the NEW pause, and orders went to an
 * account the operator had just stopped. The form now carries the pause's `since`; a pause that
 * changed is refused 409 ("the pause changed since this page was opened") and stands.
 * Plain HTTP with the console's form token, against a real daemon and real sandboxes.
 */
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startDaemon, waitFor } from '../e2e/harness.js';
import { consoleUrl } from '../e2e/daemon.js';
import { releaseAfterEach } from '../e2e/release.js';
import { twoAccountHome } from '../e2e/accounts.js';
import { pauseKey } from '../../src/store/account-keys.js';
import type { PauseState } from '../../src/account/pauses.js';
import { Client } from './helpers.js';

releaseAfterEach();

function read<T>(jobs: string, f: (db: Database.Database) => T): T {
  const db = new Database(join(jobs, 'topup.db'), { readonly: true, fileMustExist: true });
  try {
    return f(db);
  } finally {
    db.close();
  }
}
const pauseOf = (jobs: string): PauseState | null =>
  read(jobs, (db) => {
    const r = db.prepare('SELECT value FROM meta WHERE key = ?').get(pauseKey('main')) as { value: string } | undefined;
    return r ? (JSON.parse(r.value) as PauseState) : null;
  });
const resumes = (jobs: string): number => read(jobs, (db) => (db.prepare("SELECT count(*) AS n FROM audit WHERE action = 'account resumed'").get() as { n: number }).n);

/** The hidden fields of the Resume confirm form, as a browser would post them. */
function formOf(text: string): Record<string, string> {
  const form = /<form method="post" action="\/accounts\/main\/resume"[^>]*>([\s\S]*?)<\/form>/.exec(text)?.[1];
  expect(form, 'the Resume confirm form').toBeDefined();
  const fields: Record<string, string> = {};
  for (const m of form!.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"/g)) fields[m[1]!] = m[2]!;
  return fields;
}

describe('Resume sending in the console ends only the pause its page showed', () => {
  it('a confirm page left open does not end a newer pause made in another tab (409, the pause stands)', { timeout: 120_000 }, async () => {
    const t = await twoAccountHome();
    const daemon = startDaemon({ ...t.env, TOPUP_CONSOLE: '127.0.0.1:0' });
    const url = await consoleUrl(daemon);
    await waitFor('the daemon started', () => daemon.output().includes('topup daemon started'), 30_000, 20);
    const http = new Client(url);
    await http.get('/upload');

    expect((await http.post('/accounts/main/pause', { note: 'first' })).status).toBe(303);
    const first = pauseOf(t.home.jobs)!;
    // Tab 1 opens the Resume confirm page and is left open.
    const stale = formOf((await http.get('/accounts/main/resume')).text);
    expect(stale.since).toBe(String(first.since));

    // Tab 2: resumes that pause, then pauses again for another reason.
    const tab2 = formOf((await http.get('/accounts/main/resume')).text);
    expect((await http.post('/accounts/main/resume', tab2)).headers.get('location')).toContain('did=resumed');
    await new Promise((r) => setTimeout(r, 5));
    expect((await http.post('/accounts/main/pause', { note: 'second: key about to change' })).status).toBe(303);
    const second = pauseOf(t.home.jobs)!;
    expect(second.since).not.toBe(first.since);

    // Tab 1's button: refused, the newer pause stands, nothing audited.
    const refused = await http.post('/accounts/main/resume', stale);
    expect(refused.status).toBe(409);
    expect(refused.text).toContain('the pause changed since this page was opened');
    expect(pauseOf(t.home.jobs)).toEqual(second);
    expect(resumes(t.home.jobs)).toBe(1);
    // A form without the pause's start ends nothing either.
    const { since: _since, ...bare } = stale;
    expect((await http.post('/accounts/main/resume', bare)).status).toBe(409);
    expect(pauseOf(t.home.jobs)).toEqual(second);

    // A page opened now shows the newer pause and ends it.
    const fresh = formOf((await http.get('/accounts/main/resume')).text);
    expect(fresh.since).toBe(String(second.since));
    expect((await http.post('/accounts/main/resume', fresh)).headers.get('location')).toContain('did=resumed');
    expect(pauseOf(t.home.jobs)).toBeNull();
    expect(resumes(t.home.jobs)).toBe(2);
  });
});
