/**
 * Tests that run the real CLI as a child process need dist/ built from the current sources.
 * Built once per test run, incrementally: tsc keeps what it knows of the last build in
 * dist/.tsbuildinfo and re-emits only what changed since, so a run of a few test files does not
 * pay for a whole build (about 15 s of two cores) when the sources have not changed. The file
 * lives in dist/, so deleting dist/ also forgets it; tsc does not notice outputs deleted by hand
 * while the file stays, so a missing dist/cli.js forgets it too.
 *
 * It also makes the migrated empty store that every temp home starts from (harness.ts tempHome).
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { makeStoreTemplate, STORE_TEMPLATE_ENV } from './e2e/harness.js';

export default function setup(): () => void {
  const root = join(dirname(fileURLToPath(import.meta.url)), '..');
  const info = join(root, 'dist/.tsbuildinfo');
  if (!existsSync(join(root, 'dist/cli.js'))) rmSync(info, { force: true });
  execFileSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', join(root, 'tsconfig.json'), '--incremental', '--tsBuildInfoFile', info], { stdio: 'inherit' });
  chmodSync(join(root, 'dist/cli.js'), 0o755);
  // The migrated empty store every temp home starts from (harness.ts tempHome): made once per run,
  // here, by the sources under test; the test workers, forked after this, inherit the variable.
  const dir = mkdtempSync(join(tmpdir(), 'topup-template-'));
  process.env[STORE_TEMPLATE_ENV] = makeStoreTemplate(dir);
  return () => rmSync(dir, { recursive: true, force: true });
}
