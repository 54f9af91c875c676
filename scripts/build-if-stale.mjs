#!/usr/bin/env node
/**
 * `npm start`'s prestart: builds dist/ when it is missing or older than any source, so a fresh
 * clone (`npm install && npm start`), a `git pull` or an edited file never starts a stale or absent
 * build. An up-to-date build is not redone (a full build takes tens of seconds on a small server).
 * Judged by modification times: a checkout or pull writes the files it changes, so they are newer
 * than the build they would change.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';

const root = join(import.meta.dirname, '..');
const built = join(root, 'dist', 'cli.js');

function newest(path) {
  const s = statSync(path);
  if (!s.isDirectory()) return s.mtimeMs;
  let max = s.mtimeMs;
  for (const name of readdirSync(path)) max = Math.max(max, newest(join(path, name)));
  return max;
}

const sources = ['src', 'tsconfig.json', 'package.json'].map((p) => join(root, p)).filter(existsSync);
const reason = !existsSync(built) ? 'dist/ has no build yet' : sources.some((p) => newest(p) > statSync(built).mtimeMs) ? 'the sources are newer than the build' : null;
if (reason === null) process.exit(0);
// --dry-run: only say whether it would build, and why (exit 0 either way).
if (process.argv.includes('--dry-run')) {
  process.stdout.write(`would build: ${reason}\n`);
  process.exit(0);
}
process.stderr.write(`topup: building dist/ first (${reason})\n`);
// npm runs this script, so npm_execpath names the npm that runs it; `npm` on the PATH otherwise.
const npm = process.env.npm_execpath;
const r = npm ? spawnSync(process.execPath, [npm, 'run', 'build'], { cwd: root, stdio: 'inherit' }) : spawnSync('npm', ['run', 'build'], { cwd: root, stdio: 'inherit' });
process.exit(r.status ?? 1);
