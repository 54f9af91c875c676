/**
 * Which column holds each field a game line needs (userId, zoneId, serverId, region, moreId),
 * worked out once per line for a file, never per row.
 *
 * A column names a field of a line, strongest first:
 *  1. the API's own name for the field (`userId`, `zoneId`, … and the spellings columns.ts
 *     accepts for them);
 *  2. the label the catalog shows for the field on THIS line (`Player ID`, `User ID`,
 *     `Zone ID`, `Server`, `UID`, `Riot ID (name#tag)`, … also without the part in brackets);
 *  3. a common name (the `also` spellings of columns.ts SPELLINGS: `player`, `zone`, `server`,
 *     `Role ID`, `Zona`, `Servidor`, …).
 * The strongest kind that names the field decides; weaker ones are then ignored (a file that
 * has both `userId` and `Player ID` sends `userId`, and carries `Player ID` through). A label
 * may name different fields on different lines: `Server ID` is the API's `serverId` for most
 * games, but the catalog labels Once Human's `moreId` "Server ID", so on a Once Human row (which
 * takes no `serverId`) that column is its `moreId`. Two columns of the same kind naming one
 * field, or one column naming two fields of a line, is ambiguous: a file-level problem.
 */
import { canonicalField, headerKey, lineSpellings, type HeaderMap, type OrderField } from './columns.js';
import type { RequiredField } from './catalog-index.js';

export type LineField = RequiredField['field'];

/** Common header names for the line fields, beyond the API's names (columns.ts SPELLINGS). Keys are headerKeys. */
export const COMMON: Readonly<Record<string, LineField>> = Object.freeze(Object.fromEntries(lineSpellings()) as Record<string, LineField>);

/** Fields every line's columns are decided for once per file (columns.ts), never by label. */
const FIXED: ReadonlySet<OrderField> = new Set(['pid', 'slug', 'pack', 'trxid', 'quantity', 'maxPriceUsd']);

/** `Riot ID (name#tag)` is matched as written and as `Riot ID`. */
export function labelForms(label: string): string[] {
  const forms = [headerKey(label)];
  const bare = headerKey(label.replace(/\([^)]*\)|\[[^\]]*\]/g, ''));
  if (bare !== '' && bare !== forms[0]) forms.push(bare);
  return forms;
}

export interface LineColumns {
  /** Field → column index, for the fields the line needs that the file has a column for. */
  at: Partial<Record<LineField, number>>;
  /** Column index → the field it feeds on this line (for the workbook cell checks). */
  byCol: ReadonlyMap<number, LineField>;
  /** Fields the file names more than once (or one column naming two): the columns, by field. */
  ambiguous: Partial<Record<LineField, number[]>>;
}

/** The header cells normalised once per file: names for label matching, and the field each names directly. */
export interface HeaderNames {
  names: readonly string[];
  direct: readonly (OrderField | undefined)[];
  /** Columns read as pid, slug, pack, trxid, quantity or maxPriceUsd (by any spelling): never a line field. */
  fixed: ReadonlySet<number>;
}

export function headerNames(header: HeaderMap): HeaderNames {
  const fixed = new Set<number>();
  for (const f of FIXED) if (header.fields[f] !== undefined) fixed.add(header.fields[f]);
  return {
    names: header.columns.map((c) => (c.trim() === '' ? '' : headerKey(c))),
    direct: header.columns.map((c) => (c.trim() === '' ? undefined : canonicalField(c))),
    fixed,
  };
}

/** Resolves the columns for one pack's required fields (the same for every pack of a line and shape). */
export function resolveLineColumns({ names, direct, fixed }: HeaderNames, required: readonly RequiredField[]): LineColumns {
  const at: Partial<Record<LineField, number>> = {};
  const ambiguous: Partial<Record<LineField, number[]>> = {};
  const taken = new Set<number>();
  const open: RequiredField[] = [];
  for (const req of required) {
    const i = direct.indexOf(req.field);
    if (i >= 0) {
      at[req.field] = i;
      taken.add(i);
    } else open.push(req);
  }
  // Label and common names, for the fields no column names directly. A column the API's name
  // gives to a fixed field (pid, trxid, …) or to a field this line takes is never borrowed.
  const free = (i: number): boolean => names[i] !== '' && !taken.has(i) && !FIXED.has(direct[i] as OrderField) && !fixed.has(i);
  const chosen = new Map<number, LineField[]>();
  for (const req of open) {
    const labels = labelForms(req.label);
    const tiers = [
      names.flatMap((n, i) => (free(i) && labels.includes(n) ? [i] : [])),
      names.flatMap((n, i) => (free(i) && COMMON[n] === req.field ? [i] : [])),
    ];
    const tier = tiers.find((t) => t.length > 0);
    if (!tier) continue;
    if (tier.length > 1) ambiguous[req.field] = tier;
    else chosen.set(tier[0] as number, [...(chosen.get(tier[0] as number) ?? []), req.field]);
  }
  for (const [i, fields] of chosen) {
    if (fields.length === 1) at[fields[0] as LineField] = i;
    else for (const f of fields) ambiguous[f] = [i];
  }
  const byCol = new Map<number, LineField>();
  for (const [f, i] of Object.entries(at) as [LineField, number][]) byCol.set(i, f);
  return { at, byCol, ambiguous };
}

/**
 * The one column the user most likely meant for a field the file lacks, or undefined when no
 * single column stands out: a column not already used whose name contains, is contained in, or
 * is one or two letters away from the field's API name, its label or a common name for it.
 */
export function guessColumn(header: HeaderMap, used: ReadonlySet<number>, field: LineField, label: string): number | undefined {
  const targets = new Set([headerKey(field), ...labelForms(label), ...Object.keys(COMMON).filter((k) => COMMON[k] === field)]);
  const hits: number[] = [];
  header.columns.forEach((c, i) => {
    const n = headerKey(c);
    if (n.length < 2 || used.has(i) || canonicalField(c) !== undefined) return;
    for (const t of targets) {
      if ((n.length >= 3 && t.includes(n)) || (t.length >= 3 && n.includes(t)) || (t.length >= 4 && distance(n, t) <= (t.length >= 7 ? 2 : 1))) {
        hits.push(i);
        return;
      }
    }
  });
  return hits.length === 1 ? hits[0] : undefined;
}

function distance(a: string, b: string): number {
  if (Math.abs(a.length - b.length) > 2) return 3;
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      cur[j] = Math.min((prev[j] as number) + 1, (cur[j - 1] as number) + 1, (prev[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = cur;
  }
  return prev[b.length] as number;
}
