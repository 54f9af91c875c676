#!/usr/bin/env node
/**
 * Puts every test in a folder named for the behaviour or the module it holds, and rewrites every
 * reference to a moved file. Tests found by a review round used to live in folders named after the
 * round (test/adv … test/adv9) and test/account sat beside test/accounts; a reader looking for the
 * tests of the repeat rule or of a restore had to know which round found what.
 *
 *   node scripts/arrange-tests.mjs          move what MOVES names and rewrite references (git mv)
 *   node scripts/arrange-tests.mjs --check  change nothing; exit 1 naming what is out of place
 *
 * Re-runnable: a file already at its new place is left alone, and references are rewritten
 * wherever they still name an old place (a branch merged after the move may bring new ones). A
 * file in a review-round folder that MOVES does not name stops the run before anything is moved:
 * add a line for it below (its new folder is the behaviour or module it holds: the module it
 * imports from src/, or the command it drives) and run again.
 *
 * What is rewritten: relative imports and `new URL('../…', import.meta.url)` paths in .ts/.mts/.mjs
 * files (a moved file's own, and any file's that points at a moved one), and repository paths
 * (`test/adv2/x.test.ts`, also with .js) in every tracked text file: src/store/invariants.ts (the
 * list test/unit/invariants-list.test.ts checks), docs, the mutation and vitest configs.
 * SLOW_FILES in vitest.config.ts (the slow tier) must name files that exist: --check says which do not.
 * Every move keeps the file at the same depth (test/<folder>/<file>), so a moved file's paths
 * built from import.meta.dirname stay right.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join, posix } from 'node:path';
import { fileURLToPath } from 'node:url';

// old path → new path, both from the repository's root. One line per file.
const MOVES = {
  // test/adv: issue 20's adversarial review
  'test/adv/crash-reused-trxid.test.ts': 'test/dispatch/crash-reused-trxid.test.ts',
  'test/adv/created-at-and-replays.test.ts': 'test/dispatch/created-at-and-replays.test.ts',
  'test/adv/failure-body-order-id.test.ts': 'test/dispatch/failure-body-order-id.test.ts',
  'test/adv/lost-database-redrop.test.ts': 'test/dispatch/lost-database-redrop.test.ts',
  'test/adv/repeat-window.test.ts': 'test/claim/repeat-window.test.ts',
  'test/adv/two-loaders-trxid.test.ts': 'test/claim/two-loaders-trxid.test.ts',
  'test/adv/two-submits-given-trxids.test.ts': 'test/claim/two-submits-given-trxids.test.ts',
  // test/adv2
  'test/adv2/redrop-one-more-twin.test.ts': 'test/claim/redrop-one-more-twin.test.ts',
  'test/adv2/redrop-own-column-changed.test.ts': 'test/claim/redrop-own-column-changed.test.ts',
  'test/adv2/repeat-limit-200.test.ts': 'test/claim/repeat-limit-200.test.ts',
  'test/adv2/resolve-charged-alias-id.test.ts': 'test/review/resolve-charged-alias-id.test.ts',
  'test/adv2/retry-of-retry-twin.test.ts': 'test/retry/retry-of-retry-twin.test.ts',
  'test/adv2/two-retries-at-once.test.ts': 'test/retry/two-retries-at-once.test.ts',
  // test/adv3: key/card rows' identity in the repeat rule (claim/repeats.ts), resolve --charged
  'test/adv3/card-amount-column.test.ts': 'test/claim/card-amount-column.test.ts',
  'test/adv3/card-excel-leading-zeros.test.ts': 'test/claim/card-excel-leading-zeros.test.ts',
  'test/adv3/card-greedy-match-buys-twice.test.ts': 'test/claim/card-greedy-match-buys-twice.test.ts',
  'test/adv3/card-order-no-equals-line.test.ts': 'test/claim/card-order-no-equals-line.test.ts',
  'test/adv3/card-shared-common-column.test.ts': 'test/claim/card-shared-common-column.test.ts',
  'test/adv3/card-timestamp-collision.test.ts': 'test/claim/card-timestamp-collision.test.ts',
  'test/adv3/card-with-userid-cell.test.ts': 'test/claim/card-with-userid-cell.test.ts',
  'test/adv3/resolve-charged-invisible-space.test.ts': 'test/review/resolve-charged-invisible-space.test.ts',
  // test/adv4
  'test/adv4/card-blank-header-column.test.ts': 'test/claim/card-blank-header-column.test.ts',
  'test/adv4/card-partial-greedy.test.ts': 'test/claim/card-partial-greedy.test.ts',
  'test/adv4/card-sr-no-renumbered.test.ts': 'test/claim/card-sr-no-renumbered.test.ts',
  'test/adv4/card-status-updated.test.ts': 'test/claim/card-status-updated.test.ts',
  'test/adv4/card-time-am-pm.test.ts': 'test/claim/card-time-am-pm.test.ts',
  'test/adv4/card-time-seconds-dropped.test.ts': 'test/claim/card-time-seconds-dropped.test.ts',
  'test/adv4/card-xlsx-midnight.test.ts': 'test/claim/card-xlsx-midnight.test.ts',
  'test/adv4/retry-of-redrop-twin.test.ts': 'test/retry/retry-of-redrop-twin.test.ts',
  // test/adv5: issue 22 (two accounts)
  'test/adv5/crash-before-move.test.ts': 'test/accounts/crash-before-move.test.ts',
  'test/adv5/pack-alias-failover.test.ts': 'test/accounts/pack-alias-failover.test.ts',
  'test/adv5/pinned-pid-of-second.test.ts': 'test/accounts/pinned-pid-of-second.test.ts',
  'test/adv5/reconcile-two-accounts.test.ts': 'test/reports/reconcile-two-accounts.test.ts',
  'test/adv5/redrop-other-account-pid.test.ts': 'test/claim/redrop-other-account-pid.test.ts',
  'test/adv5/resolve-charged-on-second.test.ts': 'test/review/resolve-charged-on-second.test.ts',
  'test/adv5/two-sandboxes.ts': 'test/accounts/two-sandboxes.ts',
  'test/adv5/verify-other-account-order-ids.test.ts': 'test/accounts/verify-other-account-order-ids.test.ts',
  // test/adv6
  'test/adv6/left-trxid-case.test.ts': 'test/claim/left-trxid-case.test.ts',
  'test/adv6/pack-alias-fingerprint.test.ts': 'test/claim/pack-alias-fingerprint.test.ts',
  'test/adv6/redrop-after-accounts-file.test.ts': 'test/claim/redrop-after-accounts-file.test.ts',
  'test/adv6/two-keys-secret.test.ts': 'test/security/two-keys-secret.test.ts',
  // test/adv7
  'test/adv7/failover-balance-words.test.ts': 'test/accounts/failover-balance-words.test.ts',
  'test/adv7/retry-moved-cancelled.test.ts': 'test/retry/retry-moved-cancelled.test.ts',
  'test/adv7/summary-balance-accounts.test.ts': 'test/outbox/summary-balance-accounts.test.ts',
  // test/adv8: issue 23 (the order API and its webhooks). shop.ts becomes the one daemon harness.
  'test/adv8/callback-origin-revoked.test.ts': 'test/webhooks/callback-origin-revoked.test.ts',
  'test/adv8/deep-meta-500.test.ts': 'test/orderapi/deep-meta-500.test.ts',
  'test/adv8/feed-long-cursor-500.test.ts': 'test/orderapi/feed-long-cursor-500.test.ts',
  'test/adv8/retry-api-batch-buys-rejected.test.ts': 'test/retry/retry-api-batch-buys-rejected.test.ts',
  'test/adv8/shop.ts': 'test/e2e/daemon.ts',
  'test/adv8/write-token-reads-orders.test.ts': 'test/orderapi/write-token-reads-orders.test.ts',
  // test/adv9
  'test/adv9/bearer-lockout.test.ts': 'test/orderapi/bearer-lockout.test.ts',
  'test/adv9/cancel-api-batch.test.ts': 'test/orders/cancel-api-batch.test.ts',
  'test/adv9/deleted-store-lookback.test.ts': 'test/restore/deleted-store-lookback.test.ts',
  'test/adv9/hand-copy-no-mark.test.ts': 'test/restore/hand-copy-no-mark.test.ts',
  'test/adv9/journal-supplier-down.test.ts': 'test/restore/journal-supplier-down.test.ts',
  'test/adv9/raw-connections.test.ts': 'test/torture/raw-connections.test.ts',
  'test/adv9/restore-repointed.test.ts': 'test/restore/restore-repointed.test.ts',
  // test/account (src/account's modules) joins test/accounts
  'test/account/funds.test.ts': 'test/accounts/funds.test.ts',
  'test/account/learned-limits.test.ts': 'test/accounts/learned-limits.test.ts',
  // test/rev37: the review of the one reviewed result (outbox/paths.ts)
  'test/rev37/reviewed-path-after-finish.test.ts': 'test/outbox/reviewed-path-after-finish.test.ts',
  'test/rev37/reviewed-name-owned.test.ts': 'test/outbox/reviewed-name-owned.test.ts',
};

/** Folders that must end empty: named after a review round, or a twin of another folder. */
const RETIRED = /^test\/(adv\d*|account)\//;
/** A folder named like that in prose or a path (`test/adv3`, `test/account/`), to report in --check; not `test/account-pause` (a "-" ends no folder name). */
const RETIRED_WORD = /\btest\/(adv\d*|account)(?=\/|[^\w-]|$)/gm;

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const SELF = 'scripts/arrange-tests.mjs';
const CODE = /\.(ts|mts|mjs|js)$/;
const TEXT = /\.(ts|mts|mjs|js|md|json|ya?ml|toml|txt)$/;
const check = process.argv.includes('--check');

