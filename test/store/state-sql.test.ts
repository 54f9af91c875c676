/**
 * Issue 24, item 4: every state a statement names comes from the state tables (store/state-sql.ts),
 * as pg-boss interpolates its frozen JOB_STATES: no state written by hand in SQL outside the
 * migrations, and the partial indexes' conditions, which a query must repeat word for word for
 * SQLite to use them (test/unit/flat-cost.test.ts checks the plans), derived from the same lists
 * and equal to the text the migrations created.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MIGRATIONS } from '../../src/store/migrations.js';
import { ROW_STATES } from '../../src/store/row-states.js';
import { BATCH_STATES } from '../../src/store/batch-states.js';
import { IN_DOUBT_INDEX, IN_POLL_INDEX, IN_REVIEW_INDEX, IN_SEND_INDEX } from '../../src/store/state-sql.js';

const SRC = join(import.meta.dirname, '..', '..', 'src');
const files = (dir: string): string[] =>
  readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? files(p) : p.endsWith('.ts') ? [p] : [];
  });
/** Source without comments. */
const code = (p: string): string => readFileSync(p, 'utf8').replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:])\/\/.*$/gm, '$1');

/** The condition a migration gave a partial index (the last migration that created it). */
function indexCondition(name: string): string {
  const all = MIGRATIONS.join('\n');
  const found = [...all.matchAll(new RegExp(`CREATE INDEX ${name} ON [^;]*? WHERE ([^;]+);`, 'g'))];
  expect(found.length, name).toBeGreaterThan(0);
  return found[found.length - 1]![1]!.trim();
}

const STATE = `(?:${[...new Set([...ROW_STATES, ...BATCH_STATES])].join('|')})`;
/** A state written as an SQL literal: compared with a column (`state = 'x'`, `state IN ('x'`), or a CASE branch. */
const SQL_LITERAL = new RegExp(`\\b(?:state|status)\\s*(?:=|!=|<>|IN\\s*\\(|NOT\\s+IN\\s*\\()\\s*'${STATE}'|\\bWHEN\\s+'${STATE}'`, 'i');
/** A TypeScript assignment (`facts.status = 'completed';`) is typed by the compiler, not SQL. */
const TS_ASSIGNMENT = new RegExp(`[\\w.]+\\s*=\\s*'${STATE}';`);
const HAND_WRITTEN = { test: (line: string): boolean => SQL_LITERAL.test(line) && !TS_ASSIGNMENT.test(line) };

describe('states in SQL come from the state tables', () => {
  it('the partial indexes\' conditions are derived from row-states.ts and equal the migrations\' text', () => {
    expect(IN_SEND_INDEX).toBe(indexCondition('rows_send'));
    expect(IN_POLL_INDEX).toBe(indexCondition('rows_poll'));
    expect(IN_DOUBT_INDEX).toBe(indexCondition('rows_in_flight'));
    expect(IN_REVIEW_INDEX).toBe(indexCondition('rows_review'));
  });

  it('no state is written by hand in SQL outside the migrations', () => {
    const exempt = ['store/migrations.ts', 'store/state-sql.ts'];
    const found: string[] = [];
    for (const f of files(SRC)) {
      const rel = relative(SRC, f).split('\\').join('/');
      // The sandbox is a separate program (the supplier's stand-in): its order statuses are not our states.
      if (exempt.includes(rel) || rel.startsWith('sandbox/')) continue;
      code(f).split('\n').forEach((line, i) => {
        if (HAND_WRITTEN.test(line)) found.push(`${rel}:${i + 1}: ${line.trim()}`);
      });
    }
    expect(found).toEqual([]);
  });

  it('the check finds a hand-written state', () => {
    expect(HAND_WRITTEN.test("`SELECT 1 FROM rows WHERE state = 'review'`")).toBe(true);
    expect(HAND_WRITTEN.test("WHERE b.state IN ('claimed', 'open')")).toBe(true);
    expect(HAND_WRITTEN.test("CASE state WHEN 'pending' THEN 'sending' END")).toBe(true);
    expect(HAND_WRITTEN.test("if (row.state === 'review') return")).toBe(false);
    expect(HAND_WRITTEN.test("if (!order.statusKnown) facts.status = 'processing';")).toBe(false);
  });
});
