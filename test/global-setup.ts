/**
 * Tests that run the real CLI as a child process need dist/ built from the current sources.
 * Built once per test run, incrementally: tsc keeps what it knows of the last build in
 * dist/.tsbuildinfo and re-emits only what changed since, so a run of a few test files does not
 * pay for a whole build (about 15 s of two cores) when the sources have not changed. The file
 * lives in dist/, so deleting dist/ also forgets it; tsc does not notice outputs deleted by hand
 * while the file stays, so a missing dist/cli.js forgets it too.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

export default function setup(): void {
  const root = join(dirname(fileURLToPath(import.meta.url)), '..');
  const info = join(root, 'dist/.tsbuildinfo');
  if (!existsSync(join(root, 'dist/cli.js'))) rmSync(info, { force: true });
  execFileSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', join(root, 'tsconfig.json'), '--incremental', '--tsBuildInfoFile', info], { stdio: 'inherit' });
  chmodSync(join(root, 'dist/cli.js'), 0o755);
}
