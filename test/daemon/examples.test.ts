import { copyFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, cliEnv, inProcessSandbox, readResult, runCli, tempHome, type TempHome } from '../e2e/harness.js';
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
});
