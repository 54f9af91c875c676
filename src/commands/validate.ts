/**
 * `topup validate FILE`: the dry run (ops/quote.ts quoteFile, as the console's upload check),
 * printed for a terminal or as JSON, with an exit code scripts can test. Sends no order.
 */
import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { InputFileError } from '../kernel/errors.js';
import { ExitCode } from '../kernel/exit-codes.js';
import type { ColumnReading } from '../intake/validate.js';
import { quoteFile, routingCostText, type Quote } from '../ops/quote.js';
import { openCommandContext } from './context.js';
import { renderTable, usd } from './output.js';
import { counted } from '../kernel/counts.js';

export function registerValidate(program: Command): void {
  program
    .command('validate')
    .description('Dry run: check every row against the live catalog, price the file and compare with the balance (sends nothing)')
    .argument('<file>', 'order file: .csv (or .tsv/.txt) or .xlsx')
    .option('--again', 'the file is meant to be ordered again (do not flag it as identical to an earlier batch)')
    .option('--check-players', 'run the player-name checks the file needs now (TOPUP_PLAYER_CHECKS; they may cost money: validate says how many first)')
    .option('--json', 'print the quote and the problems as JSON')
    .addHelpText('after', '\nExit code: 0 when every row is valid and the balance covers the file; 1 otherwise (also: a file without order rows, rows that repeat an earlier purchase); 7 when the file cannot be read, or is refused as a whole (a column its orders need is missing).')
    .action(async (file: string, opts: { again?: boolean; json?: boolean; checkPlayers?: boolean }, cmd: Command) => {
      const path = resolve(file);
      if (!existsSync(path) || !statSync(path).isFile()) throw new InputFileError(`${file}: no such file`);
      const ctx = await openCommandContext(cmd);
      try {
        const q = await quoteFile(ctx.rt, path, opts.again === true, { runChecks: opts.checkPlayers === true });
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

export interface ProblemGroup {
  column: string;
  problem: string;
  /** The first lines with it (at most SHOWN_LINES), in file order. */
  lines: number[];
  count: number;
}

const SHOWN_LINES = 5;
const SHOWN_PROBLEM_GROUPS = 200;

/**
 * The rows' problems with identical ones together: one entry per (column, problem), in the order
 * each first appears, with its count and first lines. A file of 40,000 rows with one mistake
 * repeated was printed as 40,000 identical lines (the trial's 39,893); --json still lists each.
 */
export function groupProblems(problems: readonly { line: number; column: string; problem: string }[]): ProblemGroup[] {
  const groups = new Map<string, ProblemGroup>();
  for (const p of problems) {
    const key = `${p.column}\u0000${p.problem}`;
    let g = groups.get(key);
    if (!g) groups.set(key, (g = { column: p.column, problem: p.problem, lines: [], count: 0 }));
    g.count++;
    if (g.lines.length < SHOWN_LINES) g.lines.push(p.line);
  }
  return [...groups.values()];
}

/** `12`, or `12, 15, 20, 31, 40 … (39,893 rows)`. */
export function linesText(g: ProblemGroup): string {
  if (g.count === 1) return String(g.lines[0]);
  return `${g.lines.join(', ')}${g.count > g.lines.length ? ` … (${g.count.toLocaleString('en-US')} rows)` : ''}`;
}

const SHOWN_PLAYERS = 200;

/** The player checks: how many, what they may cost, each row's name, the lines whose player does not exist. */
export function playerCheckLines(c: NonNullable<Quote['playerChecks']>): string[] {
  const out = ['Player checks:'];
  const kept = [`${c.cached} answered before`, ...(c.spared > 0 ? [`${c.spared} rows spared (player completed recently)`] : []), ...(c.overridden > 0 ? [`${c.overridden} rows marked send without a check`] : [])];
  out.push(`  ${c.needed} player${c.needed === 1 ? '' : 's'} to check (${kept.join(', ')}); ${c.needed} check${c.needed === 1 ? '' : 's'} may cost up to ${usd(c.maxCostUsd)} USD`);
  if (!c.ran && c.needed > 0) out.push('  not run: `topup validate --check-players FILE` runs them now; the daemon runs them before it sends anything of the file');
  if (c.ran) out.push(`  ran ${c.sent} check${c.sent === 1 ? '' : 's'}${c.owed > 0 ? `; ${c.owed} not answered yet${c.problem ? ` (${plain(c.problem)})` : ''}` : ''}`);
  const shown = c.rows.slice(0, SHOWN_PLAYERS);
  if (shown.length > 0) {
    out.push(renderTable(shown, [
      { title: 'line', get: (r) => r.line, right: true },
      { title: 'player', get: (r) => (r.playerName === undefined ? '(not checked yet)' : r.playerName === null ? 'NOT FOUND' : plain(r.playerName) || '(found, no name given)') },
    ]));
    if (c.rows.length > SHOWN_PLAYERS) out.push(`  … and ${c.rows.length - SHOWN_PLAYERS} more rows (all in --json)`);
  }
  if (c.notFoundLines.length > 0) {
    const lines = c.notFoundLines.length > 20 ? `${c.notFoundLines.slice(0, 20).join(', ')} … (${c.notFoundLines.length} rows)` : c.notFoundLines.join(', ');
    out.push(`PLAYER NOT FOUND on line${c.notFoundLines.length === 1 ? '' : 's'} ${lines}: ${c.notFoundLines.length === 1 ? 'that row' : 'those rows'} would not be sent. Fix the ids, or put yes in a column sendWithoutCheck to buy anyway.`);
  }
  return out;
}

/** How much to top up, and where: with several accounts each pays for its own rows. */
function notAffordable(q: Quote): string {
  if (!q.namedAccounts) return `NOT AFFORDABLE: top up at least ${usd(-q.balanceAfterUsd)} USD before submitting.`;
  const short = q.byAccount.filter((a) => !a.affordable);
  const parts = short.map((a) => (a.balanceAfterUsd === null ? `${a.account} (its balance cannot be read)` : `${a.account} by at least ${usd(-a.balanceAfterUsd)} USD`));
  if (parts.length === 0) parts.push(`the accounts by at least ${usd(-q.balanceAfterUsd)} USD in all`);
  return `NOT AFFORDABLE: top up ${parts.join(', ')} before submitting (rows on an account without the balance wait for its top-up).`;
}

function print(q: Quote, sandbox: boolean): void {
  const out: string[] = [];
  if (q.fileProblems.length > 0) {
    out.push('The file would be refused whole (nothing in it would be ordered):', '');
    for (const p of q.fileProblems) out.push(`  - ${p}`);
    out.push('');
  }
  if (q.sheet !== undefined) out.push(`Sheet read: "${plain(q.sheet)}" (${plain(q.sheetChosen ?? 'the sheet read')})`, '');
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
    // Identical problems on one line each, with their count; at most SHOWN_PROBLEM_GROUPS kinds.
    const groups = groupProblems(shown);
    out.push(renderTable(groups.slice(0, SHOWN_PROBLEM_GROUPS), [
      { title: 'lines', get: (g) => linesText(g), right: true },
      { title: 'column', get: (g) => plain(g.column) },
      { title: 'problem', get: (g) => plain(g.problem) },
    ]));
    if (groups.length > SHOWN_PROBLEM_GROUPS) {
      const rest = groups.slice(SHOWN_PROBLEM_GROUPS).reduce((n, g) => n + g.count, 0);
      out.push(`  … and ${groups.length - SHOWN_PROBLEM_GROUPS} more kinds of problem on ${rest.toLocaleString('en-US')} rows (every row is in --json)`, '');
    }
  }
  if (q.repeats.length > 0) {
    out.push(`Repeats of earlier purchases (${q.repeatRows} of ${q.rows} rows; every row is in --json):`, ...q.repeats.map((g) => `  - ${plain(g.message)}`), '');
  }
  if (q.playerChecks) out.push(...playerCheckLines(q.playerChecks), '');
  if (q.rows > 0 && q.problems.length === 0 && q.fileProblems.length === 0) out.push(`All ${counted(q.rows, 'row')} ${q.rows === 1 ? 'is' : 'are'} valid.`, '');
  if (q.duplicateOf) out.push(`This file is identical to batch ${q.duplicateOf}: submitting it would send nothing. To order it again on purpose: topup submit --again FILE`, '');
  if (q.byPack.length > 0) {
    out.push('To send, by pack:');
    const packs = q.byPack.length > SHOWN_PACKS ? q.byPack.slice(0, SHOWN_PACKS) : q.byPack;
    out.push(renderTable(packs, [
      ...(q.namedAccounts ? [{ title: 'account', get: (p: Quote['byPack'][number]) => p.account }] : []),
      { title: 'game', get: (p) => plain(p.game) },
      { title: 'pack', get: (p) => plain(p.pack) },
      { title: 'pid', get: (p) => plain(p.pid) },
      { title: 'rows', get: (p) => p.rows, right: true },
      { title: 'quantity', get: (p) => p.quantity, right: true },
      ...(q.namedAccounts ? [{ title: 'price', get: (p: Quote['byPack'][number]) => usd(p.unitPriceUsd), right: true }] : []),
      { title: 'USD', get: (p) => usd(p.usd), right: true },
    ]));
    if (q.byPack.length > SHOWN_PACKS) out.push(`  … and ${q.byPack.length - SHOWN_PACKS} more packs (all in --json)`, '');
  }
  if (q.namedAccounts) {
    // Where a load now would place the rows (the routing rule, each account's catalog, queue and balance).
    out.push(`Plan by account${sandbox ? ' (SANDBOX balances)' : ''}:`);
    out.push(renderTable(q.byAccount, [
      { title: 'account', get: (a) => a.account },
      { title: 'rows', get: (a) => a.rows, right: true },
      { title: 'USD', get: (a) => usd(a.usd), right: true },
      { title: 'balance', get: (a) => (a.balanceUsd === null ? '?' : usd(a.balanceUsd)), right: true },
      ...(q.byAccount.some((a) => a.reservedUsd > 0) ? [{ title: 'reserved', get: (a: Quote['byAccount'][number]) => usd(a.reservedUsd), right: true }] : []),
      { title: 'balance after', get: (a) => (a.balanceAfterUsd === null ? '?' : usd(a.balanceAfterUsd)), right: true },
      { title: 'note', get: (a) => (a.problem ?? (a.affordable ? '' : 'NOT AFFORDABLE')) },
    ]));
    const cost = routingCostText(q.routingCost);
    if (cost) out.push(cost, '');
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
  out.push(q.affordable ? (q.ok ? `OK: ready to submit${q.warnings.length > 0 ? ' (read the warnings above first)' : ''}.` : '') : notAffordable(q));
  process.stdout.write(out.filter((l, i, a) => !(l === '' && i === a.length - 1)).join('\n') + '\n');
}
