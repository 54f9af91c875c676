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
import { InputFileError } from '../errors.js';
import { ExitCode } from '../exit-codes.js';
import { contentHash, openOrderFile } from '../intake/formats/index.js';
import { createRowValidator } from '../intake/validate.js';
import { findRepeat, purchaseFingerprint, repeatMessage } from '../claim/repeats.js';
import type { Runtime } from '../runtime.js';
import { openCommandContext } from './context.js';
import { renderTable, usd } from './output.js';
import { roundCents as cents } from '../money.js';

export interface Quote {
  file: string;
  rows: number;
  validRows: number;
  invalidRows: number;
  /** Reads `csv` or `xlsx` (and the sheet read, for a workbook). */
  format: string;
  sheet?: string;
  /** Problems with the file as a whole: when there is one, the daemon would order nothing from it. */
  fileProblems: string[];
  problems: { line: number; column: string; problem: string }[];
  totalUsd: number;
  balanceUsd: number;
  /** USD that unfinished batches still have to spend: already promised. */
  reservedUsd: number;
  balanceAfterUsd: number;
  affordable: boolean;
  duplicateOf: string | null;
  ok: boolean;
}


export async function quoteFile(rt: Runtime, path: string, again: boolean): Promise<Quote> {
  const hash = await contentHash(path);
  const earlier = again ? undefined : rt.batches.findByContent(hash);
  const file = await openOrderFile(path);
  const { index } = await rt.catalog.get().catch((err: unknown) => {
    file.close();
    throw err;
  });
  const validator = createRowValidator(file.header.header, index);
  const problems: (Quote['problems'][number] & { fileProblem?: string })[] = [];
  // Rows repeating a purchase an earlier batch placed recently would be skipped (claim/repeats.ts).
  const checkRepeats = !again && rt.config.repeatWindowMs > 0;
  const now = rt.clock.now();
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
      const repeat = checkRepeats && !given ? findRepeat(rt, purchaseFingerprint(v.order.request), now) : undefined;
      if (repeat) {
        problems.push({ line: raw.line, column: 'row', problem: repeatMessage(repeat) });
        continue;
      }
      valid++;
      total += v.order.amountUsd;
    }
  }
  const fileProblems = validator.fileProblems();
  const echoes = new Set(fileProblems.map((p) => p.key));
  const rowProblems = problems.filter((p) => p.fileProblem === undefined || !echoes.has(p.fileProblem)).map(({ fileProblem: _, ...p }) => p);
  const { balanceUsd } = await rt.client.balance({ priority: Priority.lookup });
  const reserved = rt.rows.reservedUsd();
  const totalUsd = fileProblems.length > 0 ? 0 : cents(total);
  const balanceAfterUsd = cents(balanceUsd - reserved - totalUsd);
  const affordable = balanceAfterUsd >= -1e-9;
  return {
    file: path,
    format: file.header.format,
    ...(file.header.sheet ? { sheet: file.header.sheet } : {}),
    fileProblems: fileProblems.map((p) => p.message),
    rows,
    validRows: fileProblems.length > 0 ? 0 : valid,
    invalidRows: fileProblems.length > 0 ? rows : rows - valid,
    problems: rowProblems,
    totalUsd,
    balanceUsd,
    reservedUsd: reserved,
    balanceAfterUsd,
    affordable,
    duplicateOf: earlier?.id ?? null,
    ok: fileProblems.length === 0 && valid === rows && affordable && !earlier,
  };
}

export function registerValidate(program: Command): void {
  program
    .command('validate')
    .description('Dry run: check every row against the live catalog, price the file and compare with the balance (sends nothing)')
    .argument('<file>', 'order file: .csv (or .tsv/.txt) or .xlsx')
    .option('--again', 'the file is meant to be ordered again (do not flag it as identical to an earlier batch)')
    .option('--json', 'print the quote and the problems as JSON')
    .addHelpText('after', '\nExit code: 0 when every row is valid and the balance covers the file; 1 otherwise; 7 when the file cannot be read, or is refused as a whole (a column its orders need is missing).')
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

function print(q: Quote, sandbox: boolean): void {
  const out: string[] = [];
  if (q.fileProblems.length > 0) {
    out.push('The file would be refused whole (nothing in it would be ordered):', '');
    for (const p of q.fileProblems) out.push(`  - ${p}`);
    out.push('');
  }
  if (q.problems.length > 0) {
    out.push(q.fileProblems.length > 0 ? 'Problems in rows besides:' : `Problems (${q.invalidRows} of ${q.rows} rows cannot be sent):`, '');
    out.push(renderTable(q.problems, [
      { title: 'line', get: (p) => p.line, right: true },
      { title: 'column', get: (p) => p.column },
      { title: 'problem', get: (p) => p.problem },
    ]));
  } else if (q.fileProblems.length === 0) {
    out.push(`All ${q.rows} rows are valid.`, '');
  }
  if (q.duplicateOf) out.push(`This file is identical to batch ${q.duplicateOf}: submitting it would send nothing. To order it again on purpose: topup submit --again FILE`, '');
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
  out.push(q.affordable ? (q.ok ? 'OK: ready to submit.' : '') : `NOT AFFORDABLE: top up at least ${usd(-q.balanceAfterUsd)} USD before submitting.`);
  process.stdout.write(out.filter((l, i, a) => !(l === '' && i === a.length - 1)).join('\n') + '\n');
}
