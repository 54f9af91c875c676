/**
 * One line per test file instead of an afterEach block: every daemon, sandbox and temp home the
 * harness started in a test is released after it, also when the test failed. (Kept apart from
 * harness.ts, which the torture runner imports outside vitest.)
 */
import { afterEach } from 'vitest';
import { releaseAll, withOwnRelease } from './harness.js';

export function releaseAfterEach(): void {
  afterEach(releaseAll);
}

/**
 * A test body for describe.concurrent / it.concurrent: what it starts is released when it ends,
 * not by the file's afterEach (which runs as each concurrent test ends, while others still run).
 */
export function released(fn: () => Promise<void>): () => Promise<void> {
  return () => withOwnRelease(fn);
}
