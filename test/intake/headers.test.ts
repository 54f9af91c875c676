/**
 * Headers as resellers write them: the catalog's labels and common names, resolved per game
 * line; a missing column as one file-level problem; the ML "id (zone)" split; and workbook cells
 * that are not what they show.
 */
import { describe, expect, it } from 'vitest';
import { parseProduct, parseServiceLine } from '../../src/api/schemas.js';
import { buildCatalogIndex, type CatalogIndex } from '../../src/intake/catalog-index.js';
import { mapHeader } from '../../src/intake/columns.js';
import type { CellNote, RawRow } from '../../src/intake/formats/index.js';
import { createRowValidator, formatProblems, type RowVerdict } from '../../src/intake/validate.js';
import { loadCatalog } from './helpers.js';

const catalog = loadCatalog();

function run(columns: string[], rows: string[][], index: CatalogIndex = catalog) {
  const v = createRowValidator(mapHeader(columns), index);
  const verdicts = rows.map((cells, i) => v.validate({ index: i, line: i + 2, cells }));
  return { verdicts, fileProblems: v.fileProblems() };
}
const requestOf = (v: RowVerdict | undefined) => {
  if (!v?.ok) throw new Error(`expected ok, got ${v ? formatProblems(v.problems) : 'nothing'}`);
  return v.order.request;
};
const problemsOf = (v: RowVerdict | undefined) => (v && !v.ok ? v.problems : []);

describe('the catalog\'s labels name their fields, per line', () => {
  it('"Player ID" is userId on PUBG; gift cards in the same file are unaffected', () => {
    const { verdicts, fileProblems } = run(['pid', 'Player ID', 'quantity'], [['101', '5123456789', ''], ['801', '', '2']]);
    expect(requestOf(verdicts[0])).toEqual({ pid: '101', trxid: '', userId: '5123456789' });
    expect(requestOf(verdicts[1])).toEqual({ pid: '801', trxid: '', quantity: 2 });
    expect(fileProblems).toEqual([]);
  });

  it('"User ID" and "Zone ID" (the ML line\'s labels)', () => {
    const { verdicts } = run(['pid', 'User ID', 'Zone ID'], [['301', '12345678', '2001']]);
    expect(requestOf(verdicts[0])).toEqual({ pid: '301', trxid: '', userId: '12345678', zoneId: '2001' });
  });

  it('"UID" and "Server" (Wuthering Waves\' labels), "Riot ID" without its "(name#tag)"', () => {
    expect(requestOf(run(['pid', 'UID', 'Server'], [['401', '800123456', 'Europe']]).verdicts[0])).toEqual({ pid: '401', trxid: '', userId: '800123456', serverId: 'europe' });
    expect(requestOf(run(['pid', 'Riot ID'], [['601', 'Player#EUW']]).verdicts[0]).userId).toBe('Player#EUW');
    expect(requestOf(run(['pid', 'Riot ID (name#tag)'], [['601', 'Player#EUW']]).verdicts[0]).userId).toBe('Player#EUW');
  });

  it('one label, two fields: "Server ID" is serverId for Wuthering Waves and moreId for Once Human, in one file', () => {
    const { verdicts, fileProblems } = run(
      ['pid', 'Player ID', 'Region', 'Server ID'],
      [['401', '800123456', '', 'asia'], ['501', 'abc123', 'Europe', '9001']],
    );
    expect(requestOf(verdicts[0])).toEqual({ pid: '401', trxid: '', userId: '800123456', serverId: 'asia' });
    expect(requestOf(verdicts[1])).toEqual({ pid: '501', trxid: '', userId: 'abc123', region: 'Europe', moreId: '9001' });
    expect(fileProblems).toEqual([]);
  });

  it.each([
    [['pid', 'player', 'zone'], ['301', '12345678', '2001']],
    [['pid', 'Player', 'Zone'], ['301', '12345678', '2001']],
    [['pid', 'user', 'zone'], ['301', '12345678', '2001']],
  ])('common names %j', (columns, cells) => {
    expect(requestOf(run(columns, [cells]).verdicts[0])).toEqual({ pid: '301', trxid: '', userId: '12345678', zoneId: '2001' });
  });

  it('"server" is the server of a line with server options', () => {
    expect(requestOf(run(['pid', 'uid', 'server'], [['401', '800123456', 'SEA']]).verdicts[0]).serverId).toBe('sea');
  });

  it('the API\'s own name wins over a label: userId is sent, "Player ID" carried through', () => {
    const { verdicts, fileProblems } = run(['pid', 'userId', 'Player ID'], [['101', '5123456789', 'someone else']]);
    expect(requestOf(verdicts[0]).userId).toBe('5123456789');
    expect(fileProblems).toEqual([]);
  });
});

