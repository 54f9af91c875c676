/**
 * The one definition of a batch's progress in parts, with their words: the segmented bar (on the
 * batch page and, small, on the batch list), its legend, the batch's "By status" table and the
 * live script (assets.ts writes this list into the script) all read it.
 *
 * Before, the bar said "waiting 60, never sent 0" while the table beside it said "not sent 32,
 * being followed 28": the same rows under other words, and "never sent" read as "not sent" (a
 * new-user trial). Now each segment names the states it holds, with the table's own words, and the
 * table is grouped by segment: the legend's count of a segment is the sum of its columns.
 */
import type { Figures } from './figures.js';

export type CountKey = keyof Figures['counts'];

export interface SegmentPart {
  /** The count in Figures['counts'] (and the live payload's). */
  count: CountKey;
  /** The words the table, the legend and the row filter's title use. */
  label: string;
  /** The batch page's row filter (`?rows=`) that lists those rows. */
  filter: string;
}

export interface SegmentDef {
  /** Stable key: `data-seg`, the legend's `data-f="seg-…"`, the pattern's look (charts.ts). */
  key: string;
  label: string;
  /** What the segment means, for the legend's title and the docs. */
  what: string;
  parts: readonly SegmentPart[];
}

export const SEGMENTS: readonly SegmentDef[] = [
  { key: 'completed', label: 'completed', what: 'orders the supplier completed', parts: [{ count: 'completed', label: 'completed', filter: 'completed' }] },
  {
    key: 'failed',
    label: 'failed',
    what: 'cancelled by the supplier, refused by the API, or invalid in the file',
    parts: [
      { count: 'cancelled', label: 'cancelled', filter: 'cancelled' },
      { count: 'rejected', label: 'rejected', filter: 'rejected' },
      { count: 'invalid', label: 'invalid', filter: 'invalid' },
    ],
  },
  { key: 'review', label: 'in review', what: 'whether they were charged is not known: resolve them on the Review page', parts: [{ count: 'review', label: 'in review', filter: 'review' }] },
  {
    key: 'waiting',
    label: 'in progress',
    what: 'not ended yet: not sent yet, on their way to the API, or sent and followed until the supplier ends them',
    parts: [
      { count: 'pending', label: 'not sent yet', filter: 'unsent' },
      { count: 'inFlight', label: 'on their way', filter: 'in flight' },
      { count: 'followed', label: 'being followed', filter: 'followed' },
    ],
  },
  {
    key: 'skipped',
    label: 'skipped',
    what: 'never sent and never will be: the batch was cancelled, the file was a duplicate, a repeat of an earlier purchase, or not covered by the balance',
    parts: [{ count: 'skipped', label: 'skipped', filter: 'skipped' }],
  },
];

/** Every count of the table, in the table's order (segment by segment). */
export const STATUS_PARTS: readonly SegmentPart[] = SEGMENTS.flatMap((s) => s.parts);

export interface SegmentCount {
  key: string;
  label: string;
  n: number;
  /** Each part's count (a segment of one part has itself). */
  parts: { count: CountKey; label: string; n: number }[];
}

/** A batch's counts in the segments. */
export function segmentCounts(counts: Figures['counts']): SegmentCount[] {
  return SEGMENTS.map((s) => {
    const parts = s.parts.map((p) => ({ count: p.count, label: p.label, n: counts[p.count] }));
    return { key: s.key, label: s.label, n: parts.reduce((a, p) => a + p.n, 0), parts };
  });
}

/** What the live script needs: each segment's key, label and the counts it sums. */
export function segmentsForScript(): string {
  return JSON.stringify(SEGMENTS.map((s) => ({ key: s.key, label: s.label, parts: s.parts.map((p) => p.count) })));
}
