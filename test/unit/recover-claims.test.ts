/**
 * recoverClaims on a real store and real files: a claim cut short by a kill (record committed,
 * file not moved yet) is finished only with the very bytes that were claimed. A different file
 * dropped under the same name is never moved into the old batch, and a submitted batch never
 * takes a file from the inbox.
 */
import { existsSync, mkdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { createHash } from 'node:crypto';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { recoverClaims } from '../../src/claim/claim.js';
import { removeStaleStaging } from '../../src/claim/orphans.js';
import { loadConfig } from '../../src/config/config.js';
import { silentLogger } from '../../src/kernel/log.js';
import { openRuntime, type Runtime } from '../../src/runtime.js';
import type { BatchOrigin } from '../../src/store/batches.js';
import { csv, tempHome, TEST_KEY, type TempHome } from '../e2e/harness.js';

let home: TempHome;
let rt: Runtime;
beforeEach(() => {
  home = tempHome();
  rt = openRuntime(loadConfig({ TOPUP_HOME: home.dir, TOPUP_API_KEY: TEST_KEY, TOPUP_API_URL: 'http://127.0.0.1:9' }), silentLogger(), 'http://127.0.0.1:9');
});
afterEach(async () => {
  await rt.close();
  home.remove();
});

const A = csv([['pid', 'userId'], ['PUBG-60', '5123456789']]);
const B = csv([['pid', 'userId'], ['PUBG-325', '5999999999'], ['PUBG-60', '5888888888']]);
const sha = (s: string): string => createHash('sha256').update(s).digest('hex');

/** A `claimed` batch as a kill right after its commit leaves it: the file not in jobs/<id>/ yet. */
function cutShortClaim(id: string, name: string, bytes: string, origin: BatchOrigin, jobFile = join(home.jobs, id, name)): void {
  rt.batches.create({ id, name: name.replace(/\.csv$/, ''), sourceName: name, jobFile: relative(home.dir, jobFile), contentHash: sha(bytes), origin, sandbox: false, now: Date.now() });
}

it('finishes the move of the claimed bytes, with the folder marker', async () => {
  cutShortClaim('b250101-aaaaaa', 'x.csv', A, 'inbox');
  home.drop('x.csv', A);
  await recoverClaims(rt);
  expect(readFileSync(join(home.jobs, 'b250101-aaaaaa', 'x.csv'), 'utf8')).toBe(A);
  expect(existsSync(join(home.inbox, 'x.csv'))).toBe(false);
  expect(JSON.parse(readFileSync(join(home.jobs, 'b250101-aaaaaa', '.claim.json'), 'utf8'))).toMatchObject({ origin: 'inbox', contentHash: sha(A) });
  expect(rt.batches.get('b250101-aaaaaa')!.state).toBe('claimed');
});

it('leaves a different file of the same name in the inbox (its own batch later) and fails the old claim with an explanation', async () => {
  cutShortClaim('b250101-bbbbbb', 'x.csv', A, 'inbox');
  home.drop('x.csv', B);
  await recoverClaims(rt);
  expect(readFileSync(join(home.inbox, 'x.csv'), 'utf8')).toBe(B);
  expect(existsSync(join(home.jobs, 'b250101-bbbbbb', 'x.csv'))).toBe(false);
  const b = rt.batches.get('b250101-bbbbbb')!;
  expect(b.state).toBe('failed');
  expect(b.fileError).toMatch(/replaced in the inbox by a different file/);
  expect(readFileSync(join(home.outbox, 'x.error.txt'), 'utf8')).toMatch(/Nothing was sent and nothing was charged/);
});

it('never moves an inbox file into a submitted batch whose file vanished', async () => {
  // A batch submitted before submitted files were copied into jobs/: its file was the user's own.
  cutShortClaim('b250101-cccccc', 'mine.csv', A, 'submit', join(home.dir, 'elsewhere', 'mine.csv'));
  home.drop('mine.csv', A); // even the same bytes: an inbox file is a new order of its own
  await recoverClaims(rt);
  expect(readFileSync(join(home.inbox, 'mine.csv'), 'utf8')).toBe(A);
  const b = rt.batches.get('b250101-cccccc')!;
  expect(b.state).toBe('failed');
  expect(b.fileError).toMatch(/disappeared before it was read/);
  expect(readFileSync(join(home.outbox, 'mine.error.txt'), 'utf8')).toMatch(/the file was not there to read/);
});

it('leaves alone a claim its live claimer holds (it may be between its commit and its move)', async () => {
  cutShortClaim('b250101-dddddd', 'x.csv', A, 'submit');
  rt.batches.acquire('b250101-dddddd', `${(await import('node:os')).hostname()}:${process.ppid}:abcdef`, Date.now(), 15_000);
  await recoverClaims(rt);
  expect(rt.batches.get('b250101-dddddd')!.state).toBe('claimed');
});

it('a submit killed between its commit and its move: the batch goes on from the copy in its staging folder, and the folder goes', async () => {
  cutShortClaim('b250101-eeeeee', 'mine.csv', A, 'submit');
  const stagedB = join(home.jobs, '.submit-0000aaaa');
  const staged = join(home.jobs, '.submit-1234abcd');
  // Another staging folder with a file of the same name but other bytes is never taken.
  mkdirSync(stagedB, { mode: 0o700 });
  writeFileSync(join(stagedB, 'mine.csv'), B);
  mkdirSync(staged, { mode: 0o700 });
  writeFileSync(join(staged, 'mine.csv'), A);
  await recoverClaims(rt);
  expect(readFileSync(join(home.jobs, 'b250101-eeeeee', 'mine.csv'), 'utf8')).toBe(A);
  expect(JSON.parse(readFileSync(join(home.jobs, 'b250101-eeeeee', '.claim.json'), 'utf8'))).toMatchObject({ origin: 'submit', contentHash: sha(A) });
  expect(existsSync(staged)).toBe(false);
  expect(readFileSync(join(stagedB, 'mine.csv'), 'utf8')).toBe(B); // fresh: a live submit may be copying it
  expect(rt.batches.get('b250101-eeeeee')!.state).toBe('claimed');
});

it('an hour-old staging folder is kept while a claimed submit batch still waits for its copy, and swept once that batch moved on', async () => {
  cutShortClaim('b250101-ffffff', 'mine.csv', A, 'submit');
  const staged = join(home.jobs, '.submit-0dd0dd00');
  const leftover = join(home.jobs, '.submit-1eff0000');
  for (const [d, bytes] of [[staged, A], [leftover, B]] as const) {
    mkdirSync(d, { mode: 0o700 });
    writeFileSync(join(d, 'mine.csv'), bytes);
    const twoHoursAgo = new Date(Date.now() - 2 * 3_600_000);
    utimesSync(d, twoHoursAgo, twoHoursAgo);
  }
  // The daemon's start sweeps before the runner recovers claims: nothing of a submit is swept yet.
  expect(removeStaleStaging(rt)).toBe(0);
  await recoverClaims(rt);
  expect(readFileSync(join(home.jobs, 'b250101-ffffff', 'mine.csv'), 'utf8')).toBe(A);
  expect(removeStaleStaging(rt)).toBe(1);
  expect(existsSync(leftover)).toBe(false);
});
