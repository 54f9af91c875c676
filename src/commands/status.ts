/**
 * `topup status [BATCH]`: batches with their progress and why any is waiting; for one batch,
 * its rows. Reads the store only — no API call — so it answers while the API is down.
 * With several accounts (accounts.toml): each account's pause, calls in the last minute, rows
 * waiting and USD reserved, and each row's account (balances: `topup balance`, which asks the API).
 */
import { systemClock } from '../kernel/clock.js';
import type { Command } from 'commander';
import { NotFoundError } from '../kernel/errors.js';
import { Pauses, type PauseState } from '../account/pauses.js';
import { accountQueues, callsWithinByAccount, namedAccounts } from '../ops/account-views.js';
import type { Store } from '../store/store.js';
import type { Row } from '../store/rows.js';
import { ownTrxid } from '../store/row-record.js';
import { commandConfig } from './context.js';
import { openStoreOnly } from './store-only.js';
import { durationText, etaSeconds, heldByLiveProcess, runState, snapshot, waitingWhy } from '../ops/batch-view.js';
import { runningDaemon } from '../store/presence.js';
import { startingDaemon } from '../kernel/starting-mark.js';
import { claimLookupStatus, restoreStatus } from '../ops/restore-reconcile.js';
import { storeDiskProblem, storeStopLine } from '../ops/store-disk.js';
import { ExitCode } from '../kernel/exit-codes.js';
import { addFormatOptions, formatOf, printList, renderTable, usd, when, whenUtc, wholeNumber } from './output.js';
import { basename } from 'node:path';
import type { Config } from '../config/config.js';
import { pendingAccountChanges, type Renamed } from '../store/account-identity.js';
import { configuredIdentities, pendingRenameText } from '../runtime.js';

