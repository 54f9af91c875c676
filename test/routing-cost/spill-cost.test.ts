/**
 * Trial s35 M2: with cheapest routing and `max_queue_delay`, a large file spills to the dearer
 * account (456.63 USD against 420.00 all on the cheapest, +8.7 %); `validate` showed the split per
 * account but not what it cost. It now shows each pack's price per account, and the extra cost
 * against every row at its cheapest account, naming the setting that trades time for money.
 * Two real sandboxes, the real CLI.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { csv, releaseAll, runCli } from '../e2e/harness.js';
import { twoAccountHome } from '../e2e/accounts.js';

afterEach(async () => {
  await releaseAll();
});

// 30 rows of 60 UC: 0.92 at main, 0.80 at second.
const FILE = csv([['pid', 'userId'], ...Array.from({ length: 30 }, (_, i) => ['PUBG-60', String(5200000200 + i)])]);

describe('validate shows what the routing spill costs', () => {
  it('a short max_queue_delay: rows on the dearer account, the extra USD against all-cheapest, and the setting named', async () => {
    const t = await twoAccountHome();
    const toml = join(t.home.dir, 'accounts.toml');
    // 200 orders/min (the spec's limits): 3 s of queue is 10 rows.
    writeFileSync(toml, `max_queue_delay = "3s"\n${readFileSync(toml, 'utf8')}`);
    const file = join(t.home.dir, 'big.csv');
    writeFileSync(file, FILE);

    const j = await runCli(['validate', file, '--json'], t.env, { timeoutMs: 60_000 });
    const q = JSON.parse(j.stdout) as {
      totalUsd: number;
      byAccount: { account: string; rows: number; usd: number }[];
      byPack: { account: string; rows: number; unitPriceUsd: number; usd: number }[];
      routingCost: { routing: string; maxQueueDelayMs: number; cheapestUsd: number; extraUsd: number; extraPercent: number; dearerRows: number };
    };
    const onMain = q.byAccount.find((a) => a.account === 'main')!.rows;
    expect(onMain).toBeGreaterThan(0);
    expect(q.byPack.map((p) => [p.account, p.unitPriceUsd])).toEqual([['main', 0.92], ['second', 0.8]]);
    expect(q.routingCost).toEqual({
      routing: 'cheapest',
      maxQueueDelayMs: 3000,
      cheapestUsd: 24,
      extraUsd: Math.round(onMain * 12) / 100,
      extraPercent: Math.round(((onMain * 0.12) / 24) * 1000) / 10,
      dearerRows: onMain,
    });
    expect(q.totalUsd).toBeCloseTo(24 + onMain * 0.12, 2);

    const text = await runCli(['validate', file], t.env, { timeoutMs: 60_000 });
    const line = text.stdout.split('\n').find((l) => l.startsWith('Routing cost:'));
    expect(line).toBeDefined();
    expect(line).toContain(`${onMain} rows on a dearer account`);
    expect(line).toContain(`${q.totalUsd.toFixed(2)} USD against 24.00 USD`);
    expect(line).toContain(`+${(onMain * 0.12).toFixed(2)} USD`);
    expect(line).toContain('max_queue_delay = "3s" (accounts.toml)');
    expect(text.stdout).toMatch(/second\s.*\b0\.80\b/);
  }, 120_000);

  it('every row on its cheapest account: no extra cost, no routing cost line', async () => {
    const t = await twoAccountHome();
    const file = join(t.home.dir, 'small.csv');
    writeFileSync(file, FILE);
    const j = await runCli(['validate', file, '--json'], t.env, { timeoutMs: 60_000 });
    const q = JSON.parse(j.stdout) as { routingCost: { extraUsd: number; dearerRows: number; cheapestUsd: number } };
    expect(q.routingCost).toMatchObject({ extraUsd: 0, dearerRows: 0, cheapestUsd: 24 });
    const text = await runCli(['validate', file], t.env, { timeoutMs: 60_000 });
    expect(text.stdout).not.toContain('Routing cost:');
  }, 120_000);
});
