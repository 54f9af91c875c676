/**
 * Trial s35 defect 3: the history export of an account failed whole on one 429 (`GET
 * /history?page=3: HTTP 429 RATE_LIMIT (retry-later)`) and waited for its next scheduled run. Its
 * reads go through the account's rate gate like every call; a 429 holds the gate for Retry-After,
 * and the export now reads the same page again once it clears. A real sandbox at 2 calls a second
 * (the home's gate assumes the spec's 40/1s: the sandbox refuses the third page), a real store.
 */
import { existsSync, readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { silentLogger } from '../../src/kernel/log.js';
import { openRuntime, type Runtime } from '../../src/runtime.js';
import { runHistoryExport } from '../../src/reports/history.js';
import { inProcessSandbox, tempHome, TEST_KEY, type TempHome } from '../e2e/harness.js';
import type { RunningSandbox } from '../../src/sandbox/index.js';

let rt: Runtime | undefined;
let sb: RunningSandbox | undefined;
let home: TempHome | undefined;
afterEach(async () => {
  await rt?.close();
  await sb?.close();
  home?.remove();
  rt = sb = home = undefined;
});

describe('the history export meets a 429', () => {
  it('waits for Retry-After and reads the page again: every order exported in one run', async () => {
    home = tempHome('history-429-');
    sb = await inProcessSandbox();
    sb.admin.setRateLimits([{ windowMs: 1000, limit: 1000 }]);
    for (let i = 0; i < 130; i++) {
      const res = await fetch(`${sb.url}/orders`, { method: 'POST', headers: { 'X-API-Key': TEST_KEY, 'Content-Type': 'application/json' }, body: JSON.stringify({ pid: 'PUBG-60', userId: String(5300000000 + i), trxid: `H429-${i}` }) });
      expect(res.status).toBeLessThan(300);
    }
    // Three pages of 50: the third call inside one second is refused.
    sb.admin.setRateLimits([{ windowMs: 1000, limit: 2 }]);
    rt = openRuntime(loadConfig({ TOPUP_HOME: home.dir, TOPUP_API_URL: sb.url, TOPUP_API_KEY: TEST_KEY }), silentLogger(), sb.url);
    sb.admin.resetCalls();
    const r = await runHistoryExport(rt, { now: Date.now() });
    expect(r.exported).toBe(130);
    expect(existsSync(r.file)).toBe(true);
    expect(readFileSync(r.file, 'utf8')).toContain('H429-0');
    // The sandbox did refuse a read (the case this is about), and the export read on after it.
    expect(sb.admin.calls().some((c) => c.status === 429)).toBe(true);
  }, 60_000);
});
