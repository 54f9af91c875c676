/**
 * The dry run of an order file, for `topup validate` and the console's upload check alike: the
 * file read exactly as a batch would be read, every row judged by the load's own verdict
 * (claim/row-verdict.ts), priced against the live catalog and compared with the balance, minus what
 * unfinished batches have already set aside. Sends no order, writes nothing.
 *
 * A file-level problem (a column the file's orders need is missing) is reported once, the way
 * the daemon refuses the file, not as the thousands of row problems it causes.
 */
import { Priority } from '../api/client.js';
import { contentHash, openOrderFile } from '../intake/formats/index.js';
import { createRowValidator, type ColumnReading } from '../intake/validate.js';
import { settleColumns } from '../intake/column-report.js';
import { findRepeats, isTopUp, purchaseFingerprint, repeatMessage, type RowInFile } from '../claim/repeats.js';
import { judgeRow } from '../claim/row-verdict.js';
import type { Runtime } from '../runtime.js';
import { roundCents as cents } from '../kernel/money.js';

export interface Quote {
  file: string;
  rows: number;
  validRows: number;
  invalidRows: number;
  /** Of invalidRows: rows that repeat an earlier batch's purchase and would be skipped (see `repeats`). */
  repeatRows: number;
  /** Reads `csv` or `xlsx` (and the sheet read, for a workbook). */
  format: string;
  sheet?: string;
  /** Problems with the file as a whole: when there is one, the daemon would order nothing from it. */
  fileProblems: string[];
  /** Every row's problems, the repeats among them (one entry per row: `repeats` sums them up). */
  problems: { line: number; column: string; problem: string; repeatOf?: string }[];
  /** The repeated rows, one entry per earlier batch they repeat. */
  repeats: RepeatGroup[];
  /** How each column of the file was read (intake/column-report.ts); [] when the file was refused before its rows were read. */
  columns: ColumnReading[];
  /** About the file as a whole: columns that look like order fields but are not read, a file without order rows. */
  warnings: string[];
  /** Advice (a column of your own order numbers could be the trxid). */
  hints: string[];
  /** The rows to send, by pack: what the total is made of. */
  byPack: PackLine[];
  totalUsd: number;
  balanceUsd: number;
  /** USD that unfinished batches still have to spend: already promised. */
  reservedUsd: number;
  balanceAfterUsd: number;
  affordable: boolean;
  duplicateOf: string | null;
  ok: boolean;
}

export interface RepeatGroup {
  batchId: string;
  file: string;
  rows: number;
  firstLine: number;
  /** One sentence for people, as validate prints it. */
  message: string;
}

export interface PackLine {
  game: string;
  slug: string;
  pid: string;
  pack: string;
  rows: number;
  /** Codes (keys/cards) or top-ups bought. */
  quantity: number;
  usd: number;
}

export const NO_ROWS = 'the file has no order rows (only its header): nothing would be ordered; was it saved before the rows were added, or exported with a filter that hid them?';

/** `24 h`, `90 min`: the repeat window as people say it. */
export function windowText(ms: number): string {
  return ms % 3_600_000 === 0 ? `${ms / 3_600_000} h` : `${Math.round(ms / 60_000)} min`;
}

