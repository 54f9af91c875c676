/**
 * Store stage: read the claimed file (CSV or .xlsx, intake/formats), validate every row against
 * the live catalog, give each valid row its trxid and exact request body, and store the rows.
 * A batch is opened whole or not at all: rows are written in chunks of STORE_CHUNK while the
 * batch is still `claimed` (memory stays flat whatever the file's size: holding 100,000 rows until
 * one transaction took 300 MB), and only the transaction that opens it makes any of them
 * sendable: nothing reads the rows of a `claimed` batch to send or to judge a repeat. A kill
 * mid-way leaves rows of a claimed batch, which the next load deletes before it writes its own.
 * A file with a file-level problem (a column its orders need is missing) is refused whole after
 * its rows were read: its rows are deleted with the refusal, so nothing can be sent.
 *
 * Each row is judged by claim/row-verdict.ts (the dry run's verdict too). trxids not given in the
 * file are derived from the file's content hash and the row index (deriveTrxid there): the same
 * file dropped again, even after the database was lost, produces the same trxids, and the API
 * replays the earlier orders instead of charging again.
 *
 * That holds only for the bytes that were hashed at claim. So once the rows are read, the file is
 * hashed again, and a file whose bytes changed since its claim (something wrote into jobs/, or a
 * batch claimed before submitted files were copied) is refused whole: nothing is stored, nothing
 * is ordered, the explanation says to drop it in again (it then gets trxids of its own bytes).
 */
import { join } from 'node:path';
import { parseSale, saleColumn } from '../intake/sale-price.js';
import { InputFileError, coerceError } from '../kernel/errors.js';
import { contentHash, openOrderFile } from '../intake/formats/index.js';
import { holdRowsInRestoreWindow, mayHoldBoughtRows } from '../store/backup.js';
import { HeldRefusals } from './held-refusals.js';
import type { HeaderMap } from '../intake/columns.js';
import { createRowValidator } from '../intake/validate.js';
import { deriveTrxid, judgeRow } from './row-verdict.js';
import { keepEarlierReading, settleColumns } from '../intake/column-report.js';
import type { CatalogIndex } from '../intake/catalog-index.js';
import { keepColumnReport, readColumnReport } from '../outbox/summary.js';
import type { Runtime } from '../runtime.js';
import type { Batch } from '../store/batches.js';
import type { NewRow } from '../store/rows.js';
import { writeFileAtomic } from '../outbox/atomic-write.js';
import { BOUGHT_BEFORE_CODE, boughtBefore, checksRepeat, orderedAgain, purchaseFingerprint, skipRepeats } from './repeats.js';
import { outboxPaths } from '../outbox/paths.js';
import { inputDialect } from '../outbox/dialect.js';
import { crashPoint } from '../kernel/crash-points.js';
import { openPlacer, placedRow, readCatalogs, readsAccountColumn, withPinColumn, type Placer } from './placement.js';
import { accountColumn } from '../intake/account-column.js';
import { countCheck } from '../api/player-check-counts.js';
import { CheckPlanner, notFoundMessage, overrideColumn, PLAYER_NOT_FOUND_CODE, runChecks, saysSendWithoutCheck } from './player-checks.js';

export { deriveTrxid } from './row-verdict.js';

/** Rows written per transaction while the batch is claimed: memory per chunk, one commit per chunk. */
const STORE_CHUNK = 2_000;

export type LoadOutcome =
  | { loaded: true; rows: number }
  | { loaded: false; reason: 'file-error' | 'catalog' | 'not-ours'; message: string }
  /** Player checks owed (claim/player-checks.ts): the batch stays claimed; `soon`: load again at once (progress was made). */
  | { loaded: false; reason: 'player-checks'; message: string; soon: boolean };

/** What storing a batch reads and writes: the store, the live catalog (account), settings, log, clock, and this process's lease on the batch (owner). */
type LoadParts = Pick<Runtime, 'accounts' | 'batches' | 'clock' | 'config' | 'db' | 'entropy' | 'log' | 'meta' | 'owner' | 'routing' | 'rows'>;

/** How long one load sends player checks before it lets the engine's other stages run (and loads again). */
export const CHECKS_PER_LOAD_MS = 10_000;

