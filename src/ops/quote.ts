/**
 * The dry run of an order file, for `topup validate` and the console's upload check alike: the
 * file read exactly as a batch would be read, every row judged by the load's own verdict
 * (claim/row-verdict.ts), priced against the live catalog and compared with the balance, minus what
 * unfinished batches have already set aside. Sends no order, writes nothing.
 *
 * A file-level problem (a column the file's orders need is missing) is reported once, the way
 * the daemon refuses the file, not as the thousands of row problems it causes.
 *
 * With several supplier accounts (accounts.toml) every row is placed on its account by the load's
 * own placer (claim/placement.ts: every account's catalog, the routing rule, the queues, pauses and
 * balances as they are now), so the plan per account (`byAccount`) is where a load now would put the
 * rows; each account's balance after is its balance less what its unfinished batches and this file
 * would spend there.
 */
import { Priority } from '../api/client.js';
import { openPlacer, readCatalogs, withPinColumn } from '../claim/placement.js';
import { coerceError } from '../kernel/errors.js';
import { namedAccounts, reservedByAccount } from './account-views.js';
import { contentHash, openOrderFile } from '../intake/formats/index.js';
import { createRowValidator, type ColumnReading } from '../intake/validate.js';
import { settleColumns } from '../intake/column-report.js';
import { findRepeats, isTopUp, purchaseFingerprint, repeatMessage, type RowInFile } from '../claim/repeats.js';
import { judgeRow } from '../claim/row-verdict.js';
import { boughtBefore } from '../claim/repeats.js';
import type { Runtime } from '../runtime.js';
import { openRestoreWindow } from '../store/backup.js';
import { roundCents as cents } from '../kernel/money.js';
import { CheckPlanner, notFoundMessage, overrideColumn, runChecks, saysSendWithoutCheck } from '../claim/player-checks.js';

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
  /** Workbooks: how the sheet was chosen (named "orders", or the first visible). */
  sheetChosen?: string;
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
  /** The rows to send, by pack (and account): what the total is made of. */
  byPack: PackLine[];
  /**
   * The plan per account, every account of the home in the order of accounts.toml: the rows the
   * load would place on it, their USD, its balance and its balance after. One entry (`default`)
   * in a home without accounts.toml.
   */
  byAccount: AccountPlan[];
  /** What the routing rule costs against every row at its cheapest account (several accounts only). */
  routingCost: RoutingCost | null;
  /** Whether the home names its accounts (accounts.toml): the views then show the plan per account. */
  namedAccounts: boolean;
  totalUsd: number;
  balanceUsd: number;
  /** USD that unfinished batches still have to spend: already promised. */
  reservedUsd: number;
  balanceAfterUsd: number;
  affordable: boolean;
  duplicateOf: string | null;
  /** Player-name checks (docs/player-checks.md); null when TOPUP_PLAYER_CHECKS is off. */
  playerChecks: PlayerCheckQuote | null;
  ok: boolean;
}

export interface PlayerCheckQuote {
  /** Players this file's rows need a check for and that have no answer kept (calls a load would make). */
  needed: number;
  /** Players whose answer is kept (no call). */
  cached: number;
  /** Rows spared a check: their player was seen completed within TOPUP_PLAYER_CHECK_SKIP_DAYS. */
  spared: number;
  /** Rows whose file says send without a check. */
  overridden: number;
  /** What the needed checks may cost (needed × TOPUP_PLAYER_CHECK_PRICE_USD). */
  maxCostUsd: number;
  /** The checks were run now (validate --check-players): `sent` calls, `owed` not answered. */
  ran: boolean;
  sent: number;
  owed: number;
  problem?: string;
  /** Each checked row: its line and the name the check gave, null for not found, undefined (absent) when not known yet. */
  rows: { line: number; playerName?: string | null }[];
  /** Lines whose player the supplier says does not exist: never sent. */
  notFoundLines: number[];
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
  /** The account the rows are placed on (its pid and price are those below). */
  account: string;
  game: string;
  slug: string;
  pid: string;
  pack: string;
  rows: number;
  /** Codes (keys/cards) or top-ups bought. */
  quantity: number;
  /** The account's unit price of the pack. */
  unitPriceUsd: number;
  usd: number;
}

/**
 * What the routing rule costs against buying every row at the cheapest account that sells it
 * (within its cap, its pin held): with `cheapest` routing, `max_queue_delay` spills rows to dearer
 * accounts when the cheap one's queue is long (trades money for time). Null with one account.
 */
