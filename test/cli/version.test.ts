/**
 * `topup --version` prints package.json's version (the real CLI as a child process), and
 * run-covered's counts read as English ("1 row", "0 rows", "3 rows").
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, runCli } from '../e2e/harness.js';
import { rowsText } from '../../src/commands/run-covered.js';

describe('topup --version, and plurals', () => {
  it('--version and -V print the version of package.json and exit 0', async () => {
    const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    for (const flag of ['--version', '-V']) {
      const r = await runCli([flag], {});
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout.trim()).toBe(version);
    }
  });

  it('run-covered says 1 row, 0 rows, 3 rows', () => {
    expect([rowsText(1), rowsText(0), rowsText(3)]).toEqual(['1 row', '0 rows', '3 rows']);
  });
});
