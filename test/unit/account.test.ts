/**
 * One supplier account is one unit (src/account/account.ts): the runtime's client, rate gate and catalog
 * are the account's, and what the account shares between processes (its pause, its call log)
 * lives in the store: a pause one process's account sets, another process's account obeys.
 */
import { afterEach, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { silentLogger } from '../../src/kernel/log.js';
import { openRuntime, type Runtime } from '../../src/runtime.js';
import { inProcessSandbox, tempHome, TEST_KEY } from '../e2e/harness.js';
import { releaseAll } from '../e2e/harness.js';
import { Priority } from '../../src/api/client.js';

const opened: Runtime[] = [];
afterEach(async () => {
  for (const rt of opened.splice(0)) await rt.close();
  await releaseAll();
});

it('the runtime works through its account; two processes on one home share its pause and its call log', async () => {
  const home = tempHome();
  const sb = await inProcessSandbox();
  const open = (): Runtime => {
    const rt = openRuntime(loadConfig({ TOPUP_HOME: home.dir, TOPUP_API_KEY: TEST_KEY, TOPUP_API_URL: sb.url }), silentLogger(), sb.url);
    opened.push(rt);
    return rt;
  };
  const [a, b] = [open(), open()];
  expect(a.account.id).toBe('default');
  // The account's parts are reached through it: the runtime does not repeat them under other names.
  expect(Object.keys(a).filter((k) => ['client', 'scheduler', 'catalog', 'lastServerDate', 'onCall'].includes(k))).toEqual([]);

  expect(a.account.pauses().pause('maintenance', 'MAINTENANCE', 'orders paused')).toBe(true);
  expect(b.account.pauses().current).toMatchObject({ kind: 'maintenance', code: 'MAINTENANCE' });
  expect(b.account.pauses().canSend()).toBe(false);
  a.account.pauses().clear();
  expect(b.account.pauses().current).toBeNull();

  const calls: string[] = [];
  a.account.onCall((c) => calls.push(c.route));
  await a.account.client.balance({ priority: Priority.lookup });
  expect(calls).toEqual(['balance']);
  expect(a.account.callCounts.balance).toBe(1);
  expect(a.account.lastServerDate).not.toBeNull();
  expect(b.account.scheduler.callsWithin(60_000)).toBe(1); // b's gate counts a's call
});
