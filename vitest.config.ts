import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Tests start real servers and child processes; two cores on CI. Three workers: most test
    // files spend their time waiting (daemons, sandboxes, timers), and a third worker overlaps
    // those waits (the suite passed 10 minutes at two with the order API's tests).
    pool: 'forks',
    maxWorkers: 3,
    globalSetup: ['test/global-setup.ts'],
  },
});
