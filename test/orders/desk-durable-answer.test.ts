/**
 * The order desk's answers wait for the disk (orders/desk.ts #flush): with the runtime's log sync
 * (store/wal-sync.ts) a group of acceptances is committed unsynced and the log is fdatasync'ed off
 * the event loop; no 202, and no 200 for the same order again, leaves before that sync has
 * returned, and a failed sync answers none of them. Real parts: a real SQLite home, the
 * in-process sandbox on 127.0.0.1; only the sync's moment is held by the test (its real fdatasync
 * still runs after).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig } from '../../src/config/config.js';
import { silentLogger } from '../../src/kernel/log.js';
import { openRuntime, type Runtime } from '../../src/runtime.js';
import type { RunningSandbox } from '../../src/sandbox/index.js';
import { createOrderDesk } from '../../src/orders/desk.js';
import { inProcessSandbox, tempHome, TEST_KEY, waitFor, type TempHome } from '../e2e/harness.js';

let homes: TempHome[] = [];
let sandboxes: RunningSandbox[] = [];
let runtimes: Runtime[] = [];
afterEach(async () => {
  for (const rt of runtimes.splice(0)) await rt.close();
  for (const sb of sandboxes.splice(0)) await sb.close();
  for (const h of homes.splice(0)) h.remove();
});

async function setup() {
  const home = tempHome();
  homes.push(home);
  const sb = await inProcessSandbox({});
  sandboxes.push(sb);
  const rt = openRuntime(loadConfig({ TOPUP_HOME: home.dir, TOPUP_API_KEY: TEST_KEY, TOPUP_API_URL: sb.url }), silentLogger(), sb.url);
  runtimes.push(rt);
  const wal = rt.walSync!;
  expect(wal).toBeDefined();
  // Each durable() waits for the test's word, then for the real sync.
  let release: (err?: Error) => void = () => undefined;
  let gate = new Promise<void>((resolve, reject) => (release = (err) => (err ? reject(err) : resolve())));
  const real = wal.durable.bind(wal);
  let asked = 0;
  wal.durable = () => {
    asked++;
    return gate.then(real);
  };
  const hold = () => (gate = new Promise<void>((resolve, reject) => (release = (err) => (err ? reject(err) : resolve()))));
  const desk = createOrderDesk(rt, () => undefined);
  return { home, rt, desk, release: (err?: Error) => release(err), hold, asked: () => asked };
}

/** Whether `p` settles within `ms` (resolves as soon as it does). */
const settledWithin = (p: Promise<unknown>, ms: number): Promise<boolean> =>
  Promise.race([p.then(() => true, () => true), new Promise<boolean>((r) => setTimeout(() => r(false), ms))]);

describe('the order desk answers once the log is on disk', () => {
  it('holds a 202, and a 200 for the same order, until the log sync returns; the journal line is written', async () => {
    const { home, rt, desk, release, asked } = await setup();
    const order = { trxid: 'DUR-1', pid: 'PUBG-60', userId: '5123456701' };
    const first = desk.accept(order);
    // Committed (a read on this connection sees it; the catalog and balance are read first), not answered.
    await waitFor('the order committed', () => rt.rows.byTrxid('DUR-1'), 20_000, 5);
    expect(await settledWithin(first, 300)).toBe(false);
    expect(asked()).toBeGreaterThan(0);
    const again = desk.accept(order);
    expect(await settledWithin(again, 100)).toBe(false);
    // The journal's lines are in the file while the answers wait (its fsync runs beside the log's).
    const dir = join(home.dir, 'jobs', 'api-journal');
    expect(existsSync(dir)).toBe(true);
    expect(readdirSync(dir).map((f) => readFileSync(join(dir, f), 'utf8')).join('')).toContain('"trxid":"DUR-1"');
    release();
    expect((await first).kind).toBe('accepted');
    expect((await again).kind).toBe('same');
  });

  it('answers no order of a group whose log sync failed (no 202 says it is on disk)', async () => {
    const { rt, desk, release } = await setup();
    const p = desk.accept({ trxid: 'DUR-2', pid: 'PUBG-60', userId: '5123456702' });
    await waitFor('the order committed', () => rt.rows.byTrxid('DUR-2'), 20_000, 5);
    expect(await settledWithin(p, 200)).toBe(false);
    release(Object.assign(new Error('EIO'), { code: 'SQLITE_IOERR_FSYNC' }));
    await expect(p).rejects.toThrow('EIO');
  });

  it('answers a refusal at once, without waiting for the disk', async () => {
    const { desk } = await setup();
    // The catalog read first (an order for it is answered only after its sync: let that one through).
    const p = desk.accept({ trxid: 'DUR-3', pid: 'NOPE-1', userId: '1' });
    expect(await settledWithin(p, 10_000)).toBe(true);
    expect(await p).toMatchObject({ kind: 'refused', status: 422 });
  });
});