export function registerStatus(program: Command): void {
  addFormatOptions(
    program
      .command('status')
      .description('Show batches, their progress and why any is waiting; with BATCH, that batch and its rows (works while the API is down)')
      .argument('[batch]', 'a batch id (from submit, status, or a result file name)')
      .option('--limit <n>', 'newest N batches (list only)', wholeNumber('--limit', 1, 100_000), 20)
      .option('--active', 'only batches that are not finished'),
  ).action((batchId: string | undefined, opts: { limit: number; active?: boolean; json?: boolean; csv?: boolean }, cmd: Command) => {
    const format = formatOf(opts);
    const config = commandConfig(cmd, { requireKey: false });
    // The disk first: a store that is gone is not opened (that would make an empty one), and one
    // that cannot be written is said before anything else (ops/store-disk.ts).
    const disk = storeDiskProblem(config);
    if (disk) (format === 'table' ? process.stdout : process.stderr).write(`store: ${disk.line}\n\n`);
    if (disk?.code === 'ENOENT') {
      process.exitCode = ExitCode.NotAllCompleted;
      return;
    }
    const store = openStoreOnly(config);
    try {
      const named = namedAccounts(config);
      const accounts = named ? accountLines(store, config.accounts.accounts.map((a) => a.name)) : null;
      // A batch is shown paused while any of the home's accounts is (the Accounts table says which).
      const pause = named ? (config.accounts.accounts.map((a) => Pauses.read(store.meta, a.name)).find((p) => p !== null) ?? null) : Pauses.read(store.meta);
      const now = systemClock.now();
      // Whether a daemon runs on this home: a batch nobody holds yet is then queued for it, not abandoned.
      const starting = startingDaemon(config.jobsDir);
      const running = runningDaemon(store.meta, now);
      // Its stop until a restart (the disk failed a write or a sync), said first as the disk's problems are.
      const stop = storeStopLine(running);
      if (stop) (format === 'table' ? process.stdout : process.stderr).write(`store: ${stop}\n\n`);
      const storeStopped = stop && running?.storeStopped ? { ...running.storeStopped, pid: running.pid, line: stop } : null;
      const daemon = running ?? (starting ? { pid: starting.pid, starting: true } : null);
      if (batchId) {
        const b = store.batches.get(batchId);
        if (!b) throw new NotFoundError(`no batch ${batchId} (see topup status for the list)`);
        const s = snapshot(store.rows, b.id);
        const rows = [...store.rows.iterate(b.id)];
        const etaSec = etaSeconds(b, s, pause, now);
        const info = {
          id: b.id, file: b.sourceName, origin: b.origin, state: runState(b, pause, now), why: waitingWhy(b, pause, now, daemon), etaSec,
          retryOf: b.retryOf, duplicateOf: b.duplicateOf, cancelRequested: b.cancelRequested, heldByLiveProcess: heldByLiveProcess(b, now),
          ...s, resultFile: b.finishedAt ? b.resultFile : null, createdAt: when(b.createdAt), finishedAt: when(b.finishedAt),
        };
        if (format === 'json') {
          process.stdout.write(`${JSON.stringify({ batch: info, pause, ...(storeStopped ? { storeStopped } : {}), ...(accounts ? { accounts } : {}), rows: rows.map((r) => rowJson(r, named)) }, null, 2)}\n`);
          return;
        }
        if (format === 'table') {
          process.stdout.write(
            `batch ${b.id} (${b.sourceName}, ${b.origin}${b.retryOf ? `, retry of ${b.retryOf}` : ''}): ${info.state}; ${s.done}/${s.rows} done; sent ${s.sent}; ` +
              `${s.counts.completed} completed, ${s.counts.cancelled} cancelled, ${s.counts.rejected} rejected, ${s.counts.invalid} invalid, ${s.counts.skipped} skipped; spent ${usd(s.spentUsd)} USD${etaSec === null ? '' : `; ETA ${durationText(etaSec * 1000)}`}\n` +
              `${info.why ? `why: ${info.why}\n` : ''}${info.resultFile ? `results: ${info.resultFile}\n` : ''}\n`,
          );
        }
        printList(format, rows, [
          { title: 'line', get: (r) => r.line, right: true },
          ...(named ? [{ title: 'account', get: (r: Row) => r.account }] : []),
          { title: 'state', get: (r) => r.state },
          // The row's own trxid; one moved to another account was sent there under `<own>-<account>`.
          { title: 'trxid', get: (r) => ownTrxid(r) },
          ...(rows.some((r) => r.trxid !== ownTrxid(r)) ? [{ title: 'sent as', get: (r: Row) => r.trxid }] : []),
          { title: 'orderId', get: (r) => r.orderId },
          { title: 'pack', get: (r) => r.packName },
          { title: 'usd', get: (r) => usd(r.amountUsd ?? r.expectedUsd), right: true },
          { title: 'error', get: (r) => r.error },
        ]);
        return;
      }
      const batches = store.batches.list(opts.active ? { states: ['claimed', 'open', 'duplicate'], limit: opts.limit } : { limit: opts.limit });
      const list = batches
        .filter((b) => !opts.active || b.finishedAt === null)
        .map((b) => ({ b, s: snapshot(store.rows, b.id) }))
        .map(({ b, s }) => ({
          id: b.id, file: b.sourceName, origin: b.origin, state: runState(b, pause, now), cancelRequested: b.cancelRequested, rows: s.rows, done: s.done, sent: s.sent,
          etaSec: etaSeconds(b, s, pause, now),
          completed: s.counts.completed, cancelled: s.counts.cancelled, rejected: s.counts.rejected, invalid: s.counts.invalid,
          skipped: s.counts.skipped, review: s.counts.review, spentUsd: s.spentUsd, why: waitingWhy(b, pause, now, daemon),
          createdAt: when(b.createdAt), resultFile: b.finishedAt ? b.resultFile : null,
        }));
      const restore = restoreStatus(store.meta, systemClock.now());
      if (format === 'table' && restore) process.stdout.write(`${restore.line}\n\n`);
      // A rename in accounts.toml no process has applied yet: said, never written (status only reads).
      const renames = pendingRenames(store, config);
      const file = config.accounts.file ? basename(config.accounts.file) : 'accounts.toml';
      if (format === 'table' && renames.length > 0) process.stdout.write(`${renames.map((r) => pendingRenameText(r, file)).join('\n')}\n\n`);
      // Files claimed after a restore that wait for their lookup, and why (an account not read).
      const lookups = claimLookupStatus(store.db, now, config.backup.restoreLookupWaitMs);
      if (format === 'table' && lookups.lines.length > 0) process.stdout.write(`${lookups.lines.join('\n')}\n\n`);
      if (format === 'table' && pause && !accounts) process.stdout.write(`${pauseLine(pause)}\n\n`);
      if (format === 'table' && accounts) {
        for (const a of accounts) if (a.pause) process.stdout.write(`${a.account}: ${pauseLine(a.pause, a.account)}\n`);
        process.stdout.write(`Accounts:\n${renderTable(accounts, [
          { title: 'account', get: (a) => a.account },
          { title: 'pause', get: (a) => (a.pause ? (a.pause.kind === 'operator' ? 'paused by the operator' : `${a.pause.kind} ${a.pause.code}`) : '') },
          { title: 'calls last min', get: (a) => a.callsLastMinute, right: true },
          { title: 'rows waiting', get: (a) => a.rowsWaiting, right: true },
          { title: 'reserved usd', get: (a) => usd(a.reservedUsd), right: true },
          // Rows of batches waiting for balance: nothing is set aside for them (not reserved).
          { title: 'waiting for balance usd', get: (a) => usd(a.waitingForBalanceUsd), right: true },
        ])}\n`);
      }
      printList(format, list, [
        { title: 'batch', get: (r) => r.id },
        { title: 'file', get: (r) => r.file },
        // "done 500/500" of a cancelled batch would read as if every row had been bought.
        { title: 'state', get: (r) => `${r.state}${r.cancelRequested ? (r.state === 'done' ? ' (cancelled)' : ' (cancelling)') : ''}` },
        { title: 'done', get: (r) => `${r.done}/${r.rows}`, right: true },
        { title: 'sent', get: (r) => r.sent, right: true },
        { title: 'ok', get: (r) => r.completed, right: true },
        { title: 'cancelled', get: (r) => r.cancelled, right: true },
        { title: 'rejected', get: (r) => r.rejected, right: true },
        { title: 'invalid', get: (r) => r.invalid, right: true },
        { title: 'skipped', get: (r) => r.skipped, right: true },
        { title: 'review', get: (r) => r.review, right: true },
        { title: 'usd', get: (r) => usd(r.spentUsd), right: true },
        { title: 'eta', get: (r) => (r.etaSec === null ? '' : durationText(r.etaSec * 1000)), right: true },
        { title: 'created UTC', get: (r) => r.createdAt },
        { title: 'why', get: (r) => r.why },
      ], { pause, ...(storeStopped ? { storeStopped } : {}), ...(accounts ? { accounts } : {}), ...(restore ? { restore } : {}), ...(renames.length > 0 ? { pendingRenames: renames } : {}), batches: list });
    } finally {
      store.close();
    }
  });
}