export interface RoutingCost {
  routing: string;
  /** accounts.toml's max_queue_delay, in ms. */
  maxQueueDelayMs: number;
  /** Every valid row at its cheapest account. */
  cheapestUsd: number;
  /** What the plan costs above that (0 when every row is on its cheapest account). */
  extraUsd: number;
  /** extraUsd over cheapestUsd, in percent (one decimal). */
  extraPercent: number;
  /** Rows placed on an account dearer than their cheapest. */
  dearerRows: number;
}

/**
 * What the routing costs against every row at its cheapest account, and the setting that trades
 * it for time (trial s35: a 400-row file spent 8.7 % more through max_queue_delay, with no figure).
 */
export function routingCostText(c: RoutingCost | null): string | undefined {
  const usd = (n: number): string => n.toFixed(2);
  if (c === null || c.dearerRows === 0 || c.extraUsd <= 0) return undefined;
  const delay = c.maxQueueDelayMs % 1000 === 0 ? `${c.maxQueueDelayMs / 1000}s` : `${c.maxQueueDelayMs}ms`;
  const why = c.routing === 'cheapest'
    ? `the cheapest account's queue would hold them longer than max_queue_delay = "${delay}" (accounts.toml), or it is paused or short of balance; a longer max_queue_delay sends more rows to the cheaper account (slower, cheaper), a shorter one spreads them (faster, dearer)`
    : `routing = "${c.routing}" (accounts.toml) does not choose by price; routing = "cheapest" would`;
  return `Routing cost: ${`${c.dearerRows} ${c.dearerRows === 1 ? 'row' : 'rows'}`} on a dearer account than ${c.dearerRows === 1 ? 'its' : 'their'} cheapest: ${usd(c.cheapestUsd + c.extraUsd)} USD against ${usd(c.cheapestUsd)} USD with every row on its cheapest account (+${usd(c.extraUsd)} USD, +${c.extraPercent} %), because ${why}.`;
}

export interface AccountPlan {
  account: string;
  rows: number;
  usd: number;
  /** Null when it could not be read (`problem` says why). */
  balanceUsd: number | null;
  /** USD its unfinished batches still have to spend there. */
  reservedUsd: number;
  /** Balance less reserved less this file's rows on it; null when the balance is not known. */
  balanceAfterUsd: number | null;
  /** Its balance covers its rows (true for an account given no rows). */
  affordable: boolean;
  /** Why it places no rows of this file, or why its balance is not known. */
  problem?: string;
}

export const NO_ROWS = 'the file has no order rows (only its header): nothing would be ordered; was it saved before the rows were added, or exported with a filter that hid them?';

/** `24 h`, `90 min`: the repeat window as people say it. */
export function windowText(ms: number): string {
  return ms % 3_600_000 === 0 ? `${ms / 3_600_000} h` : `${Math.round(ms / 60_000)} min`;
}

/**
 * A file claimed in the window after a restore is looked up at every account before it is sent
 * (store/backup.ts markClaimInRestoreWindow), and its rows that could have been bought at an account
 * that cannot be read wait, then go to review: validate says so before the drop (trial s34: a file
 * shown as ready was held and sent to review). An account whose balance could not be read now is
 * named: its history likely cannot be read either.
 */
function restoreWindowWarning(rt: QuoteParts, byAccount: readonly { account: string; balanceUsd: number | null }[], valid: number): string[] {
  if (valid === 0) return [];
  const w = openRestoreWindow(rt.db, rt.accounts.map((a) => a.id), rt.clock.now());
  if (!w) return [];
  const unreadable = [...byAccount.filter((a) => a.balanceUsd === null).map((a) => a.account), ...w.accounts.filter((a) => !rt.accounts.some((x) => x.id === a))];
  const until = new Date(w.until).toISOString().replace('T', ' ').slice(0, 16);
  return [
    `a restore window is open until ${until} UTC: before they are sent, this file's rows are looked up at every account (${w.accounts.join(', ')}) under their trxid and <trxid>-<account>, in case they were bought after the backup was taken. ` +
      (unreadable.length > 0
        ? `${unreadable.join(', ')} cannot be read now: its rows found nowhere else and not pinned to another account (column account) would be held for it (TOPUP_RESTORE_LOOKUP_WAIT), then go to review. `
        : 'A row that could have been bought at an account that cannot be read then is held for it, then goes to review. ') +
      'If no file was claimed and no API order accepted after that backup was taken: topup restore --close-window (docs/backup.md).',
  ];
}