export async function loadBatch(rt: LoadParts, batch: Batch): Promise<LoadOutcome> {
  const path = join(rt.config.home, batch.jobFile);
  const duplicate = batch.duplicateOf ? rt.batches.get(batch.duplicateOf) : undefined;
  let file: Awaited<ReturnType<typeof openOrderFile>>;
  try {
    file = await openOrderFile(path);
  } catch (err) {
    const e = coerceError(err);
    if (!(e instanceof InputFileError) && (err as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    failBatch(rt, batch, e.message);
    return { loaded: false, reason: 'file-error', message: e.message };
  }

  let validator: ReturnType<typeof createRowValidator> | undefined;
  /**
   * After a restore (mayHoldBoughtRows): rows the catalog refuses now are held for their lookup
   * instead of refused (claim/held-refusals.ts); `strict` says which valid rows the catalog's stock
   * and cap would refuse now.
   */
  let held: HeldRefusals | null = null;
  let strict: ReturnType<typeof createRowValidator> | undefined;
  let headerMap: HeaderMap | undefined;
  let placer: Placer | undefined;
  /** The file's pid column, if any: a row naming its pack by a pid several accounts use differently is refused (placement.ts). */
  let pidColumn: number | undefined;
  if (!duplicate) {
    let index: CatalogIndex;
    let mayBeBought = false;
    try {
      // Every account's catalog: a row is validated against them all and placed on one (placement.ts).
      // After a restore a row of this file may have been bought already, taking the last stock or
      // before a price rise (store/backup.ts mayHoldBoughtRows): neither the validator nor the router
      // judges stock or the cap then (the send does, after the restore lookup).
      mayBeBought = mayHoldBoughtRows(rt.db, rt.clock.now());
      placer = await openPlacer(rt, await readCatalogs(rt), file.header.header.columns, { mayBeBought });
      index = placer.index;
    } catch (err) {
      file.close();
      const message = `cannot read the catalog: ${coerceError(err).message}`;
      rt.batches.setWait(batch.id, 'catalog', message);
      return { loaded: false, reason: 'catalog', message };
    }
    try {
      // An Amount / Count column is read as the quantity only when the file's rows show it is one;
      // a retry reads it as the batch it retries did.
      const earlier = retriedReport(rt, batch);
      const header = earlier ? keepEarlierReading(file.header.header, earlier) : await settleColumns(path, file.header.header, index);
      validator = createRowValidator(header, index, { capAtPlacement: placer.judgesCap, ...(mayBeBought ? { availability: false } : {}) });
      headerMap = header;
      if (mayBeBought) {
        held = HeldRefusals.open(rt.db, rt.accounts.map((a) => a.id), batch.id, rt.clock.now());
        if (held) strict = createRowValidator(header, index, { capAtPlacement: placer.judgesCap });
      }
      pidColumn = header.fields.pid;
    } catch (err) {
      file.close();
      const e = coerceError(err);
      if (!(e instanceof InputFileError)) throw e;
      failBatch(rt, batch, e.message);
      return { loaded: false, reason: 'file-error', message: e.message };
    }
  }

  // Each chunk is written only while the batch is still `claimed` and ours: a process that stalled
  // past its lease must not write rows into a batch another process has taken over.
  const ours = (): boolean => {
    const cur = rt.batches.get(batch.id);
    return cur !== undefined && cur.state === 'claimed' && cur.owner === rt.owner && cur.leaseUntil > rt.clock.now();
  };
  const now = rt.clock.now();
  let rows: NewRow[] = [];
  let total = 0;
  let invalid = 0;
  const flush = (): boolean => {
    const written = rt.db.transaction(() => {
      if (!ours()) return false;
      rt.rows.insertAll(batch.id, rows, now);
      return true;
    }).immediate();
    total += rows.length;
    invalid += rows.filter((r) => r.request === null).length;
    rows = [];
    if (written) crashPoint('rows-chunk-stored');
    return written;
  };
  // Rows an earlier load of this batch wrote before it was killed.
  if (!rt.db.transaction(() => ours() && (rt.rows.deleteBatchRows(batch.id), true)).immediate()) {
    file.close();
    return notOurs(rt, batch);
  }
  // Repeats of earlier purchases are judged against the batches before this one (claim/repeats.ts).
  const checkRepeats = rt.config.repeatWindowMs > 0 && !orderedAgain(batch);
  const claimedAt = batch.createdAt;
  // Player checks (claim/player-checks.ts): decided per row from the cache, in the transaction that stores it.
  const checks = !duplicate && rt.config.playerChecks.lines !== 'off' ? new CheckPlanner(rt) : undefined;
  const overrideAt = overrideColumn(file.header.header.columns);
  // The reseller's own sale price, where a column gives it (intake/sale-price.ts): margins only.
  const saleAt = saleColumn(file.header.header.columns);
  try {
    for await (const run of file.batches) {
      if (rows.length >= STORE_CHUNK && !flush()) {
        file.close();
        return notOurs(rt, batch);
      }
      for (const raw of run) {
        const base = { idx: raw.index, line: raw.line, cells: raw.cells };
        if (duplicate) {
          rows.push({ ...base, request: null, skipped: true, error: duplicateMessage(rt, duplicate, batch) });
          continue;
        }
        // The same verdict as the dry run's (claim/row-verdict.ts): parse, catalog checks, the trxid not used.
        const verdict = judgeRow(raw, { validator: validator!, trxidSeed: batch.contentHash, usedBy: (t) => rt.rows.byTrxid(t), boughtBefore: (u, t) => boughtBefore(rt, u, t) });
        // The strict verdict first: it also keeps its own count of the file's trxids.
        const strictOk = strict ? strict.validate(raw).ok : true;
        if (!verdict.ok && held && !verdict.boughtBefore) {
          // Refused now, maybe bought before the restore: held for its lookup (claim/held-refusals.ts).
          const row = holdRow(rt, held, raw, headerMap!, batch, verdict.error, now);
          if (row) {
            rows.push(row);
            continue;
          }
        }
        if (!verdict.ok) {
          rows.push({ ...base, request: null, error: verdict.error, ...(verdict.boughtBefore ? { skipped: true, rejectCode: BOUGHT_BEFORE_CODE, repeatOf: verdict.repeatOf ?? null } : {}) });
          continue;
        }
        // The purchase is fingerprinted by its pack (placement.ts packKey: the pid with one account,
        // the pack itself with several), before an account's pid replaces the file's.
        const fingerprint = purchaseFingerprint({ ...verdict.order.request, pid: placer!.packKey(verdict.order) });
        const fingerprintAlts = placer!.pidKeys(verdict.order).map((pid) => purchaseFingerprint({ ...verdict.order.request, pid }));
        const placed = placer!.place(verdict.order, raw.cells, pidColumn !== undefined && (raw.cells[pidColumn] ?? '').trim() !== '');
        if (!placed.ok && held) {
          const row = holdRow(rt, held, raw, headerMap!, batch, placed.error, now);
          if (row) {
            rows.push(row);
            continue;
          }
        }
        if (held) held.seen(verdict.trxid!);
        if (!placed.ok) {
          rows.push({ ...base, request: null, error: placed.error });
          continue;
        }
        let playerName: string | null = null;
        if (checks) {
          const j = checks.judge(placed.order.slug, placed.order.request, placed.account, saysSendWithoutCheck(raw.cells, overrideAt));
          if (j.kind === 'cached' && j.answer.outcome === 'not-found') {
            // Never sendable: born invalid, with why and how to buy it anyway.
            rows.push({ ...base, request: null, error: notFoundMessage(j.answer), rejectCode: PLAYER_NOT_FOUND_CODE, slug: placed.order.slug, productId: placed.order.request.pid, packName: placed.order.packName });
            continue;
          }
          if (j.kind === 'cached') playerName = j.answer.name ?? '';
        }
        // Valid without what the catalog says now, refused with it: looked up before it is sent.
        if (held && !strictOk) held.lookUpFirst(raw, verdict.trxid!, now);
        rows.push({
          ...base,
          ...placedRow(placed, verdict.trxid!),
          playerName,
          fingerprint,
          fingerprintAlts,
          // Judged when the batch opens, in the same transaction (repeats.ts skipRepeats).
          repeatCheck: checkRepeats && checksRepeat(batch, placed.order.givenTrxid),
          saleUsd: saleAt === undefined ? null : parseSale(raw.cells[saleAt]),
        });
      }
    }
  } catch (err) {
    const e = coerceError(err);
    if (!(e instanceof InputFileError)) throw e;
    failBatch(rt, batch, e.message);
    return { loaded: false, reason: 'file-error', message: e.message };
  }

  // Every row is read and validated; the batch opens below. Another process may store and open a
  // batch meanwhile (an edited copy of this file): the opening transaction decides repeats then.
  await rt.clock.yield();
  const claimed = batch.contentHash.split(':')[0]!;
  if ((await contentHash(path)) !== claimed) {
    const message = `${batch.sourceName} changed after it was claimed: its bytes are not the ones checked for duplicates and used for its trxids, so none of its rows was ordered. Drop the file in again (or submit it again) to order it as it is now.`;
    failBatch(rt, batch, message, 'changed');
    return { loaded: false, reason: 'file-error', message };
  }

  const fileProblems = validator?.fileProblems() ?? [];
  if (fileProblems.length > 0) {
    const message = fileProblems.map((p) => p.message).join('\n');
    failBatch(rt, batch, message, 'refused');
    return { loaded: false, reason: 'file-error', message };
  }

  // Players owed a check: the batch is not opened (nothing of it can be sent) until every one is
  // answered. The answers are kept as they come; the next load decides the rows from them.
  if (checks && checks.pending.size > 0) {
    file.close();
    const run = await runChecks(rt, checks.pending.values(), batch.id, CHECKS_PER_LOAD_MS);
    const message = `player checks: ${checks.pending.size - run.settled} of ${checks.players.size} players still to check` +
      (run.lastProblem ? `; last: ${run.lastProblem}` : '');
    rt.db.transaction(() => {
      if (ours()) rt.batches.setWait(batch.id, 'player-checks', message);
    }).immediate();
    return { loaded: false, reason: 'player-checks', message, soon: run.settled > 0 && !run.refused };
  }

  // How the columns were read, for the summary written when the batch ends (outbox/summary.ts).
  // Kept before the batch opens: a kill between leaves a claimed batch, loaded again from the start.
  if (validator) keepColumnReport(rt, batch, withPinColumn(validator.columns(), rt, file.header.header.columns));

  // The last chunk and the opening in one transaction, still only while the batch is ours.
  const last = rows;
  rows = [];
  let repeats = 0;
  const stored = rt.db.transaction(() => {
    if (!ours()) return false;
    rt.rows.insertAll(batch.id, last, now);
    // The held rows' marks in the transaction that opens the batch: none of them is sendable unmarked.
    if (held && held.marks.length > 0) holdRowsInRestoreWindow(rt.db, held.marks);
    rt.batches.setDialect(batch.id, inputDialect(rt, batch, file.header));
    // Repeats of earlier purchases: decided here, in the transaction that opens the batch, so two
    // processes opening edited copies of one file cannot both buy (claim/repeats.ts).
    if (checkRepeats) repeats = skipRepeats(rt, batch, file.header.header.columns, claimedAt - rt.config.repeatWindowMs, rt.clock.now());
    if (duplicate) {
      rt.batches.markDuplicate(batch.id, file.header.header.columns);
    } else {
      rt.batches.open(batch.id, file.header.header.columns);
    }
    rt.batches.setWait(batch.id, null, null);
    return true;
  }).immediate();
  if (!stored) return notOurs(rt, batch);
  // Players this batch was decided for by answers kept from before it was claimed (validate, an
  // earlier file, the order API): checks it did not have to make (api/player-check-counts.ts).
  if (checks) countCheck('file', 'cached', [...checks.keptAt.values()].filter((at) => at < claimedAt).length);
  total += last.length;
  invalid += last.filter((r) => r.request === null).length;
  rt.log.info({ batch: batch.id, rows: total, invalid, repeats, duplicateOf: duplicate?.id }, 'batch stored');
  return { loaded: true, rows: total };
}

/** The column report of the batch a retry batch retries (`topup retry`, also `--repeats`: named in its file name). */
function retriedReport(rt: Pick<Runtime, 'batches' | 'config'>, batch: Batch): ReturnType<typeof readColumnReport> {
  if (batch.origin !== 'retry') return null;
  const id = batch.retryOf ?? /\.retry-(b\d{6}-[0-9a-f]{6})\.csv$/i.exec(batch.sourceName)?.[1];
  const earlier = id === undefined ? undefined : rt.batches.get(id);
  return earlier ? readColumnReport(rt, earlier) : null;
}

function notOurs(rt: Pick<Runtime, 'log'>, batch: Batch): LoadOutcome {
  rt.log.warn({ batch: batch.id }, 'batch is no longer ours to store (taken over or already stored); left alone');
  return { loaded: false, reason: 'not-ours', message: 'the batch is no longer ours to store' };
}

function duplicateMessage(rt: Pick<Runtime, 'config'>, earlier: Batch, batch: Batch): string {
  const when = new Date(earlier.createdAt).toISOString();
  return (
    `duplicate of batch ${earlier.id} (${earlier.sourceName}, claimed ${when}): the same file was already processed, so nothing was sent. ` +
    `To order these rows again on purpose, run: topup submit --again ${join(rt.config.home, batch.jobFile)}`
  );
}

/**
 * The explanation is written before the batch is marked failed: a kill between leaves a retry, not silence.
 * `unreadable`: the file could not be read as an order table; `refused`: it was read, but its
 * columns do not fit its orders, so none of them was ordered; `changed`: its bytes are not the
 * ones claimed; `gone`: the claimed file was not there to read (claim.ts recoverClaims).
 */
export type FailKind = 'unreadable' | 'refused' | 'changed' | 'gone';

export function failBatch(rt: Pick<Runtime, 'batches' | 'clock' | 'config' | 'db' | 'log' | 'rows'>, batch: Batch, message: string, why: FailKind = 'unreadable'): void {
  const { errorFile } = outboxPaths(rt, batch);
  const opening = {
    refused: `topup-runner read ${batch.sourceName} (batch ${batch.id}) but refused the whole file: no row was ordered.`,
    unreadable: `topup-runner could not read ${batch.sourceName} (batch ${batch.id}).`,
    changed: `topup-runner refused ${batch.sourceName} (batch ${batch.id}): the file changed after it was claimed.`,
    gone: `topup-runner claimed ${batch.sourceName} (batch ${batch.id}), but the file was not there to read.`,
  }[why];
  const kept = why === 'gone' ? '' : ` The file is kept in ${join(rt.config.home, batch.jobFile)}.`;
  const fix =
    why === 'gone' || why === 'changed'
      ? 'To order it, drop the file into the inbox again (or run topup submit FILE).\n'
      : 'Fix it (a .csv saved as "CSV UTF-8", or an .xlsx workbook, with a header row) and drop it into the inbox again.\n';
  writeFileAtomic(errorFile, `${opening}\n\n${message}\n\nNothing was sent and nothing was charged.${kept}\n${fix}`);
  // Rows already written in chunks (load above) go with the refusal: a failed batch has none.
  // Only while it is still `claimed`: the rows of an opened batch are never deleted here.
  rt.db.transaction(() => {
    if (rt.batches.get(batch.id)?.state === 'claimed') rt.rows.deleteBatchRows(batch.id);
    rt.batches.fail(batch.id, message, rt.clock.now());
  }).immediate();
  const said = { refused: 'file refused: its columns do not fit its orders', unreadable: 'file is not a usable order file', changed: 'file refused: it changed after it was claimed', gone: 'claimed file is gone; nothing of it was ordered' }[why];
  rt.log.error({ batch: batch.id, file: batch.sourceName, problem: message }, said);
}

/**
 * A row refused now while it may have been bought before the restore (claim/held-refusals.ts):
 * pending under the trxid it was sent with, held by its lookup mark; undefined when it cannot be
 * looked up (a blank or unreadable row, a trxid malformed, repeated, or held by another batch).
 */
function holdRow(rt: LoadParts, held: HeldRefusals, raw: Parameters<typeof judgeRow>[0], header: HeaderMap, batch: Batch, error: string, now: number): NewRow | undefined {
  if (raw.parseError !== undefined || raw.cells.every((c) => c.trim() === '')) return undefined;
  const at = header.fields.trxid;
  const given = at === undefined ? '' : (raw.cells[at] ?? '').trim();
  const trxid = given !== '' ? given : deriveTrxid(batch.contentHash, raw.index);
  if (rt.rows.byTrxid(trxid) !== undefined) return undefined;
  // On the account the file pins it to, when it names one of this home's (as placement reads the
  // column: claim/placement.ts): held elsewhere, its result named an account the file forbids
  // (the simulator, stop 38: "the file pins it to account second"). Else the first account: any
  // account is looked up for it anyway, and it is never sent from here.
  const pinAt = readsAccountColumn(rt) ? accountColumn(header.columns) : undefined;
  const pin = pinAt === undefined ? '' : (raw.cells[pinAt] ?? '').trim().toLowerCase();
  const account = rt.accounts.find((a) => a.id === pin)?.id ?? rt.accounts[0]?.id;
  if (account === undefined) return undefined;
  return held.hold(raw, header, trxid, account, error, now);
}
