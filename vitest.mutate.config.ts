import { defineConfig } from 'vitest/config';

/**
 * The tests `npm run mutate` runs against each mutant: the in-process tests of the money path
 * (test/unit, test/api). They import src/ directly, so a mutant is what they exercise; the
 * daemon and CLI tests run dist/cli.js as a child process, which a mutant in src/ never reaches
 * (and which would take hours per mutant), so they are left out here. No global setup: nothing
 * here needs dist/. One test file imports dist/shutdown.js in a child; it is excluded for that.
 */
export default defineConfig({
  test: {
    include: ['test/unit/**/*.test.ts', 'test/api/**/*.test.ts'],
    exclude: ['test/unit/shutdown-and-presence.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