type QuoteParts = Pick<Runtime, 'accounts' | 'batches' | 'clock' | 'config' | 'db' | 'entropy' | 'log' | 'meta' | 'routing' | 'rows'>;

/** The longest validate --check-players sends checks for: past it the rest are owed (the daemon asks them before sending). */
const QUOTE_CHECKS_MS = 10 * 60_000;

export async function quoteFile(rt: QuoteParts, path: string, again: boolean, opts: { runChecks?: boolean } = {}): Promise<Quote> {
  const hash = await contentHash(path);
  const earlier = again ? undefined : rt.batches.findByContent(hash);
  const file = await openOrderFile(path);
  // The load's own placer: every account's catalog, and each row placed as a load now would place it.
  const catalogs = await readCatalogs(rt).catch((err: unknown) => {
    file.close();
    throw err;
  });
  const placer = await openPlacer(rt, catalogs, file.header.header.columns).catch((err: unknown) => {
    file.close();
    throw err;
  });
  const { index } = placer;
  // Amount / Count columns are read as the quantity only when the rows show they are one.
  const header = await settleColumns(path, file.header.header, index).catch((err: unknown) => {
    file.close();
    throw err;
  });
  const validator = createRowValidator(header, index, { capAtPlacement: placer.judgesCap });
  const problems: (Quote['problems'][number] & { fileProblem?: string })[] = [];
  // Rows repeating a purchase an earlier batch placed recently would be skipped (claim/repeats.ts).
  const checkRepeats = !again && rt.config.repeatWindowMs > 0;
  const now = rt.clock.now();
  // Rows to check are decided together once read, as the load decides a file's rows at once.
  type Valid = Extract<ReturnType<typeof judgeRow>, { ok: true }>['order'] & { account: string; cheapestUsd: number };
  const toCheck: (RowInFile & { fingerprint: string; alts: string[]; order: Valid })[] = [];
  const repeats = new Map<string, Omit<RepeatGroup, 'message'>>();
  const packs = new Map<string, PackLine>();
  let rows = 0;
  let valid = 0;
  let total = 0;
  /** What the same rows would cost each at the cheapest account it may go to, and how many are not there. */
  let cheapestTotal = 0;
  let dearerRows = 0;
  // Player checks: every valid row of a checked line, judged once the checks (if run) are answered.
  const checking = rt.config.playerChecks.lines !== 'off';
  const overrideAt = overrideColumn(header.columns);
  const checkRows: { line: number; slug: string; order: Valid; override: boolean }[] = [];
  /** The rows counted in the money to send (a not-found player's row is taken out again). */
  const counted = new Set<Valid>();
  for await (const run of file.batches) {
    for (const raw of run) {
      rows++;
      // The load's own verdict (claim/row-verdict.ts): a row passes here only if the load stores it.
      // The batch's trxids would be derived from these bytes (`hash`); with --again from a hash
      // salted with the new batch's id, new by construction. A file identical to an earlier batch
      // (duplicateOf) derives none: the load skips every row of it as a duplicate, said once.
      const v = judgeRow(raw, { validator, trxidSeed: again || earlier ? null : hash, usedBy: (t) => rt.rows.byTrxid(t), boughtBefore: (u, t) => boughtBefore(rt, u, t) });
      if (!v.ok) {
        for (const p of v.problems) problems.push({ line: raw.line, column: p.column, problem: p.reason, ...(p.fileProblem ? { fileProblem: p.fileProblem } : {}) });
        continue;
      }
      // As the load: the purchase fingerprinted by its pack (placement.ts packKey), then the row placed (every
      // valid row in file order, the repeats among them, so the routing's queues and balances
      // move exactly as the load's do).
      const fingerprint = purchaseFingerprint({ ...v.order.request, pid: placer.packKey(v.order) });
      const alts = placer.pidKeys(v.order).map((pid) => purchaseFingerprint({ ...v.order.request, pid }));
      const placed = placer.place(v.order, raw.cells, header.fields.pid !== undefined && (raw.cells[header.fields.pid] ?? '').trim() !== '');
      if (!placed.ok) {
        const m = /^([A-Za-z]+): ([\s\S]*)$/.exec(placed.error);
        problems.push({ line: raw.line, column: m ? m[1]! : 'account', problem: m ? m[2]! : placed.error });
        continue;
      }
      const order = { ...placed.order, account: placed.account, cheapestUsd: placed.cheapestUsd };
      if (checking) checkRows.push({ line: raw.line, slug: placed.order.slug, order, override: saysSendWithoutCheck(raw.cells, overrideAt) });
      if (checkRepeats && !v.order.givenTrxid) {
        toCheck.push({ header: header.columns, cells: raw.cells, line: raw.line, topUp: isTopUp(v.order.request), fingerprint, alts, order });
        continue;
      }
      count(order);
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
  let playerChecks: PlayerCheckQuote | null = null;
  if (checking) {
    let planner = new CheckPlanner(rt);
    for (const r of checkRows) planner.judge(r.slug, r.order.request, r.order.account, r.override);
    const needed = planner.pending.size;
    const maxCostUsd = planner.pendingCostUsd;
    // Answered before this validate: counted before the checks it runs (after them, every player
    // it just checked would count as "answered before", as a first run's "3 to check (3 answered before)" did).
    const cached = planner.players.size - planner.pending.size;
    let ran: Awaited<ReturnType<typeof runChecks>> | undefined;
    if (opts.runChecks && needed > 0) {
      ran = await runChecks(rt, planner.pending.values(), null, QUOTE_CHECKS_MS);
      planner = new CheckPlanner(rt);
    }
    const out: PlayerCheckQuote['rows'] = [];
    const notFoundLines: number[] = [];
    for (const r of checkRows) {
      const j = planner.judge(r.slug, r.order.request, r.order.account, r.override);
      if (j.kind === 'none') continue;
      if (j.kind === 'pending') { out.push({ line: r.line }); continue; }
      if (j.answer.outcome === 'found') { out.push({ line: r.line, playerName: j.answer.name ?? '' }); continue; }
      out.push({ line: r.line, playerName: null });
      notFoundLines.push(r.line);
      // Never sent: a problem of its line, and out of the money to send.
      problems.push({ line: r.line, column: 'userId', problem: notFoundMessage(j.answer) });
      if (counted.has(r.order)) uncount(r.order);
    }
    playerChecks = {
      needed, cached, spared: planner.spared, overridden: planner.overridden, maxCostUsd,
      ran: ran !== undefined, sent: ran?.sent ?? 0, owed: ran ? planner.pending.size : needed,
      ...(ran?.lastProblem ? { problem: ran.lastProblem } : {}),
      rows: out, notFoundLines,
    };
  }
  problems.sort((a, b) => a.line - b.line);
  function uncount(o: Valid): void {
    counted.delete(o);
    valid--;
    total -= o.amountUsd;
    cheapestTotal -= o.cheapestUsd;
    if (o.amountUsd > o.cheapestUsd + 1e-9) dearerRows--;
    const line = packs.get(`${o.account}\u0000${o.request.pid}`)!;
    line.rows--;
    line.quantity -= o.quantity;
    line.usd -= o.amountUsd;
    if (line.rows === 0) packs.delete(`${o.account}\u0000${o.request.pid}`);
  }
  function count(o: Valid): void {
    counted.add(o);
    valid++;
    total += o.amountUsd;
    cheapestTotal += o.cheapestUsd;
    if (o.amountUsd > o.cheapestUsd + 1e-9) dearerRows++;
    // Two suppliers may use one pid for different packs: a line is a pid at an account.
    const key = `${o.account}\u0000${o.request.pid}`;
    const line = packs.get(key);
    if (line) {
      line.rows++;
      line.quantity += o.quantity;
      line.usd += o.amountUsd;
    } else packs.set(key, { account: o.account, game: o.gameName, slug: o.slug, pid: o.request.pid, pack: o.packName, rows: 1, quantity: o.quantity, unitPriceUsd: o.unitPriceUsd, usd: o.amountUsd });
  }
  const fileProblems = validator.fileProblems();
  const report = withPinColumn(validator.columns(), rt, header.columns);
  const echoes = new Set(fileProblems.map((p) => p.key));
  const rowProblems = problems.filter((p) => p.fileProblem === undefined || !echoes.has(p.fileProblem)).map(({ fileProblem: _, ...p }) => p);
  const refused = fileProblems.length > 0;
  const byPack = refused ? [] : [...packs.values()].map((p) => ({ ...p, usd: cents(p.usd) }));
  const byAccount = await planByAccount(rt, byPack, new Set(catalogs.map((c) => c.name)));
  const reserved = rt.rows.reservedUsd();
  const totalUsd = refused ? 0 : cents(total);
  // The home's balance: the sum of what could be read (one account: its balance, as always).
  const balanceUsd = cents(byAccount.reduce((n, a) => n + (a.balanceUsd ?? 0), 0));
  const balanceAfterUsd = cents(balanceUsd - reserved - totalUsd);
  // Each account pays for its own rows: one account's surplus does not fund another's.
  const affordable = balanceAfterUsd >= -1e-9 && byAccount.every((a) => a.affordable);
  const window = windowText(rt.config.repeatWindowMs);
  const repeatRows = [...repeats.values()].reduce((n, g) => n + g.rows, 0);
  return {
    file: path,
    format: file.header.format,
    ...(file.header.sheet ? { sheet: file.header.sheet, ...(file.header.sheetChosen ? { sheetChosen: file.header.sheetChosen } : {}) } : {}),
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
    warnings: [...(rows === 0 ? [NO_ROWS] : []), ...report.warnings, ...restoreWindowWarning(rt, byAccount, refused ? 0 : valid)],
    hints: report.hints,
    byPack: byPack.sort((a, b) => a.game.localeCompare(b.game) || a.pack.localeCompare(b.pack) || accountOrder(rt, a.account) - accountOrder(rt, b.account) || a.pid.localeCompare(b.pid)),
    byAccount,
    routingCost: rt.accounts.length < 2 ? null : {
      routing: rt.routing.routing,
      maxQueueDelayMs: rt.routing.maxQueueDelayMs,
      cheapestUsd: refused ? 0 : cents(cheapestTotal),
      extraUsd: refused ? 0 : cents(total - cheapestTotal),
      extraPercent: refused || cheapestTotal <= 0 ? 0 : Math.round(((total - cheapestTotal) / cheapestTotal) * 1000) / 10,
      dearerRows: refused ? 0 : dearerRows,
    },
    namedAccounts: namedAccounts(rt.config),
    totalUsd,
    balanceUsd,
    reservedUsd: reserved,
    balanceAfterUsd,
    affordable,
    duplicateOf: earlier?.id ?? null,
    playerChecks,
    // Not ready while a row's player is not found (its line is among the problems, valid < rows).
    ok: !refused && rows > 0 && valid === rows && affordable && !earlier && (playerChecks?.notFoundLines.length ?? 0) === 0,
  };
}

const accountOrder = (rt: Pick<Runtime, 'accounts'>, name: string): number => rt.accounts.findIndex((a) => a.id === name);

/**
 * Each account's share of the file, its balance (read now) and its balance after. One account:
 * its balance is read as before, and an error reading it is the quote's error. Several: an account
 * whose balance cannot be read is shown with the reason, and is not affordable if it is given rows.
 */
async function planByAccount(rt: Pick<Runtime, 'accounts' | 'batches' | 'rows'>, byPack: readonly PackLine[], readable: ReadonlySet<string>): Promise<AccountPlan[]> {
  const reserved = reservedByAccount(rt);
  const out: AccountPlan[] = [];
  for (const a of rt.accounts) {
    const mine = byPack.filter((p) => p.account === a.id);
    const rows = mine.reduce((n, p) => n + p.rows, 0);
    const usd = cents(mine.reduce((n, p) => n + p.usd, 0));
    const reservedUsd = reserved.get(a.id) ?? 0;
    let balanceUsd: number | null = null;
    let problem: string | undefined = readable.has(a.id) ? undefined : 'its catalog cannot be read now: it places no rows of this file';
    if (rt.accounts.length === 1) balanceUsd = (await a.client.balance({ priority: Priority.lookup })).balanceUsd;
    else {
      try {
        balanceUsd = (await a.client.balance({ priority: Priority.lookup })).balanceUsd;
      } catch (err) {
        problem ??= `its balance cannot be read: ${coerceError(err).message}`;
      }
    }
    const balanceAfterUsd = balanceUsd === null ? null : cents(balanceUsd - reservedUsd - usd);
    const affordable = rows === 0 || (balanceAfterUsd !== null && balanceAfterUsd >= -1e-9);
    out.push({ account: a.id, rows, usd, balanceUsd, reservedUsd, balanceAfterUsd, affordable, ...(problem ? { problem } : {}) });
  }
  return out;
}
