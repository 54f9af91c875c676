/**
 * What a row learns from its pack alone (PackFacts), worked out once per pack, and what every
 * pack of a game line shares (the line's plan: which columns feed its fields), worked out once per
 * line: neither is redone per row (intake speed).
 */
import type { HeaderMap, OrderField } from './columns.js';
import { isActive, type CatalogEntry } from './catalog-index.js';
import { fileProblemKey, type FileProblems } from './file-problems.js';
import { resolveLineColumns, type HeaderNames, type LineColumns, type LineField } from './line-columns.js';

export interface RowProblem {
  /** The user's column name, or the field name when the column is absent; "row" for the whole row. */
  column: string;
  reason: string;
  /** Set when the problem comes from the file's columns: the key of the FileProblem that explains it. */
  fileProblem?: string;
}

const DISABLED_LINE = /disabled|inactive|maintenance|closed|unavailable|suspended|^off$/i;

/** Body key order after pid and trxid, so the stored body reads the same for every row. */
export const BODY_ORDER: readonly LineField[] = ['userId', 'zoneId', 'serverId', 'region', 'moreId'];


/** What a row learns from its pack alone; worked out once per pack, not once per row. */
export interface PackFacts {
  /** Problems every row ordering this pack has (not on sale, line closed, fields we cannot send). */
  problems: readonly RowProblem[];
  /** "Game (slug)", for messages. */
  game: string;
  /** True when `required` already lists fields in BODY_ORDER, so the body can be built in one go. */
  inBodyOrder: boolean;
  /** Where this line's fields are in the file, and what the user calls those columns. */
  columns: LineColumns;
  /**
   * The column of each of `entry.required`, in the same order: an array, so the per-row loop
   * reads one shape for every pack (a keyed read of per-line objects was a tenth of the intake).
   */
  cols: readonly (number | undefined)[];
  names: Readonly<Record<LineField, string>>;
  /** Per field: the FileProblems key and what a FileProblem needs to know about the line. */
  keys: Readonly<Record<LineField, string>>;
  facts: (field: LineField) => Parameters<FileProblems['lacking']>[1];
  /** ML lines: a userId may carry the zone (`777888999 (2005)`). */
  splitsZone: boolean;
}

/** The file's header as packFacts needs it (part of validate.ts's FileShape). */
export interface PackContext {
  names: Readonly<Record<OrderField, string>>;
  /** Problems about which pack is meant go on pid when the file has it, else on pack. */
  packColumn: OrderField;
  header: HeaderMap;
  /** Column index → the fixed field (pid, trxid, quantity …) it holds. */
  fixedByCol: ReadonlyMap<number, OrderField>;
  headerNames: HeaderNames;
  /** By game line and shape: every pack of a line shares its plan. */
  linePlans: Map<string, LinePlan>;
}

export function packFacts(entry: CatalogEntry, shape: PackContext): PackFacts {
  const { product, line } = entry;
  const game = `${product.gameName} (${product.slug})`;
  const problems: RowProblem[] = [];
  const column = shape.names[shape.packColumn];
  if (!isActive(product.status)) problems.push({ column, reason: `"${product.serviceName}" of ${game} is not on sale (status "${product.status}")` });
  if (line && DISABLED_LINE.test(line.status.trim())) problems.push({ column, reason: `${game} is not taking orders now (status "${line.status}")` });
  if (!line && entry.kind !== 'stock') problems.push({ column, reason: `${game} is not available now: the supplier does not list this game` });
  for (const f of entry.unsupported) problems.push({ column: f, reason: `${game} requires "${f}", which this tool cannot send` });
  const plan = linePlan(entry, shape);
  const facts = (field: LineField) => {
    const ambiguous = plan.columns.ambiguous[field];
    return { field, label: plan.labels.get(field) ?? field, game, used: plan.used, ...(ambiguous ? { ambiguous } : {}) };
  };
  // One literal, one property order: every pack's facts share a shape (the per-row reads stay fast).
  return {
    problems: Object.freeze(problems.map((p) => Object.freeze(p))),
    game,
    inBodyOrder: plan.inBodyOrder,
    columns: plan.columns,
    cols: plan.cols,
    names: plan.names,
    keys: plan.keys,
    facts,
    splitsZone: plan.splitsZone,
  };
}

export type LinePlan = Omit<PackFacts, 'problems' | 'game' | 'facts'> & {
  labels: ReadonlyMap<LineField, string>;
  used: ReadonlySet<number>;
  /** The game's name, for the column report (column-report.ts). */
  gameName: string;
};

/** What every pack of a game line (of one shape) shares: worked out once per line, not per pack. */
function linePlan(entry: CatalogEntry, shape: PackContext): LinePlan {
  const slug = entry.product.slug.toLowerCase();
  const key = `${slug}\u0000${entry.kind}\u0000${entry.required.map((r) => `${r.field}=${r.label}`).join('\u0000')}`;
  const known = shape.linePlans.get(key);
  if (known) return known;
  const positions = entry.required.map((r) => BODY_ORDER.indexOf(r.field));
  const inBodyOrder = positions.every((p, i) => i === 0 || p > (positions[i - 1] as number));
  const columns = resolveLineColumns(shape.headerNames, entry.required);
  const names = {} as Record<LineField, string>;
  const keys = {} as Record<LineField, string>;
  for (const f of BODY_ORDER) {
    const i = columns.at[f];
    names[f] = i === undefined ? f : shape.header.columns[i]?.trim() || f;
    keys[f] = fileProblemKey(slug, f);
  }
  const labels = new Map(entry.required.map((r) => [r.field, r.label || r.field]));
  const plan: LinePlan = {
    inBodyOrder,
    columns,
    cols: entry.required.map((r) => columns.at[r.field]),
    names,
    keys,
    labels,
    used: new Set<number>([...shape.fixedByCol.keys(), ...columns.byCol.keys()]),
    splitsZone: entry.kind === 'ml' && labels.has('zoneId'),
    gameName: entry.product.gameName || entry.product.slug,
  };
  shape.linePlans.set(key, plan);
  return plan;
}
