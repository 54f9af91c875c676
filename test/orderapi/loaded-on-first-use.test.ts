/**
 * The order API's modules (zod, @hono/zod-openapi, the route schemas) load at the API's first
 * request, not with the console (console/server.ts orderApiOnFirstUse): an idle daemon whose shop
 * never calls the API does not hold them (issue 34, idle memory). A child process loads the
 * console's server module with a module hook recording every module loaded; the order API's own
 * behaviour over HTTP, first request included, is held by daemon.test.ts on the real daemon.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');

/** Every module URL loaded by importing `modules` (paths under the repository) in a fresh process. */
function loadedBy(modules: string[]): string[] {
  const dir = mkdtempSync(join(tmpdir(), 'topup-loaded-'));
  try {
    const out = join(dir, 'loaded.txt');
    const hook = join(dir, 'hook.mjs');
    writeFileSync(hook, `
      import { appendFileSync } from 'node:fs';
      export async function load(url, context, next) {
        appendFileSync(${JSON.stringify(out)}, url + '\\n');
        return next(url, context);
      }
    `);
    writeFileSync(out, '');
    const script = `
      import { register } from 'node:module';
      register(${JSON.stringify(pathToFileURL(hook).href)});
      ${modules.map((m) => `await import(${JSON.stringify(pathToFileURL(join(ROOT, m)).href)});`).join('\n')}
    `;
    const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: ROOT, encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '' } });
    expect(r.status, r.stderr).toBe(0);
    return readFileSync(out, 'utf8').split('\n').filter((l) => l !== '');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('the order API loads at its first request', () => {
  it('the console (and the daemon with it) loads neither zod nor the order API routes; importing the API does', () => {
    const byConsole = loadedBy(['src/console/server.ts']);
    // The hook sees the console's own modules: the probe works.
    expect(byConsole.some((u) => u.endsWith('/src/console/app.ts'))).toBe(true);
    expect(byConsole.filter((u) => /\/node_modules\/(zod|@hono\/zod-openapi)\//.test(u) || /\/src\/orderapi\/(api|routes|schemas)\.ts$/.test(u))).toEqual([]);
    // And the same probe sees them when the API itself is imported (what the first request does).
    const byApi = loadedBy(['src/orderapi/api.ts']);
    expect(byApi.some((u) => /\/node_modules\/zod\//.test(u))).toBe(true);
    expect(byApi.some((u) => u.endsWith('/src/orderapi/routes.ts'))).toBe(true);
  }, 60_000);
});
