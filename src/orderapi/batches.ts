/**
 * A file over HTTP (POST /api/v1/batches), handled exactly as an inbox file: its bytes become a
 * batch through claimFile, the one way a file becomes a batch, so the same rules hold (a file
 * whose bytes match an earlier batch's is a duplicate and orders nothing; every row is parsed and
 * validated by the same intake when the runner stores it; every row gets one line in
 * outbox/<name>.result.csv). The answer (202, the batch's id) comes as soon as the claim is
 * committed: storing and ordering go on in the runner, woken at once.
 *
 * Why not drop it into inbox/: the inbox waits for a file to settle (about 2 s) and the batch id
 * would only be known later. Why claim from a staging folder named like `topup submit`'s
 * (jobs/.submit-<8 hex>/) with origin `submit`: a daemon killed between the claim's commit and
 * the move finds the bytes there at its start (recoverClaims) and goes on with the batch, and a
 * folder left by a kill before the commit is swept like submit's (nothing of it was ordered).
 * (An `api` origin would name it better: BatchOrigin is the store's, see the report.)
 *
 * A JSON array of orders is written as a CSV with the API's field names as its header (the
 * intake reads those names first), `meta` as a JSON cell carried through to the result.
 */
import { closeSync, fsyncSync, mkdirSync, openSync, rmSync, writeSync } from 'node:fs';
import { basename, extname, join } from 'node:path';
import { claimFile, STAGING_PREFIX } from '../claim/claim.js';
import { csvText } from '../kernel/csv-text.js';
import { UsageError } from '../kernel/errors.js';
import type { Runtime } from '../runtime.js';
import type { Batch } from '../store/batches.js';
import { snapshot } from '../ops/batch-view.js';
import { outboxPaths } from '../outbox/paths.js';
import { safeFileName } from '../console/uploads.js';
import type { z } from '@hono/zod-openapi';
import type { BatchOrderSchema, BatchViewSchema } from './schemas.js';
import { batchNameProblem } from './schemas.js';

export const XLSX_TYPE = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';
export type BatchBodyKind = 'csv' | 'xlsx' | 'json';

/** The kind of body a Content-Type names, or undefined (415). */
export function batchBodyKind(contentType: string | undefined): BatchBodyKind | undefined {
  const essence = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  if (essence === 'text/csv') return 'csv';
  if (essence === XLSX_TYPE) return 'xlsx';
  if (essence === 'application/json') return 'json';
  return undefined;
}

/** The order fields as CSV columns, in the order a person would write them. */
const COLUMNS = ['trxid', 'pid', 'slug', 'pack', 'userId', 'zoneId', 'serverId', 'region', 'moreId', 'quantity', 'maxPriceUsd', 'account', 'sendWithoutCheck', 'meta'] as const;

/** A JSON array of orders as CSV text: only the columns some order uses; meta as a JSON cell. */
export function ordersCsv(orders: readonly z.infer<typeof BatchOrderSchema>[]): string {
  const used = COLUMNS.filter((c) => orders.some((o) => o[c] !== undefined));
  const cell = (v: unknown): string => (v === undefined ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v));
  return csvText([used, ...orders.map((o) => used.map((c) => cell(o[c])))]);
}

/**
 * The file name the batch gets: the one asked for (made safe, as the console's uploads), or
 * api-<time>.<ext>. Refused (UsageError, 422 INVALID_NAME naming the field), never quietly
 * changed into another name: a name with a path in it (`../../evil.csv` used to become
 * `evil.csv`), and a name with nothing a file name can keep (`???.csv` used to become
 * `upload.csv`). Nothing is ever written outside the staging folder either way.
 */
export function batchFileName(asked: string | undefined, kind: BatchBodyKind, now: number): string {
  const ext = kind === 'xlsx' ? '.xlsx' : '.csv';
  if (asked === undefined || asked.trim() === '') {
    return `api-${new Date(now).toISOString().slice(0, 19).replace(/[-:]/g, '').replace('T', '-')}${ext}`;
  }
  if (/[\\/]/.test(asked)) throw new UsageError(batchNameProblem(asked, ext));
  const withExt = extname(asked) === '' ? `${asked}${ext}` : asked;
  // Without a letter or digit before the extension, safeFileName would make the name up
  // (`upload.csv`), or read `???.csv` as no extension at all: say what is wrong instead.
  if (!/[\p{L}\p{N}]/u.test(withExt.slice(0, withExt.length - extname(withExt).length))) throw new UsageError(batchNameProblem(asked, ext));
  const name = safeFileName(withExt);
  const got = extname(name).toLowerCase();
  const fits = kind === 'xlsx' ? got === '.xlsx' : got !== '.xlsx';
  if (!fits) throw new UsageError(`name "${asked.slice(0, 200)}" ends ${got}, but the body is ${kind === 'xlsx' ? 'a workbook (.xlsx)' : 'CSV text'}`);
  return name;
}

/** Writes the bytes into a staging folder of jobs/ and claims them as a batch (see the top). */
export async function claimBatchBytes(rt: Runtime, bytes: Uint8Array, fileName: string): Promise<Batch> {
  const dir = join(rt.config.jobsDir, `${STAGING_PREFIX}${rt.entropy.hex(4)}`);
  mkdirSync(dir, { mode: 0o700 });
  try {
    const path = join(dir, fileName);
    const fd = openSync(path, 'wx', 0o600);
    try {
      for (let off = 0; off < bytes.length; ) off += writeSync(fd, bytes, off);
      // Durable before the claim commits: a claim must never point at bytes a crash could lose.
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    return await claimFile(rt, path, { move: true, origin: 'submit' });
  } finally {
    // The file was moved into jobs/<batch>/ (or the claim failed): the folder is empty or stale.
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A batch as GET /api/v1/batches/{id} shows it. */
export function batchView(rt: Runtime, b: Batch): z.infer<typeof BatchViewSchema> {
  const s = snapshot(rt.rows, b.id);
  const done = b.finishedAt !== null && b.state !== 'failed';
  const self = `/api/v1/batches/${encodeURIComponent(b.id)}`;
  return {
    id: b.id,
    name: b.sourceName,
    origin: b.origin,
    state: b.state,
    done,
    duplicateOf: b.duplicateOf,
    fileError: b.fileError,
    waitReason: b.waitReason,
    waitDetail: b.waitDetail,
    cancelRequested: b.cancelRequested,
    rows: s.rows,
    counts: s.counts,
    spentUsd: s.spentUsd,
    resultFile: done ? basename(outboxPaths(rt, b).resultFile) : null,
    createdAt: new Date(b.createdAt).toISOString(),
    finishedAt: b.finishedAt === null ? null : new Date(b.finishedAt).toISOString(),
    links: { self, result: `${self}/result` },
  };
}
