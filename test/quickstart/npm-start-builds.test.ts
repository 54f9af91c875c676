/**
 * New-user trial, issue 30 follow-up item 4: the README's quick start is `npm install && npm start`
 * and says npm start builds; it did not (`start` ran dist/cli.js as it was: absent in a tree without
 * a build, stale after a pull). The prestart (scripts/build-if-stale.mjs) builds when dist/ is
 * missing or older than the sources. Real parts: a copy of the sources without dist/, the real npm.
 */
import { cpSync, existsSync, mkdtempSync, rmSync, symlinkSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT } from '../e2e/harness.js';

const dir = mkdtempSync(join(tmpdir(), 'topup-npm-start-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const npm = (args: string[]) => spawnSync('npm', args, { cwd: dir, encoding: 'utf8', env: { PATH: process.env.PATH, HOME: dir, npm_config_update_notifier: 'false' }, timeout: 600_000 });

describe('npm start on a tree without a build', () => {
  it('builds first, then runs the daemon command; an up-to-date build is not redone; a newer source is seen as stale', () => {
    for (const p of ['package.json', 'tsconfig.json', 'src', 'scripts']) cpSync(join(ROOT, p), join(dir, p), { recursive: true });
    symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
    expect(existsSync(join(dir, 'dist'))).toBe(false);

    // `npm start -- --help`: the daemon command's help, which needs the build.
    const first = npm(['start', '--', '--help']);
    expect(first.status, first.stdout + first.stderr).toBe(0);
    expect(first.stderr).toContain('building dist/ first (dist/ has no build yet)');
    expect(first.stdout).toMatch(/Usage: topup daemon/);
    expect(existsSync(join(dir, 'dist', 'cli.js'))).toBe(true);

    const again = npm(['start', '--', '--help']);
    expect(again.status, again.stderr).toBe(0);
    expect(again.stderr).not.toContain('building dist/');

    // A pulled or edited source is newer than the build: the next start rebuilds.
    const later = new Date(Date.now() + 60_000);
    utimesSync(join(dir, 'src', 'cli.ts'), later, later);
    const check = spawnSync(process.execPath, [join(dir, 'scripts', 'build-if-stale.mjs'), '--dry-run'], { encoding: 'utf8' });
    expect(check.stdout).toContain('would build: the sources are newer than the build');
  }, 600_000);
});
