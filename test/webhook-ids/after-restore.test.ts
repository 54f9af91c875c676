/**
 * A new-user trial (stop 36, D1, high): after a restore, order event ids were issued again for
 * other events. The restored store numbered its events on from the copy's last id, so the ids the
 * shop was sent after the copy was taken came again naming other orders' changes (28 clashed); a
 * shop de-duplicating by `Topup-Event-Id`, as docs/webhooks.md tells it to, dropped them and never
 * heard of one order at all. The same for a store deleted and started new (ids from 1 again).
 * Now a store that may be behind raises its next event id above every id any store of this home can
 * have issued (store/event-ids.ts). The real daemon with its order API, a real sandbox, the real
 * `topup backup` and `topup restore`; the change feed shows the same ids the webhooks carry.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliEnv, inProcessSandbox, runCli, tempHome, waitFor, withOwnRelease } from '../e2e/harness.js';
import { start } from '../e2e/daemon.js';

const TOKEN = 'event-ids-after-restore-token-0123456789';

type Daemon = Awaited<ReturnType<typeof start>>;

async function order(d: Daemon, trxid: string, userId: string): Promise<void> {
  const r = await d.call('POST', '/api/v1/orders', { body: { trxid, pid: 'PUBG-60', userId, queue: true } });
  expect(r.status, JSON.stringify(r.json)).toBe(202);
  await waitFor(`${trxid} completed`, async () => (await d.call('GET', `/api/v1/orders/${trxid}`, {})).json?.status === 'completed', 60_000, 100);
}

/** Every event in the change feed: id → "<trxid> <type>". */
async function feed(d: Daemon): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  let since = '';
  for (;;) {
    const r = await d.call('GET', `/api/v1/orders?limit=100${since ? `&since=${since}` : ''}`, {});
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    const events = r.json.events as { id: string; type: string; data: { trxid: string } }[];
    for (const e of events) out.set(e.id, `${e.data.trxid} ${e.type}`);
    if (events.length === 0 || r.json.next === since) return out;
    since = r.json.next;
  }
}

const num = (id: string): number => Number(id.replace(/^evt_/, ''));

describe.concurrent('order event ids after the store is brought back or lost', () => {
  it.each([
    ['an older copy restored with topup restore', true],
    ['the store deleted, a new one started', false],
  ])('%s: no id names a second event, and every new id is above every old one', (_name, restore) => withOwnRelease(async () => {
    const home = tempHome('event-ids-');
    const sb = await inProcessSandbox();
    const env = cliEnv(home, sb, { TOPUP_ORDER_API_TOKEN: TOKEN, TOPUP_CONSOLE: '127.0.0.1:0' });
    const offsite = mkdtempSync(join(tmpdir(), 'event-ids-offsite-'));

    const first = await start(env);
    let before: Map<string, string>;
    let backupDir = '';
    try {
      await order(first, 'EV-1', '5123456001');
      const bk = await runCli(['backup', '--to', offsite, '--json'], env);
      expect(bk.code, bk.stderr).toBe(0);
      backupDir = JSON.parse(bk.stdout).path as string;
      // Events the shop is sent after the copy was taken: the ids that came again.
      await order(first, 'EV-2', '5123456002');
      await order(first, 'EV-3', '5123456003');
      before = await feed(first);
    } finally {
      await first.daemon.stop();
    }
    expect([...before.values()].filter((v) => v.startsWith('EV-3'))).not.toEqual([]);

    rmSync(home.jobs, { recursive: true, force: true });
    if (restore) {
      const rs = await runCli(['restore', backupDir], env);
      expect(rs.code, rs.stderr).toBe(0);
    }
    const second = await start(env);
    let after: Map<string, string>;
    try {
      await waitFor('reconciled', () => /sending starts now/i.test(second.daemon.output()), 90_000, 200);
      await order(second, 'EV-4', '5123456004');
      after = await feed(second);
    } finally {
      await second.daemon.stop();
    }
    const highestBefore = Math.max(...[...before.keys()].map(num));
    const fresh = [...after].filter(([, what]) => what.startsWith('EV-4'));
    expect(fresh.length).toBeGreaterThan(0);
    // No id the shop was sent before names another event now.
    const clashes = [...after].filter(([id, what]) => before.has(id) && before.get(id) !== what);
    expect(clashes, JSON.stringify(clashes)).toEqual([]);
    // Every event made by the second store (EV-4's, and any made again for recovered orders) is
    // numbered above the highest id issued before: a shop comparing ids reads it as newer.
    const made = [...after.keys()].filter((id) => !before.has(id)).map(num);
    expect(made.length).toBeGreaterThan(0);
    expect(Math.min(...made)).toBeGreaterThan(highestBefore);
    // The restored copy's own events keep their ids (the feed's cursor from before reads on).
    if (restore) for (const [id, what] of after) if (num(id) <= highestBefore) expect(before.get(id)).toBe(what);
    // The ledger: four purchases, each once.
    expect(sb.admin.ledger().orders.map((o) => o.trxid).sort()).toEqual(['EV-1', 'EV-2', 'EV-3', 'EV-4']);
  }), 300_000);
});
