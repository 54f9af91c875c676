/**
 * `topup validate FILE`: the dry run. Reads the file exactly as a batch would be read, checks
 * every row against the live catalog, prices it and compares the price with the balance,
 * minus what unfinished batches have already set aside. Sends no order.
 *
 * A file-level problem (a column the file's orders need is missing) is reported once, the way
 * the daemon refuses the file, not as the thousands of row problems it causes.
 */
import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { Priority } from '../api/client.js';
import { InputFileError } from '../kernel/errors.js';
import { ExitCode } from '../kernel/exit-codes.js';
import { contentHash, openOrderFile } from '../intake/formats/index.js';
import { createRowValidator, type ColumnReading } from '../intake/validate.js';
import { settleColumns } from '../intake/column-report.js';
import { findRepeat, purchaseFingerprint, repeatMessage } from '../claim/repeats.js';
import type { Runtime } from '../runtime.js';
import { openCommandContext } from './context.js';
import { renderTable, usd } from './output.js';
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

export async function quoteFile(rt: Runtime, path: string, again: boolean): Promise<Quote> {
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
  const repeats = new Map<string, Omit<RepeatGroup, 'message'>>();
  const packs = new Map<string, PackLine>();
  let rows = 0;
  let valid = 0;
  let total = 0;
  for await (const run of file.batches) {
    for (const raw of run) {
      rows++;
      const v = validator.validate(raw);
      if (!v.ok) {
        for (const p of v.problems) problems.push({ line: raw.line, column: p.column, problem: p.reason, ...(p.fileProblem ? { fileProblem: p.fileProblem } : {}) });
        continue;
      }
      const given = v.order.givenTrxid;
      const usedBy = given ? rt.rows.byTrxid(given) : undefined;
      if (usedBy) {
        problems.push({ line: raw.line, column: 'trxid', problem: `trxid ${given} was already used by batch ${usedBy.batchId}; a new purchase needs a new trxid` });
        continue;
      }
      const found = checkRepeats && !given ? findRepeat(rt, purchaseFingerprint(v.order.request), { header: header.columns, cells: raw.cells }, now) : undefined;
      const repeat = found?.e;
      if (repeat) {
        const card = v.order.request.quantity !== undefined;
        problems.push({ line: raw.line, column: 'row', problem: repeatMessage(repeat, { card, shared: found.shared }), repeatOf: repeat.batchId });
        const g = repeats.get(repeat.batchId);
        if (g) g.rows++;
        else repeats.set(repeat.batchId, { batchId: repeat.batchId, file: repeat.file, rows: 1, firstLine: raw.line });
        continue;
      }
      valid++;
      total += v.order.amountUsd;
      const o = v.order;
      const line = packs.get(o.request.pid);
      if (line) {
        line.rows++;
        line.quantity += o.quantity;
        line.usd += o.amountUsd;
      } else packs.set(o.request.pid, { game: o.gameName, slug: o.slug, pid: o.request.pid, pack: o.packName, rows: 1, quantity: o.quantity, usd: o.amountUsd });
    }
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

export function registerValidate(program: Command): void {
  program
    .command('validate')
    .description('Dry run: check every row against the live catalog, price the file and compare with the balance (sends nothing)')
    .argument('<file>', 'order file: .csv (or .tsv/.txt) or .xlsx')
    .option('--again', 'the file is meant to be ordered again (do not flag it as identical to an earlier batch)')
    .option('--json', 'print the quote and the problems as JSON')
    .addHelpText('after', '\nExit code: 0 when every row is valid and the balance covers the file; 1 otherwise (also: a file without order rows, rows that repeat an earlier purchase); 7 when the file cannot be read, or is refused as a whole (a column its orders need is missing).')
    .action(async (file: string, opts: { again?: boolean; json?: boolean }, cmd: Command) => {
      const path = resolve(file);
      if (!existsSync(path) || !statSync(path).isFile()) throw new InputFileError(`${file}: no such file`);
      const ctx = await openCommandContext(cmd);
      try {
        const q = await quoteFile(ctx.rt, path, opts.again === true);
        if (opts.json) process.stdout.write(`${JSON.stringify(q, null, 2)}\n`);
        else print(q, ctx.config.sandbox);
        process.exitCode = q.fileProblems.length > 0 ? ExitCode.InputFile : q.ok ? ExitCode.Ok : ExitCode.NotAllCompleted;
      } finally {
        await ctx.close();
      }
    });
}

/** What a terminal shows of a file's own text: no control characters. */
const plain = (s: string): string => s.replace(/[\u0000-\u001f\u007f-\u009f]/g, '?');

const CARRIED = 'yours: carried through to the result';
const SHOWN_PACKS = 20;

/** How the columns were read: one line per column read (or worth a word), the plain carried-through ones together. */
export function columnLines(columns: readonly ColumnReading[]): string[] {
  const out: string[] = [];
  const shown = columns.filter((c) => c.note !== CARRIED);
  const width = Math.min(24, Math.max(0, ...shown.map((c) => plain(c.column).length + 2)));
  for (const c of shown) out.push(`  ${`"${plain(c.column)}"`.padEnd(width)}  ${plain(c.note)}`);
  const carried = columns.filter((c) => c.note === CARRIED).map((c) => `"${plain(c.column)}"`);
  if (carried.length > 0) {
    const names = carried.length > 12 ? `${carried.slice(0, 12).join(', ')} and ${carried.length - 12} more` : carried.join(', ');
    out.push(`  carried through to the result as yours: ${names}`);
  }
  return out;
}

function print(q: Quote, sandbox: boolean): void {
  const out: string[] = [];
  if (q.fileProblems.length > 0) {
    out.push('The file would be refused whole (nothing in it would be ordered):', '');
    for (const p of q.fileProblems) out.push(`  - ${p}`);
    out.push('');
  }
  if (q.columns.length > 0) out.push('Columns:', ...columnLines(q.columns), '');
  if (q.warnings.length > 0) {
    out.push('Warnings:', ...q.warnings.map((w) => `  - ${plain(w)}`), '');
  }
  if (q.hints.length > 0) out.push(...q.hints.map((h) => `Hint: ${plain(h)}`), '');
  // The repeats are summed up per earlier batch below; --json lists every row.
  const shown = q.problems.filter((p) => p.repeatOf === undefined);
  if (shown.length > 0) {
    const bad = q.invalidRows - q.repeatRows;
    out.push(q.fileProblems.length > 0 ? 'Problems in rows besides:' : `Problems (${bad} of ${q.rows} rows cannot be sent):`, '');
    out.push(renderTable(shown, [
      { title: 'line', get: (p) => p.line, right: true },
      { title: 'column', get: (p) => plain(p.column) },
      { title: 'problem', get: (p) => plain(p.problem) },
    ]));
  }
  if (q.repeats.length > 0) {
    out.push(`Repeats of earlier purchases (${q.repeatRows} of ${q.rows} rows; every row is in --json):`, ...q.repeats.map((g) => `  - ${plain(g.message)}`), '');
  }
  if (q.rows > 0 && q.problems.length === 0 && q.fileProblems.length === 0) out.push(`All ${q.rows} rows are valid.`, '');
  if (q.duplicateOf) out.push(`This file is identical to batch ${q.duplicateOf}: submitting it would send nothing. To order it again on purpose: topup submit --again FILE`, '');
  if (q.byPack.length > 0) {
    out.push('To send, by pack:');
    const packs = q.byPack.length > SHOWN_PACKS ? q.byPack.slice(0, SHOWN_PACKS) : q.byPack;
    out.push(renderTable(packs, [
      { title: 'game', get: (p) => plain(p.game) },
      { title: 'pack', get: (p) => plain(p.pack) },
      { title: 'pid', get: (p) => plain(p.pid) },
      { title: 'rows', get: (p) => p.rows, right: true },
      { title: 'quantity', get: (p) => p.quantity, right: true },
      { title: 'USD', get: (p) => usd(p.usd), right: true },
    ]));
    if (q.byPack.length > SHOWN_PACKS) out.push(`  … and ${q.byPack.length - SHOWN_PACKS} more packs (all in --json)`, '');
  }
  out.push(`Quote${sandbox ? ' (SANDBOX balance)' : ''}:`);
  out.push(
    renderTable(
      [
        ['rows to send', `${q.validRows}`],
        ['total', `${usd(q.totalUsd)} USD`],
        ['balance', `${usd(q.balanceUsd)} USD`],
        ...(q.reservedUsd > 0 ? [['reserved by unfinished batches', `${usd(q.reservedUsd)} USD`]] : []),
        ['balance after', `${usd(q.balanceAfterUsd)} USD`],
      ] as [string, string][],
      [
        { title: 'item', get: (r) => r[0] },
        { title: 'value', get: (r) => r[1], right: true },
      ],
    ),
  );
  if (q.rows === 0 && q.fileProblems.length === 0) out.push('NOTHING TO ORDER: the file has no order rows, only its header.');
  out.push(q.affordable ? (q.ok ? `OK: ready to submit${q.warnings.length > 0 ? ' (read the warnings above first)' : ''}.` : '') : `NOT AFFORDABLE: top up at least ${usd(-q.balanceAfterUsd)} USD before submitting.`);
  process.stdout.write(out.filter((l, i, a) => !(l === '' && i === a.length - 1)).join('\n') + '\n');
}