/** Renames the accounts file makes that no sending process has applied (none when a key is not at hand: identities are endpoint and key). */
function pendingRenames(store: Store, config: Config): Renamed[] {
  if (!namedAccounts(config) || config.accounts.accounts.some((a) => a.key === '')) return [];
  return pendingAccountChanges(store.db, configuredIdentities(config)).pending;
}

function pauseLine(pause: PauseState, account = 'default'): string {
  if (pause.kind === 'operator') return `Sending paused by the operator since ${whenUtc(pause.since)}${pause.detail ? ` (${pause.detail})` : ''}: topup account resume ${account} sends again (rows already sent are still followed)`;
  return pause.kind === 'account'
    ? `SENDING STOPPED: account problem ${pause.code} (${pause.detail}) since ${whenUtc(pause.since)}`
    : `Orders paused by the API: ${pause.code} since ${whenUtc(pause.since)}`;
}

interface AccountLine {
  account: string;
  pause: PauseState | null;
  /** API calls started in the last minute, by every process on the home. */
  callsLastMinute: number;
  /** Rows waiting to be sent or resent on it (every batch). */
  rowsWaiting: number;
  /** USD its unfinished batches that hold money still have to spend there. */
  reservedUsd: number;
  /** USD of its rows in batches waiting for balance (not reserved). */
  waitingForBalanceUsd: number;
}

/** Each account as the store knows it (no API call): its pause, its calls, its queue, its reserve. */
function accountLines(store: Store, names: readonly string[]): AccountLine[] {
  const calls = callsWithinByAccount(store.db, systemClock.mono());
  return accountQueues(store, names).map((q) => ({
    account: q.account,
    pause: Pauses.read(store.meta, q.account),
    callsLastMinute: calls.get(q.account) ?? 0,
    rowsWaiting: q.rowsWaiting,
    reservedUsd: q.reservedUsd,
    waitingForBalanceUsd: q.waitingForBalanceUsd,
  }));
}

/** Never the delivered codes: status output ends up in terminals and logs. */
function rowJson(r: Row, named: boolean): Record<string, unknown> {
  return {
    line: r.line, ...(named ? { account: r.account } : {}), state: r.state, trxid: ownTrxid(r), sentTrxid: r.trxid, orderId: r.orderId, pid: r.productId, pack: r.packName, quantity: r.quantity,
    expectedUsd: r.expectedUsd, amountUsd: r.amountUsd, refunded: r.refunded, error: r.error, attempts: r.attempts, codesDelivered: r.codes.length,
  };
}
