import { defineConfig } from 'vitest/config';

/**
 * Two tiers of one suite (docs/architecture.md, "Two tiers"):
 *
 *   npm test          the quick tier: every test file not listed below (1,869 tests, 276 s on a
 *                     quiet 2-core machine at 6af0c87; at stop 37, with the quick files of 10 s or
 *                     more moved below: 1,988 tests, 276 s wall from a quiet start): what a developer
 *                     runs before a commit;
 *   npm run test:all  both tiers, every test: what CI runs (.ci/run).
 *
 * A file is slow when it took 10 s or more in a full run (quiet 2-core machine, 3 workers): it runs
 * whole daemons through rate limits, settle and review windows, restores, SIGKILL loops, a browser,
 * or simulator budgets. Such files hold about a sixth of the tests and four fifths of the time. The
 * tier says how long a file takes, not how much it matters: CI runs both, and a change to what a
 * slow file holds is checked by running that file (`npx vitest run <file>` runs any file, whichever
 * its tier). Each entry: [file, seconds it took in the full run of 88ca788 (the three restore files
 * added since: run on their own; the nine files added after it: the full run of 7ec079c)]; a file renamed without
 * its entry here fails `node scripts/arrange-tests.mjs --check` (test/unit/tests-arranged.test.ts),
 * so a slow file cannot slip into the quick tier by a move. A new file that takes 10 s or more
 * belongs here (.ci/run lists the quick tier's files that took that long).
 */