export async function quoteFile(rt: Pick<Runtime, 'account' | 'batches' | 'clock' | 'config' | 'rows'>, path: string, again: boolean): Promise<Quote> {
  const hash = await contentHash(path);
  const earlier = again ? undefined : rt.batches.findByContent(hash);
  const file = await openOrderFile(path);
  const { index } = await rt.account.catalog.get().catch((err: unknown) => {
    file.close();
    throw err;
  });
  // Amount / Count columns are read as the quantity only when the rows show they are one.
  const header = await settleColumns(path, file.header.header, index).catch((err: unknown) => {
    file.close();
    throw err;
  });
  const validator = createRowValidator(header, index);
  const problems: (Quote['problems'][number] & { fileProblem?: string })[] = [];
  // Rows repeating a purchase an earlier batch placed recently would be skipped (claim/repeats.ts).
  const checkRepeats = !again && rt.config.repeatWindowMs > 0;
  const now = rt.clock.now();
  // Rows to check are decided together once read, as the load decides a file's rows at once.
  type Valid = Extract<ReturnType<typeof judgeRow>, { ok: true }>['order'];
  const toCheck: (RowInFile & { fingerprint: string; order: Valid })[] = [];
  const repeats = new Map<string, Omit<RepeatGroup, 'message'>>();
  const packs = new Map<string, PackLine>();
  let rows = 0;
  let valid = 0;
  let total = 0;
  for await (const run of file.batches) {
    for (const raw of run) {
      rows++;
      // The load's own verdict (claim/row-verdict.ts): a row passes here only if the load stores it.
      // The batch's trxids would be derived from these bytes (`hash`); with --again from a hash
      // salted with the new batch's id, new by construction. A file identical to an earlier batch
      // (duplicateOf) derives none: the load skips every row of it as a duplicate, said once.
      const v = judgeRow(raw, { validator, trxidSeed: again || earlier ? null : hash, usedBy: (t) => rt.rows.byTrxid(t) });
      if (!v.ok) {
        for (const p of v.problems) problems.push({ line: raw.line, column: p.column, problem: p.reason, ...(p.fileProblem ? { fileProblem: p.fileProblem } : {}) });
        continue;
      }
      if (checkRepeats && !v.order.givenTrxid) {
        toCheck.push({ header: header.columns, cells: raw.cells, line: raw.line, topUp: isTopUp(v.order.request), fingerprint: purchaseFingerprint(v.order.request), order: v.order });
        continue;
      }
      count(v.order);
    }
  }
  const found = findRepeats(rt, now, toCheck);
  toCheck.forEach((r, i) => {
    const f = found[i];
    if (!f) return count(r.order);
    problems.push({ line: r.line!, column: 'row', problem: repeatMessage(f.e, { card: !r.topUp, shared: f.shared }), repeatOf: f.e.batchId });
    const g = repeats.get(f.e.batchId);
    if (g) g.rows++;
    else repeats.set(f.e.batchId, { batchId: f.e.batchId, file: f.e.file, rows: 1, firstLine: r.line! });
  });
  problems.sort((a, b) => a.line - b.line);
  function count(o: Valid): void {
    valid++;
    total += o.amountUsd;
    const line = packs.get(o.request.pid);
    if (line) {
      line.rows++;
      line.quantity += o.quantity;
      line.usd += o.amountUsd;
    } else packs.set(o.request.pid, { game: o.gameName, slug: o.slug, pid: o.request.pid, pack: o.packName, rows: 1, quantity: o.quantity, usd: o.amountUsd });
  }
  const fileProblems = validator.fileProblems();
  const report = validator.columns();
  const echoes = new Set(fileProblems.map((p) => p.key));
  const rowProblems = problems.filter((p) => p.fileProblem === undefined || !echoes.has(p.fileProblem)).map(({ fileProblem: _, ...p }) => p);
  const { balanceUsd } = await rt.account.client.balance({ priority: Priority.lookup });
  const reserved = rt.rows.reservedUsd();
  const refused = fileProblems.length > 0;
  const totalUsd = refused ? 0 : cents(total);
  const balanceAfterUsd = cents(balanceUsd - reserved - totalUsd);
  const affordable = balanceAfterUsd >= -1e-9;
  const window = windowText(rt.config.repeatWindowMs);
  const repeatRows = [...repeats.values()].reduce((n, g) => n + g.rows, 0);
  return {
    file: path,
    format: file.header.format,
    ...(file.header.sheet ? { sheet: file.header.sheet } : {}),
    fileProblems: fileProblems.map((p) => p.message),
    rows,
    validRows: refused ? 0 : valid,
    invalidRows: refused ? rows : rows - valid,
    repeatRows,
    problems: rowProblems,
    repeats: [...repeats.values()].map((g) => ({
      ...g,
      message:
        `${g.rows === 1 ? '1 row (line' : `${g.rows.toLocaleString('en-US')} rows (the first on line`} ${g.firstLine}) ${g.rows === 1 ? 'repeats a purchase' : 'repeat purchases'} of batch ${g.batchId} (file ${g.file}) made within ${window}: ` +
        `${g.rows === 1 ? 'it' : 'they'} will be skipped, not bought again; give ${g.rows === 1 ? 'the row its' : 'rows their'} own trxid to buy ${g.rows === 1 ? 'it' : 'them'}`,
    })),
    columns: report.columns,
    warnings: rows === 0 ? [NO_ROWS, ...report.warnings] : report.warnings,
    hints: report.hints,
    byPack: refused ? [] : [...packs.values()].map((p) => ({ ...p, usd: cents(p.usd) })).sort((a, b) => a.game.localeCompare(b.game) || a.pack.localeCompare(b.pack) || a.pid.localeCompare(b.pid)),
    totalUsd,
    balanceUsd,
    reservedUsd: reserved,
    balanceAfterUsd,
    affordable,
    duplicateOf: earlier?.id ?? null,
    ok: !refused && rows > 0 && valid === rows && affordable && !earlier,
  };
}
