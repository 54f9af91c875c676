/**
 * "The same trxid" is one definition (issue 29, src/kernel/identity.ts): the JavaScript fold and the
 * SQLite function trxid_fold() registered on every connection are one function, the store's
 * uniqueness (the folded index and the triggers of migration 13) refuses exactly what the fold
 * calls the same, and a home that bought two spellings before the fold was one migrates without
 * failing, keeps both rows and refuses a third spelling.
 */
import { afterEach, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { openDb, type Db } from '../../src/store/db.js';
import { MIGRATIONS } from '../../src/store/migrations.js';
import { RowReads } from '../../src/store/row-reads.js';
import { foldTrxid, isWellFormed, sameTrxid, trxidProblem, TRXID_INVISIBLE, TRXID_PATTERN } from '../../src/kernel/identity.js';
import { tempHome, type TempHome } from '../e2e/harness.js';

let homes: TempHome[] = [];
let dbs: Db[] = [];
afterEach(() => {
  for (const d of dbs.splice(0)) d.close();
  for (const h of homes.splice(0)) h.remove();
});

function home(): TempHome {
  const h = tempHome('trxid-fold-');
  homes.push(h);
  return h;
}

function db(path = join(home().dir, 'topup.db')): Db {
  const d = openDb(path);
  dbs.push(d);
  return d;
}

function batch(d: Database.Database, id: string): void {
  d.prepare(`INSERT INTO batches (id, seq, name, source_name, job_file, content_hash, origin, state, sandbox, created_at)
    VALUES (?, (SELECT coalesce(max(seq), 0) + 1 FROM batches), ?, ?, '', ?, 'submit', 'open', 1, 0)`).run(id, id, id, `h:${id}`);
}

function row(d: Database.Database, batchId: string, idx: number, trxid: string): void {
  d.prepare(`INSERT INTO rows (batch_id, idx, line, cells_json, state, trxid, updated_at) VALUES (?, ?, ?, '[]', 'pending', ?, 1000)`).run(batchId, idx, idx + 2, trxid);
}

const sqlFold = (d: Db, s: string): string => (d.prepare('SELECT trxid_fold(?) AS f').get(s) as { f: string }).f;

const SPACES = [' ', '\u00a0', '\u3000', '\u2009', '\t', '\u200b', '\r'];
/** Every script (whole code points, lone surrogates included), graphemes, full-width forms, letters with combining marks, spaces. */
const anyText = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 12 }),
  fc.string({ unit: 'grapheme', maxLength: 8 }),
  fc.string({ unit: fc.integer({ min: 0xff01, max: 0xff5e }).map((c) => String.fromCharCode(c)), maxLength: 8 }),
  fc.string({
    unit: fc.oneof(
      fc.constantFrom('a', 'A', 'i', 'I', 'ı', 'İ', 's', 'S', 'ß', 'ẞ', 'σ', 'ς', 'Σ', 'k', 'K', '\u212a', 'ǅ', 'ﬀ', 'Ꭰ', 'ꭰ', 'ΐ'),
      fc.integer({ min: 0x300, max: 0x36f }).map((c) => String.fromCharCode(c)),
      fc.constantFrom(...SPACES),
      fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
    ),
    maxLength: 10,
  }),
);

/** Spellings of one text that a person, a keyboard or a spreadsheet may produce. */
const respell = (s: string, how: number): string =>
  [
    s.toUpperCase(),
    s.toLowerCase(),
    s.normalize('NFD'),
    s.normalize('NFC'),
    s.replace(/[!-~]/g, (c) => String.fromCharCode(c.charCodeAt(0) + 0xfee0)),
    s,
  ][how % 6]!;

