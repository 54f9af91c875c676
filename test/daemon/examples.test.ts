import { copyFileSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, cliEnv, inProcessSandbox, readResult, readSummary, runCli, tempHome, type TempHome } from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';
import type { RunningSandbox } from '../../src/sandbox/index.js';

let home: TempHome;
let sb: RunningSandbox;
releaseAfterEach();

describe('examples/', () => {
  it('every example file (one per order shape, a mixed one, and a workbook) is valid and completes against the sandbox', async () => {
    home = tempHome();
    sb = await inProcessSandbox();
    const files = readdirSync(join(ROOT, 'examples')).filter((f) => /\.(csv|xlsx)$/.test(f));
    expect(files.length).toBeGreaterThanOrEqual(8);
    expect(files).toContain('orders.xlsx');
    for (const f of files) copyFileSync(join(ROOT, 'examples', f), join(home.inbox, f));
    const r = await runCli(['daemon', '--once'], cliEnv(home, sb));
    expect(r.code, r.stderr).toBe(0);
    for (const f of files) {
      const rows = readResult(home, f.replace(/\.(csv|xlsx)$/, ''));
      for (const row of rows) expect({ file: f, status: row.status, error: row.error }).toEqual({ file: f, status: 'completed', error: '' });
    }
  });

  it('the quick start against a sandbox that answers like a real deployment: every example completes, with its codes', async () => {
    home = tempHome();
    // Real-world answers: strings for numbers, nulls, other status words, 19-digit ids, HTML 502
    // pages (some after the order was charged), late codes (docs/sandbox-real-world.md).
    sb = await inProcessSandbox({ answers: 'real-world', fulfilment: { processingShare: 0.5, processingMs: [200, 800] } });
    const files = readdirSync(join(ROOT, 'examples')).filter((f) => /\.(csv|xlsx)$/.test(f));
    for (const f of files) copyFileSync(join(ROOT, 'examples', f), join(home.inbox, f));
    const r = await runCli(['daemon', '--once'], cliEnv(home, sb, { TOPUP_POLL_INTERVAL_MS: '300' }), { timeoutMs: 120_000 });
    expect(r.code, r.stderr.slice(-2000)).toBe(0);
    const ledger = sb.admin.ledger();
    for (const f of files) {
      for (const row of readResult(home, f.replace(/\.(csv|xlsx)$/, ''))) {
        expect({ file: f, status: row.status, error: row.error }).toEqual({ file: f, status: 'completed', error: '' });
        const order = ledger.orders.find((o) => o.trxid === row.trxid)!;
        expect(order.status).toBe('completed');
        for (const code of (order.codes ?? []) as string[]) expect(row.codes).toContain(code);
      }
    }
  }, 150_000);

  it("the README's example summary is examples/mixed.csv's: its rows, and no invalid row", async () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const block = /`outbox\/<name>\.summary\.json` sits beside it \(this is `examples\/mixed\.csv` against the sandbox\):\n\n```json\n([\s\S]*?)\n```/.exec(readme);
    expect(block, 'the README shows the summary of examples/mixed.csv').not.toBeNull();
    const shown = JSON.parse(block![1]!) as { file: string; rows: number; counts: Record<string, number>; spentUsd: number; refundedUsd: number };
    home = tempHome();
    sb = await inProcessSandbox();
    copyFileSync(join(ROOT, 'examples', 'mixed.csv'), join(home.inbox, 'mixed.csv'));
    expect((await runCli(['daemon', '--once'], cliEnv(home, sb))).code).toBe(0);
    const real = readSummary(home, 'mixed') as typeof shown;
    expect(shown.file).toBe('mixed.csv');
    expect(shown.rows).toBe(real.rows);
    expect(Object.values(shown.counts).reduce((a, b) => a + b, 0)).toBe(real.rows);
    expect(shown.counts.invalid).toBe(real.counts.invalid);
    // Completed or cancelled depends on the sandbox's fail share; every row placed in both.
    expect(shown.counts.completed! + shown.counts.cancelled!).toBe(real.counts.completed! + real.counts.cancelled!);
    expect(Object.keys(shown).sort()).toEqual(Object.keys(real).sort());
  });
});
