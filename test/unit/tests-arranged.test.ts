/**
 * Every test sits in a folder named for what it holds (docs/architecture.md): no file in a folder
 * named after a review round, and no reference left to a file's old place. The check is
 * scripts/arrange-tests.mjs --check; a file added to a retired folder needs a line in its map.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');

describe('the test layout', () => {
  it('no test in a review-round folder, no reference to an old place (arrange-tests --check)', () => {
    const r = spawnSync(process.execPath, [join(ROOT, 'scripts/arrange-tests.mjs'), '--check'], { cwd: ROOT, encoding: 'utf8' });
    expect(r.stderr, r.stderr).toBe('');
    expect(r.status).toBe(0);
  });
});