describe('the trxid fold', () => {
  it('folds the spellings the issue names as one, and keeps other letters apart', () => {
    expect(sameTrxid('ÄB-7', 'äb-7')).toBe(true);
    expect(sameTrxid('ÖD-9', 'öd-9')).toBe(true);
    expect(sameTrxid('SHOP-7', 'shop-7')).toBe(true);
    expect(sameTrxid('A\u0308B-7', 'äb-7')).toBe(true); // a combining mark typed apart
    expect(sameTrxid('ＡＢ－７', 'ab-7')).toBe(true); // full-width forms
    expect(sameTrxid('STRASSE-1', 'straße-1')).toBe(true);
    expect(sameTrxid('ẞ-1', 'ss-1')).toBe(true); // capital sharp s: two rounds
    expect(sameTrxid('ΟΔΟΣ', 'οδοσ')).toBe(true); // final sigma
    expect(sameTrxid('\u212a-1', 'k-1')).toBe(true); // Kelvin sign
    expect(sameTrxid('İ-1', 'I-1')).toBe(false); // Turkish dotted capital I is another letter
    expect(sameTrxid('ÄB-7', 'AB-7')).toBe(false); // a mark is not a case
    expect(foldTrxid('SHOP-1001')).toBe('shop-1001'); // ASCII folds as lower() did: stored ASCII keeps its meaning
  });

  it('SQLite trxid_fold() equals the JavaScript fold on arbitrary text; the fold is idempotent; ill-formed text never reaches it (refused by the rule)', () => {
    const d = db();
    fc.assert(
      fc.property(anyText, (s) => {
        if (!isWellFormed(s)) {
          // A lone surrogate cannot be stored as itself (SQLite holds UTF-8): the trxid rule refuses it first.
          expect(trxidProblem(s)).toMatch(/not well-formed/);
          expect(TRXID_PATTERN.test(s)).toBe(false);
          return;
        }
        const f = foldTrxid(s);
        expect(sqlFold(d, s)).toBe(f);
        expect(foldTrxid(f)).toBe(f);
      }),
      { numRuns: 3000 },
    );
  });

  it("the store's uniqueness is the fold's: a second row is refused exactly when its trxid folds as the first's", () => {
    const d = db();
    d.pragma('synchronous = OFF'); // thousands of one-row commits; durability is not what is tested here
    batch(d, 'b1');
    let idx = 0;
    fc.assert(
      fc.property(anyText.filter(isWellFormed).filter((s) => s !== ''), fc.nat(), fc.option(anyText.filter(isWellFormed), { nil: undefined }), (a, how, other) => {
        const b = other ?? respell(a, how);
        if (b === '' || !isWellFormed(b)) return;
        const tag = `-${idx}`; // each pair on its own: no earlier pair's trxid in the way
        const first = idx++;
        const second = idx++;
        row(d, 'b1', first, a + tag);
        let refused = false;
        try {
          row(d, 'b1', second, b + tag);
        } catch (err) {
          expect(String(err)).toMatch(/rows\.trxid/);
          refused = true;
        }
        expect(refused).toBe(foldTrxid(a + tag) === foldTrxid(b + tag));
      }),
      { numRuns: 1500 },
    );
  });
});