export const SLOW_FILES: [file: string, seconds: number][] = [
  ['test/accounts/doctor-pause-line.test.ts', 20],
  ['test/accounts/one-account-pin.test.ts', 12],
  ['test/accounts/re-pointed.test.ts', 17],
  ['test/accounts/recovery.test.ts', 45],
  ['test/accounts/rename-keeps-state.test.ts', 16],
  ['test/accounts/rename-pending.test.ts', 10],
  ['test/accounts/two-accounts.test.ts', 24],
  ['test/accounts/verify-other-account-order-ids.test.ts', 39],
  ['test/backup/api-orders-lost-store.test.ts', 12],
  ['test/backup/backup-under-load.test.ts', 29],
  ['test/backup/doctor-after-restore.test.ts', 11],
  ['test/backup/restore-after-failover.test.ts', 95],
  ['test/claim/card-greedy-match-buys-twice.test.ts', 11],
  ['test/claim/card-shared-common-column.test.ts', 16],
  ['test/claim/redrop-bought-rows.test.ts', 32],
  ['test/claim/redrop-other-account-pid.test.ts', 12],
  ['test/claim/redrop-own-column-changed.test.ts', 12],
  ['test/claim/repeat-limit-200.test.ts', 17],
  ['test/claim/two-submits-given-trxids.test.ts', 16],
  ['test/cli/terminal.test.ts', 77],
  ['test/commands/accounts-views.test.ts', 24],
  ['test/commands/commands.test.ts', 49],
  ['test/commands/lifecycle.test.ts', 45],
  ['test/commands/read-as-meant.test.ts', 25],
  ['test/commands/validate-report.test.ts', 11],
  // console37: a real daemon, 60 rows at 2 calls/s held by a pause, and Chromium (82 s run on its own at load 14).
  ['test/console/account-pause-browser.test.ts', 82],
  ['test/console/browser.test.ts', 80],
  ['test/console/login-throttle.test.ts', 18],
  ['test/console/metrics.test.ts', 15],
  ['test/console/pages.test.ts', 36],
  ['test/console/pictures-browser.test.ts', 26],
  ['test/console/review-reports.test.ts', 17],
  ['test/console/security.test.ts', 23],
  ['test/console/slow-reads.test.ts', 36],
  ['test/console/trial-clarity-browser.test.ts', 55],
  ['test/daemon/claiming.test.ts', 14],
  ['test/daemon/claims-and-orphans.test.ts', 23],
  ['test/daemon/crash.test.ts', 67],
  ['test/daemon/examples.test.ts', 16],
  ['test/daemon/learned-limits.test.ts', 21],
  ['test/daemon/money-and-pauses.test.ts', 61],
  ['test/daemon/money-safety.test.ts', 28],
  ['test/daemon/rate-and-polling.test.ts', 21],
  ['test/daemon/re-drops.test.ts', 25],
  ['test/daemon/real-world.test.ts', 15],
  ['test/daemon/repeats-and-cancels.test.ts', 54],
  ['test/daemon/run-covered.test.ts', 16],
  ['test/daemon/shared-money.test.ts', 10],
  ['test/daemon/slow-writers.test.ts', 37],
  ['test/daemon/spreadsheets.test.ts', 18],
  ['test/dispatch/crash-reused-trxid.test.ts', 14],
  ['test/dispatch/created-at-and-replays.test.ts', 26],
  ['test/dispatch/full-disk.test.ts', 15],
  ['test/dispatch/lost-database-redrop.test.ts', 21],
  ['test/dispatch/never-clearing-lock.test.ts', 17],
  ['test/dispatch/store-down-surfaces.test.ts', 25],
  ['test/intake/watch.test.ts', 21],
  ['test/intake/workbook-sheet-read.test.ts', 10],
  ['test/orderapi/daemon.test.ts', 16],
  ['test/orderapi/property.test.ts', 11],
  ['test/orders/cancel-api-batch.test.ts', 14],
  ['test/orders/crash.test.ts', 12],
  ['test/outbox/daemon.test.ts', 12],
  ['test/outbox/trxid-alias.test.ts', 30], // measured at load 15 (stop 37)
  ['test/outbox/workbook-writers.test.ts', 14],
  ['test/players/api-check.test.ts', 13],
  ['test/players/check-metrics.test.ts', 62],
  ['test/players/done-when.test.ts', 22],
  ['test/players/owed-checks.test.ts', 13],
  ['test/quickstart/npm-start-builds.test.ts', 41],
  ['test/reports/reports.test.ts', 31],
  ['test/restore/account-between-backups.test.ts', 46],
  ['test/restore/api-lookup-cost.test.ts', 68],
  ['test/restore/api-resend-after-failover.test.ts', 47],
  ['test/restore/api-resend-no-replica.test.ts', 65],
  ['test/restore/deleted-store-lookback.test.ts', 23],
  ['test/restore/hand-copy-no-mark.test.ts', 20],
  ['test/restore/journal-supplier-down.test.ts', 28],
  ['test/restore/lookup-history-pages.test.ts', 32],
  ['test/restore/lookup-wait-zero-503.test.ts', 29],
  ['test/restore/redrop-account-changed.test.ts', 19],
  ['test/restore/redrop-account-removed.test.ts', 79],
  ['test/restore/redrop-after-failover.test.ts', 28],
  ['test/restore/repointed-account.test.ts', 34],
  ['test/restore/restore-repointed.test.ts', 10],
  ['test/restore/short-history-page.test.ts', 42],
  ['test/restore/submit-other-accounts-file.test.ts', 22],
  ['test/restore/supplier-history-days.test.ts', 77], // measured at load 16 (stop 37)
  ['test/restore/three-accounts-failover.test.ts', 27],
  ['test/restore/window-histories-pruned.test.ts', 70], // measured at load 16 (stop 37)
  ['test/retry/retry-api-batch-buys-rejected.test.ts', 25],
  ['test/retry/retry-moved-cancelled.test.ts', 10],
  ['test/review/resolve-charged-on-second.test.ts', 18],
  ['test/review/resolve-twice-one-result.test.ts', 41], // measured at load 15 (stop 37)
  ['test/sandbox/home-sandbox.test.ts', 60],
  ['test/security/formula.test.ts', 13],
  ['test/security/two-keys-secret.test.ts', 18],
  ['test/sim/mutate.test.ts', 21],
  ['test/sim/simulate-a.test.ts', 23],
  ['test/sim/simulate-api.test.ts', 27],
  ['test/sim/simulate-b.test.ts', 22],
  ['test/sim/simulate-c.test.ts', 24],
  ['test/sim/simulate-fresh.test.ts', 29],
  ['test/standby/fence-mount-absent.test.ts', 15],
  ['test/standby/journal-mirror-unwritable.test.ts', 13],
  ['test/standby/replica-lag.test.ts', 15],
  ['test/standby/standby.test.ts', 12],
  ['test/standby/takeover-api-orders.test.ts', 11],
  ['test/templates/distinct-trxids.test.ts', 13],
  ['test/time-zone/daemon-days.test.ts', 80],
  ['test/torture/bad-inputs.test.ts', 67],
  ['test/torture/takeover.test.ts', 26],
  ['test/torture/torture-crashes.test.ts', 49],
  ['test/torture/torture-files.test.ts', 26],
  ['test/torture/torture-rates.test.ts', 51],
  ['test/unit/heap-policy.test.ts', 11],
  ['test/unit/sender-paths.test.ts', 10],
  ['test/webhooks/cli.test.ts', 15],
  ['test/webhooks/daemon.test.ts', 40],
  ['test/webhooks/delivery.test.ts', 10],
  // Issue 34's turn of 2026-11-28: quick-tier files that took 15 s or more in the closing CI run (.ci/run's notes).
  ['test/accounts/no-order-probe-account-problem.test.ts', 41],
  ['test/pauses/one-account-maintenance.test.ts', 39],
  ['test/price-cap/cap-across-accounts.test.ts', 74],
  ['test/routing-cost/spill-cost.test.ts', 29],
  ['test/daemon/start-line-accounts.test.ts', 16],
  ['test/players/check-charges.test.ts', 34],
  ['test/commands/price-cap-spellings.test.ts', 27],
  ['test/standby/fence-reset.test.ts', 26],
  ['test/sim/determinism.test.ts', 23],
  ['test/restore/history-without-trxid.test.ts', 22],
  ['test/players/check-two-processes.test.ts', 19],
  ['test/claim/trxid-spellings.test.ts', 18],
  ['test/history/every-account.test.ts', 18],
  ['test/status/sent-count.test.ts', 16],
  // Stop 36's CI run (1867 s, load unknown): the quick tier's files that took 10 s or more there.
  ['test/account-pause/operator-pause.test.ts', 32],
  ['test/console/batch-rows-phone.test.ts', 11],
  ['test/daemon/starting-status.test.ts', 27],
  ['test/players/check-durable.test.ts', 11],
  ['test/players/check-order-in-doubt.test.ts', 13],
  ['test/players/check-unsettled-cap.test.ts', 11],
  ['test/repeat-result/names-the-purchase.test.ts', 12],
  ['test/restore/account-after-last-backup.test.ts', 28],
  ['test/restore/blind-history-players.test.ts', 17],
  ['test/restore/held-row-by-row.test.ts', 36],
  ['test/restore/history-cut-off.test.ts', 84],
  ['test/restore/moved-here-own-account-blind.test.ts', 14],
  ['test/restore/moved-here-own-history-down.test.ts', 32],
  ['test/restore/own-account-blind-failover.test.ts', 22],
  ['test/restore/redrop-own-history-down.test.ts', 30],
  ['test/restore/spent-marks.test.ts', 12],
  ['test/restore/two-daemons-one-report.test.ts', 31],
  ['test/restore/window-history-once.test.ts', 23],
  ['test/run-covered/balance-per-account.test.ts', 12],
  ['test/webhook-backlog/drain-after-outage.test.ts', 38],
  ['test/account-pause/operator-pause-queued.test.ts', 20],
  // Issue 29's ninth turn (branch simbase37): run on their own at load ~3.
  ['test/accounts/rename-under-submit.test.ts', 44],
  ['test/restore/checks-after-copy.test.ts', 27],
  ['test/restore/bought-last-stock.test.ts', 80],
  ['test/sim/baseline-found.test.ts', 20],
  // Stop 37's review of f7ff557 (branch rev37b): 70-80 s at load ~9.
  ['test/restore/two-accounts-last-stock.test.ts', 76],
  // npm test on a quiet machine at f6cdea4 (load 0.01): 346 s wall; the quick files of 10 s or more there.
  ['test/security/secrets.test.ts', 41],
  ['test/intake/workbook-writers.test.ts', 19],
  ['test/orderapi/identity.test.ts', 16],
  ['test/console/money-phone-live.test.ts', 15],
  ['test/webhook-ids/after-restore.test.ts', 12],
  ['test/outbox/xlsx.test.ts', 12],
  ['test/players/player-id-format.test.ts', 11],
  ['test/dispatch/store-stop-surfaces.test.ts', 11],
  ['test/console/money-browser.test.ts', 11],
  ['test/retry/retry-says-what-it-does.test.ts', 11],
  // Stop 38 (branch ops38): five two-sandbox runs with the real CLI and three daemons, 42 s of tests at load ~2 (the review one alone 34 s at load ~20).
  ['test/accounts/moved-row-trxid.test.ts', 60],
  ['test/commands/sale-price-spellings.test.ts', 15],
  // Stop 37's review of f7ff557 (branch rev37b): a failing reproduction, 75 s at load ~9.
  ['test/restore/bought-pack-withdrawn.test.ts', 75],
  // Stop 38 (rev38), measured at load 13-21: real daemon, backup, restore (and SIGKILLed restores).
  ['test/restore/window-cap-bought.test.ts', 33],
  ['test/restore/checks-restore-kill.test.ts', 47],
];

const slow = SLOW_FILES.map(([file]) => file);

// Shared by both tiers. Tests start real servers and child processes; two cores on CI.
const common = {
  testTimeout: 60_000,
  hookTimeout: 60_000,
};

export default defineConfig({
  test: {
    // Three workers: most test files spend their time waiting (daemons, sandboxes, timers), and a
    // third worker overlaps those waits (the suite passed 10 minutes at two with the order API's
    // tests). Workers and the global setup (one build of dist/, one store template) are the run's,
    // shared by the tiers: a project given its own global setup would build again.
    pool: 'forks',
    maxWorkers: 3,
    globalSetup: ['test/global-setup.ts'],
    projects: [
      { test: { ...common, name: 'quick', include: ['test/**/*.test.ts'], exclude: slow } },
      // A slow file may run its tests side by side (describe.concurrent with released(): each test
      // its own home, sandboxes and daemons), so one test shares the cores with its neighbours:
      // twice the quick tier's limit, which only says when a hung test is given up on.
      { test: { ...common, name: 'slow', include: slow, testTimeout: 120_000 } },
    ],
  },
});