describe('ambiguity is refused clearly, once', () => {
  it('two columns that could each be the player id', () => {
    const { verdicts, fileProblems } = run(['pid', 'Player ID', 'Player_ID2', 'player'], [['101', '5123456789', '', '5123456780']]);
    // "Player ID" (label) is stronger than "player" (common name): not ambiguous.
    expect(requestOf(verdicts[0]).userId).toBe('5123456789');
    expect(fileProblems).toEqual([]);
    // "UID" and "Uid " normalise alike: the header check refuses that before anything else.
    expect(() => run(['pid', 'UID', 'Server', 'Uid '], [['401', '1', 'asia', '2']])).toThrow(/more than once/);
    const two = run(['pid', 'Riot ID (name#tag)', 'Riot ID'], [['601', 'Player#EUW', 'Other#EUW'], ['601', 'A#EUW', 'B#EUW']]);
    expect(two.verdicts.every((v) => !v.ok)).toBe(true);
    expect(two.fileProblems.map((p) => p.message)).toEqual([
      expect.stringMatching(/^columns "Riot ID \(name#tag\)" and "Riot ID" could each be the Riot ID \(name#tag\) \(userId\) of Valorant \(valorant\); rename the column that holds it to "userId"/),
    ]);
  });

  it('a column that is the label of two fields of one line', () => {
    const line = parseServiceLine({
      productName: 'Twin', slug: 'twin', gameName: 'Twin', status: 'active',
      required: [{ field: 'userId', label: 'ID' }, { field: 'zoneId', label: 'ID' }],
    });
    const index = buildCatalogIndex([line], [parseProduct({ id: 'T1', slug: 'twin', gameName: 'Twin', serviceName: 'x', category: 'topup', price: 1, status: 'active' })]);
    const { verdicts, fileProblems } = run(['pid', 'ID'], [['T1', '5'], ['T1', '6']], index);
    expect(verdicts.every((v) => !v.ok)).toBe(true);
    expect(fileProblems).toHaveLength(2);
    expect(fileProblems[0]?.message).toMatch(/column "ID" could be more than one field of Twin \(twin\)/);
  });
});

describe('a column the file lacks is one file-level problem', () => {
  it('2,853 player-id rows and 147 gift cards under an unknown header: one problem naming the rename, and every row stays unordered', () => {
    const rows: string[][] = [];
    for (let i = 0; i < 3000; i++) rows.push(i % 20 === 7 && i < 2940 ? ['801', '', '1'] : ['101', `51234${String(i).padStart(5, '0')}`, '']);
    const { verdicts, fileProblems } = run(['pid', 'Gamer ID', 'quantity'], rows);
    expect(fileProblems).toHaveLength(1);
    expect(fileProblems[0]?.message).toMatch(/^the file has no Player ID column \(userId\), which PUBG Mobile \(pubg\) needs for its 2,853 rows \(the first on line 2\); rename column "Gamer ID" to "userId"/);
    const echoes = verdicts.flatMap((v) => problemsOf(v)).filter((p) => p.fileProblem === fileProblems[0]?.key);
    expect(echoes).toHaveLength(2853);
  });

  it('without a likely column, it says which column to add', () => {
    const { fileProblems } = run(['pid', 'note'], [['301', 'x']]);
    expect(fileProblems.map((p) => p.message)).toEqual([
      expect.stringMatching(/no User ID column \(userId\).*its row \(line 2\); add a column named "userId" \(or "User ID"\)/),
      expect.stringMatching(/no Zone ID column \(zoneId\).*add a column named "zoneId"/),
    ]);
  });

  it('"zone number" is guessed as the zone column ("Zone No" is a spelling of it: columns.ts SPELLINGS)', () => {
    expect(run(['pid', 'userId', 'zone number'], [['301', '12345678', '2001']]).fileProblems[0]?.message).toMatch(/rename column "zone number" to "zoneId"/);
  });

  it('a blank cell in a column that exists is a row problem, not a file problem', () => {
    const { verdicts, fileProblems } = run(['pid', 'userId', 'zoneId'], [['301', '12345678', ''], ['301', '12345678', '2001']]);
    expect(problemsOf(verdicts[0])).toEqual([{ column: 'zoneId', reason: 'missing: Mobile Legends (mobilelegends) needs Zone ID' }]);
    expect(verdicts[1]?.ok).toBe(true);
    expect(fileProblems).toEqual([]);
  });
});

describe('ML "id (zone)" in the userId column', () => {
  it('is split when there is no zone column, and then no column is missing', () => {
    const { verdicts, fileProblems } = run(['pid', 'userId'], [['301', '777888999 (2005)'], ['301', '777888998(2006)']]);
    expect(requestOf(verdicts[0])).toEqual({ pid: '301', trxid: '', userId: '777888999', zoneId: '2005' });
    expect(requestOf(verdicts[1])).toEqual({ pid: '301', trxid: '', userId: '777888998', zoneId: '2006' });
    expect(fileProblems).toEqual([]);
  });

  it('fills a blank zone cell; an equal zone is fine; a different one is a row problem', () => {
    const { verdicts } = run(['pid', 'Player ID', 'zone'], [['301', '777888999 (2005)', ''], ['301', '777888999 (2005)', '2005'], ['301', '777888999 (2005)', '2001']]);
    expect(requestOf(verdicts[0]).zoneId).toBe('2005');
    expect(requestOf(verdicts[1]).zoneId).toBe('2005');
    expect(problemsOf(verdicts[2])).toEqual([{ column: 'zone', reason: expect.stringMatching(/"2001" disagrees with the zone 2005 written with the id in Player ID/) }]);
  });

  it('rows without the form, in a file without a zone column, are row problems once another row brought its zone', () => {
    const { verdicts, fileProblems } = run(['pid', 'userId'], [['301', '777888999 (2005)'], ['301', '777888999']]);
    expect(verdicts[0]?.ok).toBe(true);
    expect(problemsOf(verdicts[1])[0]?.column).toBe('zoneId');
    expect(fileProblems).toEqual([]);
  });

  it('only on ML lines: elsewhere the form is an id with spaces', () => {
    expect(problemsOf(run(['pid', 'userId'], [['101', '777888999 (2005)']]).verdicts[0])[0]?.reason).toMatch(/contains spaces/);
  });

  it('"777888999 2005" on an ML line says how to write it', () => {
    expect(problemsOf(run(['pid', 'userId', 'zoneId'], [['301', '777888999 2005', '']]).verdicts[0])[0]?.reason).toMatch(/777888999 \(2005\)/);
  });
});

describe('workbook cells that are not what they show', () => {
  const noted = (cells: string[], notes: [number, CellNote][]): RawRow => ({ index: 0, line: 2, cells, notes: new Map(notes) });
  const check = (columns: string[], row: RawRow) => createRowValidator(mapHeader(columns), catalog).validate(row);

  it.each<[CellNote, RegExp]>([
    ['formula', /formula \(its saved result is "5123456789"\)/],
    ['date', /is a date/],
    ['inexact-number', /format the column as Text.*at most 15 digits/],
    ['error', /error/],
    ['boolean', /yes\/no/],
  ])('%s in the userId column is refused', (note, reason) => {
    const v = check(['pid', 'Player ID'], noted(['101', '5123456789'], [[1, note]]));
    expect(problemsOf(v)).toEqual([{ column: 'Player ID', reason: expect.stringMatching(reason) }]);
  });

  it('a formula pid, a date quantity; a fractional price is fine; notes in carried columns are ignored', () => {
    expect(problemsOf(check(['pid', 'userId'], noted(['101', '5123456789'], [[0, 'formula']])))[0]?.column).toBe('pid');
    expect(problemsOf(check(['pid', 'quantity'], noted(['801', '2'], [[1, 'date']])))[0]?.column).toBe('quantity');
    expect(check(['pid', 'userId', 'maxPriceUsd'], noted(['101', '5123456789', '1.5'], [[2, 'inexact-number']])).ok).toBe(true);
    expect(check(['pid', 'userId', 'note'], noted(['101', '5123456789', 'x'], [[2, 'formula']])).ok).toBe(true);
  });
});