describe('a home from before the one fold (schema 12)', () => {
  /** A database as schema 12 left it, with ÄB-7 and äb-7 both bought (its lower() told them apart). */
  function schema12(path: string): void {
    const old = new Database(path);
    old.exec('CREATE TABLE schema_version (version INTEGER NOT NULL)');
    for (const m of MIGRATIONS.slice(0, 12)) old.exec(m);
    old.prepare('INSERT INTO schema_version (version) VALUES (12)').run();
    batch(old, 'b1');
    batch(old, 'b2');
    row(old, 'b1', 0, 'ÄB-7');
    row(old, 'b2', 0, 'äb-7');
    row(old, 'b2', 1, 'SHOP-1');
    expect(() => row(old, 'b2', 2, 'shop-1')).toThrow(/rows\.trxid/); // ASCII was already folded
    old.close();
  }

  it('migrates without failing, keeps both rows, refuses a third spelling, and finds each spelling as itself first', () => {
    const path = join(home().dir, 'topup.db');
    schema12(path);
    const d = db(path);
    expect((d.prepare('SELECT version FROM schema_version').get() as { version: number }).version).toBe(MIGRATIONS.length);
    expect(d.prepare('SELECT batch_id, idx, trxid FROM rows ORDER BY batch_id, idx').all()).toEqual([
      { batch_id: 'b1', idx: 0, trxid: 'ÄB-7' },
      { batch_id: 'b2', idx: 0, trxid: 'äb-7' },
      { batch_id: 'b2', idx: 1, trxid: 'SHOP-1' },
    ]);
    expect(() => row(d, 'b2', 5, 'Äb-7')).toThrow(/rows\.trxid/);
    expect(() => row(d, 'b2', 6, 'ＡＢ-7'.replace('Ａ', 'Ä'))).toThrow(/rows\.trxid/);
    expect(() => row(d, 'b2', 7, 'shop-1')).toThrow(/rows\.trxid/);
    const reads = new RowReads(d);
    expect(reads.byTrxid('ÄB-7')).toEqual({ batchId: 'b1', idx: 0 });
    expect(reads.byTrxid('äb-7')).toEqual({ batchId: 'b2', idx: 0 });
    expect(reads.byTrxid('Äb-7')).toBeDefined();
    // The lookup uses the folded index, not a scan.
    const plan = d.prepare('EXPLAIN QUERY PLAN SELECT batch_id, idx FROM rows WHERE trxid_fold(trxid) = trxid_fold(?) AND trxid IS NOT NULL LIMIT 1').all('x') as { detail: string }[];
    expect(plan.map((p) => p.detail).join(' ')).toMatch(/rows_trxid_folded/);
  });

  it('rebuilds the folded indexes when the Unicode tables they were built with change (a Node upgrade)', () => {
    const path = join(home().dir, 'topup.db');
    const d = openDb(path);
    d.prepare(`UPDATE meta SET value = '1/0.0' WHERE key = 'trxid_fold_build'`).run();
    d.close();
    const again = db(path);
    expect((again.prepare(`SELECT value FROM meta WHERE key = 'trxid_fold_build'`).get() as { value: string }).value).toBe(`1/${process.versions.unicode}`);
  });
});

describe('the trxid pattern, as other engines read it', () => {
  it('names exactly the Cc and Cf characters of the BMP (of this Node\'s Unicode), without \\p{…}', () => {
    const listed = new RegExp(`^[${TRXID_INVISIBLE}]$`, 'u');
    const unicode = /^[\p{Cc}\p{Cf}]$/u;
    const differ: string[] = [];
    for (let c = 0; c < 0x10000; c++) {
      if (c >= 0xd800 && c <= 0xdfff) continue;
      const ch = String.fromCharCode(c);
      if (listed.test(ch) !== unicode.test(ch)) differ.push(`U+${c.toString(16).toUpperCase().padStart(4, '0')}`);
    }
    expect(differ).toEqual([]);
    expect(TRXID_PATTERN.source).not.toMatch(/\\p\{/);
  });

  it('read without unicode mode (ajv, Spectral, Python re) it agrees with the server on BMP text', () => {
    // ajv compiles a schema's pattern without the u flag: before, \p{Cc} read as "p", "{", "C", "c", "}",
    // so every example trxid with a "p" or "s" in it broke the document's own pattern.
    const plain = new RegExp(TRXID_PATTERN.source);
    for (const t of ['shop-A-1001', 'SHOP-1001', 'ÄB-7', 'öd-9', '注文-1', 'a/b#ç?', 'p{Cc}']) expect([t, plain.test(t)]).toEqual([t, true]);
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 40 }).filter((s) => ![...s].some((ch) => ch.codePointAt(0)! > 0xffff)), (s) => {
        expect(plain.test(s)).toBe(TRXID_PATTERN.test(s));
      }),
      { numRuns: 2000 },
    );
  });
});
