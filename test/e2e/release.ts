/**
 * One line per test file instead of an afterEach block: every daemon, sandbox and temp home the
 * harness started in a test is released after it, also when the test failed. (Kept apart from
 * harness.ts, which the torture runner imports outside vitest.)
 */
import { afterEach } from 'vitest';
import { releaseAll } from './harness.js';

export function releaseAfterEach(): void {
  afterEach(releaseAll);
}