const git = (...args) => execFileSync('git', args, { cwd: ROOT, encoding: 'utf8' });
const files = () =>
  [...new Set([...git('ls-files').split('\n'), ...git('ls-files', '--others', '--exclude-standard').split('\n')])]
    .filter((f) => f && existsSync(join(ROOT, f)));

const fail = (lines) => {
  for (const l of lines) console.error(l);
  process.exit(1);
};

// 1. Every file in a retired folder must be mapped; two files must not be mapped onto one place.
const all = files();
const unmapped = all.filter((f) => RETIRED.test(f) && !(f in MOVES));
if (unmapped.length > 0) {
  fail([
    `${unmapped.length} file(s) in a review-round folder have no line in MOVES (${SELF}):`,
    ...unmapped.map((f) => `  '${f}': 'test/<behaviour or module>/${posix.basename(f)}',`),
    'Add a line for each (the folder of the behaviour or module it holds) and run again.',
  ]);
}
const targets = new Map();
for (const [from, to] of Object.entries(MOVES)) {
  if (RETIRED.test(to)) fail([`MOVES sends ${from} to ${to}, itself in a review-round folder.`]);
  if (to.split('/').length !== from.split('/').length) fail([`MOVES changes the depth of ${from} → ${to}: paths built from import.meta.dirname would break.`]);
  if (targets.has(to)) fail([`MOVES sends both ${targets.get(to)} and ${from} to ${to}.`]);
  targets.set(to, from);
  if (existsSync(join(ROOT, from)) && existsSync(join(ROOT, to))) fail([`${from} and ${to} both exist: merge them by hand, then run again.`]);
}

// 2. Move.
const movedNow = new Map(); // new path → old path, for files moved in this run
const pending = Object.entries(MOVES).filter(([from]) => existsSync(join(ROOT, from)));
if (!check) {
  for (const [from, to] of pending) {
    mkdirSync(dirname(join(ROOT, to)), { recursive: true });
    // git mv keeps a tracked file's history; a file not yet added is simply renamed.
    if (git('ls-files', '--', from).trim() !== '') git('mv', from, to);
    else renameSync(join(ROOT, from), join(ROOT, to));
    movedNow.set(to, from);
  }
}

// 3. References.
const asTs = (p) => p.replace(/\.js$/, '.ts');
const newPlaceOf = (p) => MOVES[p] ?? MOVES[asTs(p)]?.replace(/\.ts$/, p.endsWith('.js') ? '.js' : '.ts');
const rel = (fromDir, to) => {
  const r = posix.relative(fromDir, to);
  return r.startsWith('.') ? r : `./${r}`;
};
/** A relative path in `file` (now at `now`, written at `was`), pointed at where its target is now. */
function repoint(spec, now, was) {
  let target = posix.normalize(posix.join(posix.dirname(was), spec));
  let moved = newPlaceOf(target);
  if (!moved && !existsSync(join(ROOT, asTs(target))) && !existsSync(join(ROOT, target)) && targets.has(now)) {
    // Written in the file's old folder by a branch merged after the move.
    const old = posix.normalize(posix.join(posix.dirname(targets.get(now)), spec));
    if (newPlaceOf(old)) moved = newPlaceOf(old);
  }
  if (moved) target = moved;
  if (!moved && was === now) return spec;
  return rel(posix.dirname(now), target);
}
const SPEC = /((?:\bfrom\s+|\bimport\s*\(\s*|\bimport\s+|\bnew URL\(\s*|\bvi\.mock\(\s*)['"])(\.{1,2}\/[^'"]+)(['"])/g;
const paths = Object.entries(MOVES).flatMap(([from, to]) => [
  [from, to],
  [from.replace(/\.ts$/, '.js'), to.replace(/\.ts$/, '.js')],
]);

const problems = [];
for (const f of files()) {
  if (f === SELF || !TEXT.test(f) || f === 'package-lock.json') continue;
  const abs = join(ROOT, f);
  const text = readFileSync(abs, 'utf8');
  let out = text;
  if (CODE.test(f) && !f.startsWith('node_modules/')) {
    const was = movedNow.get(f) ?? f;
    out = out.replace(SPEC, (all, head, spec, tail) => `${head}${repoint(spec, f, was)}${tail}`);
  }
  for (const [from, to] of paths) out = out.split(from).join(to);
  if (out !== text) {
    if (check) problems.push(`${f}: names a file at its old place`);
    else writeFileSync(abs, out);
  }
  if (check) {
    for (const m of out.matchAll(RETIRED_WORD)) problems.push(`${f}: mentions ${m[0]} (a retired folder)`);
  }
}

// 4. The slow tier (SLOW_FILES in vitest.config.ts) names files by path: an entry left behind by a
// rename would let the renamed slow file run in the quick tier (`npm test`) unnoticed.
const TIERS = 'vitest.config.ts';
for (const m of readFileSync(join(ROOT, TIERS), 'utf8').matchAll(/\['(test\/[^']+)', \d+\]/g)) {
  if (!existsSync(join(ROOT, m[1]))) problems.push(`${TIERS}: SLOW_FILES names ${m[1]}, which does not exist (renamed? give the entry its new path)`);
}

if (check) {
  for (const [from, to] of pending) problems.unshift(`${from}: not yet moved to ${to}`);
  if (problems.length > 0) fail([...new Set(problems), `Run: node ${SELF}`]);
  console.log(`tests arranged: ${Object.keys(MOVES).length} moves in place, no reference to an old place`);
} else {
  console.log(`moved ${movedNow.size} file(s); references rewritten. Check: node ${SELF} --check; npx vitest run test/unit/invariants-list.test.ts`);
}
