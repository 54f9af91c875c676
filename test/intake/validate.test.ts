import { describe, expect, it } from 'vitest';
import { parseProduct, parseServiceLine } from '../../src/api/schemas.js';
import { buildCatalogIndex } from '../../src/intake/catalog-index.js';
import { mapHeader } from '../../src/intake/columns.js';
import { createRowValidator, formatProblems, type RowVerdict } from '../../src/intake/validate.js';
import { loadCatalog, readAll, writeTemp } from './helpers.js';

const catalog = loadCatalog();

/** Validates rows given as objects keyed by header cell, in one file (so trxids are shared). */
function check(columns: string[], ...rows: string[][]): RowVerdict[] {
  const v = createRowValidator(mapHeader(columns), catalog);
  return rows.map((cells, index) => v.validate({ index, line: index + 2, cells }));
}
const one = (columns: string[], cells: string[]) => check(columns, cells)[0] as RowVerdict;
const problemsOf = (v: RowVerdict) => (v.ok ? [] : v.problems);
const orderOf = (v: RowVerdict) => {
  if (!v.ok) throw new Error(`expected ok, got ${formatProblems(v.problems)}`);
  return v.order;
};

describe('valid orders send exactly the fields their line needs', () => {
  it('player id (pubg), with a generated trxid when none is given', () => {
    const o = orderOf(one(['pid', 'userId', 'zoneId', 'note'], ['101', '5123456789', '77', 'hello']));
    expect(o.request).toEqual({ pid: '101', trxid: '', userId: '5123456789' });
    expect(o).toMatchObject({ givenTrxid: undefined, slug: 'pubg', packName: '60 UC', unitPriceUsd: 0.99, quantity: 1, amountUsd: 0.99, kind: 'player-id' });
  });

  it('ML-style userId + zoneId', () => {
    const o = orderOf(one(['pid', 'trxid', 'userId', 'zoneId'], ['301', 'T-1', '12345678', '2001']));
    expect(o.request).toEqual({ pid: '301', trxid: 'T-1', userId: '12345678', zoneId: '2001' });
    expect(o.givenTrxid).toBe('T-1');
    expect(o.kind).toBe('ml');
  });

  it('uid + server: matches label or value case-insensitively and sends the value', () => {
    const o = orderOf(one(['pid', 'userId', 'serverId'], ['401', '800123456', 'AMERICA']));
    expect(o.request).toEqual({ pid: '401', trxid: '', userId: '800123456', serverId: 'america' });
    expect(orderOf(one(['pid', 'userId', 'serverId'], ['401', '800123456', 'sea'])).request.serverId).toBe('sea');
  });

  it('oncehuman sends userId, the resolved region and moreId; shortcuts resolve', () => {
    const o = orderOf(one(['pid', 'userId', 'region', 'moreId', 'serverId'], ['501', 'abc123', 'na', '9001', 'x']));
    expect(o.request).toEqual({ pid: '501', trxid: '', userId: 'abc123', region: 'North America', moreId: '9001' });
    expect(o.kind).toBe('region-server');
    expect(orderOf(one(['pid', 'userId', 'region', 'moreId'], ['501', 'abc123', 'europe', '9001'])).request.region).toBe('Europe');
  });

  it('riot id: name#tag, names may hold spaces', () => {
    const o = orderOf(one(['pid', 'userId'], ['601', 'Hide on bush#KR1']));
    expect(o.request).toEqual({ pid: '601', trxid: '', userId: 'Hide on bush#KR1' });
    expect(o.kind).toBe('riot-id');
  });

  it('game keys send quantity and no userId; amount is price × quantity to the cent', () => {
    const o = orderOf(one(['pid', 'userId', 'quantity'], ['701', '5555555', '3']));
    expect(o.request).toEqual({ pid: '701', trxid: '', quantity: 3 });
    expect(o).toMatchObject({ kind: 'stock', quantity: 3, unitPriceUsd: 0.9, amountUsd: 2.7 });
  });

  it('keys and cards without a quantity column order 1', () => {
    expect(orderOf(one(['pid'], ['801'])).request).toEqual({ pid: '801', trxid: '', quantity: 1 });
    expect(orderOf(one(['pid', 'quantity'], ['801', ' '])).quantity).toBe(1);
  });

  it('trims whitespace around values', () => {
    const o = orderOf(one(['pid', 'trxid', 'userId', 'zoneId'], [' 301 ', ' T9 ', '\u00a012345678 ', ' 2001']));
    expect(o.request).toEqual({ pid: '301', trxid: 'T9', userId: '12345678', zoneId: '2001' });
  });
});

describe('header aliases and case', () => {
  it.each([
    [['PID', 'trxId', 'userID', 'ZONEID']],
    [['pid', 'idtrx', 'user_id', 'zone id']],
    [[' Pid ', 'idTrx', 'User-Id', 'zone_ID']],
  ])('%j', (columns) => {
    const o = orderOf(one(columns, ['301', 'X1', '12345678', '2001']));
    expect(o.request).toEqual({ pid: '301', trxid: 'X1', userId: '12345678', zoneId: '2001' });
  });

  it('problems name the column the way the user wrote it', () => {
    const v = one(['PID', 'User_ID'], ['201', '12']);
    expect(problemsOf(v)).toEqual([{ column: 'User_ID', reason: expect.stringMatching(/5–20 digits/) }]);
  });
});

describe('slug + pack resolution', () => {
  it('resolves case- and space-insensitively', () => {
    const o = orderOf(one(['slug', 'pack', 'userId'], ['PUBG', ' 325  uc ', '5123456789']));
    expect(o.request.pid).toBe('102');
  });

  it('names unknown slugs, unknown packs and missing halves', () => {
    expect(problemsOf(one(['slug', 'pack', 'userId'], ['nosuch', '60 UC', '5123456789']))).toEqual([
      { column: 'slug', reason: expect.stringMatching(/no game with slug "nosuch"/) },
    ]);
    expect(problemsOf(one(['slug', 'pack', 'userId'], ['pubg', '61 UC', '5123456789']))).toEqual([
      { column: 'pack', reason: expect.stringMatching(/no pack named "61 UC"/) },
    ]);
    expect(problemsOf(one(['slug', 'pack', 'userId'], ['pubg', '', '5123456789']))[0]?.column).toBe('pack');
    expect(problemsOf(one(['pid', 'slug', 'pack', 'userId'], ['', '', '', '5123456789']))[0]).toEqual({
      column: 'pid',
      reason: 'missing: give a pid, or a slug and a pack',
    });
  });

  it('refuses a pid that contradicts the slug or pack of the same row', () => {
    const p = problemsOf(one(['pid', 'slug', 'pack', 'userId'], ['101', 'ffmena', '325 UC', '5123456789']));
    expect(p.map((x) => x.column)).toEqual(['slug', 'pack']);
  });
});

describe('catalog rules', () => {
  it('unknown pid, inactive pack, game in maintenance, game not listed', () => {
    expect(problemsOf(one(['pid', 'userId'], ['999', '5123456789']))).toEqual([{ column: 'pid', reason: 'no pack with pid "999" in the catalog' }]);
    expect(problemsOf(one(['pid', 'userId'], ['104', '5123456789']))[0]?.reason).toMatch(/not on sale \(status "inactive"\)/);
    expect(problemsOf(one(['pid', 'userId'], ['901', '5123456789']))[0]?.reason).toMatch(/not taking orders now \(status "maintenance"\)/);
    expect(problemsOf(one(['pid', 'userId'], ['951', '5123456789']))[0]?.reason).toMatch(/does not list this game/);
  });

  it('required fields: missing value, missing column', () => {
    expect(problemsOf(one(['pid', 'userId', 'zoneId'], ['301', '12345678', '']))).toEqual([
      { column: 'zoneId', reason: 'missing: Mobile Legends (mobilelegends) needs Zone ID' },
    ]);
    expect(problemsOf(one(['pid', 'userId'], ['301', '12345678']))).toEqual([
      { column: 'zoneId', reason: 'missing: the file has no zoneId column, and Mobile Legends (mobilelegends) needs Zone ID', fileProblem: expect.any(String) },
    ]);
    const p = problemsOf(one(['pid'], ['501']));
    expect(p.map((x) => x.column)).toEqual(['userId', 'region', 'moreId']);
  });

  it('zoneId must be numeric', () => {
    expect(problemsOf(one(['pid', 'userId', 'zoneId'], ['301', '12345678', 'Z12']))).toEqual([
      { column: 'zoneId', reason: 'must be a number, digits only (got "Z12")' },
    ]);
  });

  it.each(['1234', '123456789012345678901', '12a45678'])('ff userId %s is refused', (id) => {
    expect(problemsOf(one(['pid', 'userId'], ['201', id]))).toEqual([{ column: 'userId', reason: expect.stringMatching(/must be 5–20 digits/) }]);
  });

  it.each(['12345', '12345678901234567890'])('ff userId %s is accepted', (id) => {
    expect(orderOf(one(['pid', 'userId'], ['201', id])).request.userId).toBe(id);
  });

  it.each(['Player', 'Player#', '#EUW', 'ab#EUW', 'Player#E', 'Player#TOOLONG', 'A#B#C'])('riot id %j is refused', (id) => {
    expect(problemsOf(one(['pid', 'userId'], ['601', id]))[0]?.column).toBe('userId');
  });

  it('server and region must be among the listed options, which are named', () => {
    expect(problemsOf(one(['pid', 'userId', 'serverId'], ['401', '800123456', 'mars']))).toEqual([
      { column: 'serverId', reason: expect.stringMatching(/"mars" is not a server .* america \(America\), europe \(Europe\)/) },
    ]);
    expect(problemsOf(one(['pid', 'userId', 'region', 'moreId'], ['501', 'abc', 'Antarctica', '9001']))).toEqual([
      { column: 'region', reason: expect.stringMatching(/"Antarctica" is not a region .*Europe, North America, Asia/) },
    ]);
  });

  it('an id with inner spaces is refused', () => {
    expect(problemsOf(one(['pid', 'userId'], ['101', '12 3456']))).toEqual([
      { column: 'userId', reason: '"12 3456" contains spaces; an id is written without them' },
    ]);
  });
});

describe('spreadsheet-mangled identifiers are refused with a hint, never guessed at', () => {
  const hint = /format the column as Text and re-export/;
  it.each([
    ['userId', ['pid', 'userId'], ['101', '1.23457E+11']],
    ['userId', ['pid', 'userId'], ['101', '123456.0']],
    ['userId', ['pid', 'userId'], ['201', '5.12346e+9']],
    ['zoneId', ['pid', 'userId', 'zoneId'], ['301', '12345678', '2001.0']],
    ['trxid', ['pid', 'trxid', 'userId'], ['101', '4.5E+15', '5123456789']],
    ['pid', ['pid', 'userId'], ['1.01E+2', '5123456789']],
    ['moreId', ['pid', 'userId', 'region', 'moreId'], ['501', 'abc', 'eu', '9001.0']],
    ['userId', ['pid', 'userId'], ['101', '5,123,456,789']],
    ['userId', ['pid', 'userId'], ['101', '5.123.456.789']],
  ])('%s', (column, columns, cells) => {
    expect(problemsOf(one(columns, cells))).toEqual([{ column, reason: expect.stringMatching(hint) }]);
  });
});

describe('an id is never a formula', () => {
  it.each(['=HYPERLINK("http://x","y")', '+1+cmd|/C calc!A0', '-2+3', '@SUM(1,1)'])('userId %s is refused', (v) => {
    expect(problemsOf(one(['pid', 'userId'], ['101', v]))).toEqual([{ column: 'userId', reason: expect.stringMatching(/formula/) }]);
  });
});

describe('quantity', () => {
  it.each([
    ['0', /between 1 and 120/],
    ['-1', /whole number/],
    ['1.5', /whole number/],
    ['ten', /whole number/],
    ['501', /more than 500/],
    ['121', /only 120 in stock/],
  ])('%s on a game key is refused', (q, reason) => {
    expect(problemsOf(one(['pid', 'quantity'], ['701', q]))).toEqual([{ column: 'quantity', reason: expect.stringMatching(reason) }]);
  });

  it('more gift cards than in stock, and an out-of-stock card', () => {
    expect(problemsOf(one(['pid', 'quantity'], ['801', '4']))[0]?.reason).toBe('only 3 in stock, 4 requested');
    expect(orderOf(one(['pid', 'quantity'], ['801', '3'])).amountUsd).toBe(31.5);
    expect(problemsOf(one(['pid'], ['802']))).toEqual([{ column: 'quantity', reason: '"Steam 50 USD" is out of stock' }]);
  });

  it('is refused on a top-up line unless it is 1 (one top-up per row; 1 is not sent)', () => {
    expect(orderOf(one(['pid', 'userId', 'qty', 'quantity'], ['101', '5123456789', '', '1'])).request).toEqual({ pid: '101', trxid: '', userId: '5123456789' });
    expect(problemsOf(one(['pid', 'userId', 'qty', 'quantity'], ['101', '5123456789', '', '5']))).toEqual([
      { column: 'quantity', reason: 'a top-up is bought once per row: write 5 rows to buy it 5 times (only game keys and gift cards take a quantity)' },
    ]);
    expect(problemsOf(one(['pid', 'userId', 'quantity'], ['101', '5123456789', 'x']))).toEqual([
      { column: 'quantity', reason: 'only game keys and gift cards take a quantity; leave it blank (or 1) for top-ups' },
    ]);
  });
});

describe('trxid and maxPriceUsd', () => {
  it('refuses a trxid used twice in a file (case-insensitively), naming the first line', () => {
    const [a, b, c] = check(['pid', 'trxid', 'userId'], ['101', 'A1', '5123456789'], ['101', 'a1', '5123456780'], ['101', 'A2', '5123456781']);
    expect(a?.ok).toBe(true);
    expect(problemsOf(b as RowVerdict)).toEqual([{ column: 'trxid', reason: expect.stringMatching(/"a1" is already used on line 2/) }]);
    expect(c?.ok).toBe(true);
  });

  it('caps the unit price', () => {
    expect(orderOf(one(['pid', 'userId', 'maxPriceUsd'], ['102', '5123456789', '4.75'])).maxPriceUsd).toBe(4.75);
    expect(orderOf(one(['pid', 'userId', 'max_price_usd'], ['102', '5123456789', '4,80'])).maxPriceUsd).toBe(4.8);
    expect(problemsOf(one(['pid', 'userId', 'Max Price USD'], ['102', '5123456789', '4.50']))).toEqual([
      { column: 'Max Price USD', reason: 'the pack now costs 4.75 USD, above your maximum of 4.5 USD' },
    ]);
    expect(problemsOf(one(['pid', 'userId', 'maxPriceUsd'], ['102', '5123456789', 'cheap']))[0]?.column).toBe('maxPriceUsd');
  });
});

describe('rows with several problems, empty rows, parse errors', () => {
  it('reports every problem, each naming its column', () => {
    const columns = ['pid', 'trxid', 'userId', 'zoneId', 'quantity', 'maxPriceUsd'];
    const [, v] = check(columns, ['301', 'D', '12345678', '1', '', ''], ['301', 'D', '12 34', '1.2E+3', '2', '0.5']);
    const p = problemsOf(v as RowVerdict);
    expect(p.map((x) => x.column)).toEqual(['trxid', 'userId', 'zoneId', 'quantity', 'maxPriceUsd']);
    expect(formatProblems(p)).toMatch(/^trxid: .*; userId: .*; zoneId: .*; quantity: a top-up is bought once per row.*; maxPriceUsd: the pack now costs/);
  });

  it('an all-blank row is invalid "empty row"; a parse error is passed on', () => {
    const v = createRowValidator(mapHeader(['pid', 'userId']), catalog);
    expect(v.validate({ index: 0, line: 2, cells: ['', ' '] })).toEqual({ ok: false, problems: [{ column: 'row', reason: 'empty row (every cell is blank)' }] });
    expect(v.validate({ index: 1, line: 3, cells: [''] }).ok).toBe(false);
    expect(v.validate({ index: 2, line: 4, cells: [], parseError: 'boom' })).toEqual({ ok: false, problems: [{ column: 'row', reason: 'boom' }] });
  });

  it('extra columns are carried through untouched in the raw row, from a real file', async () => {
    const { header, rows } = await readAll(writeTemp('note;pid;userId;Customer Ref\n  spaced  ;101;5123456789;=1+1\n'));
    expect(header.header.columns).toEqual(['note', 'pid', 'userId', 'Customer Ref']);
    expect(rows[0]?.cells).toEqual(['  spaced  ', '101', '5123456789', '=1+1']);
    const v = createRowValidator(header.header, catalog).validate(rows[0]!);
    expect(orderOf(v).request).toEqual({ pid: '101', trxid: '', userId: '5123456789' });
  });
});

describe('the stored body', () => {
  it('has one key order (pid, trxid, userId, zoneId, serverId, region, moreId, quantity) whatever order the line lists its fields in', () => {
    const line = (slug: string, required: string[]) =>
      parseServiceLine({ productName: slug, slug, gameName: slug, status: 'active', required: required.map((field) => ({ field, label: field })) });
    const pack = (id: string, slug: string) =>
      parseProduct({ id, slug, gameName: slug, serviceName: `${slug} pack`, category: 'topup', price: 1, status: 'active' });
    const index = buildCatalogIndex(
      [line('backwards', ['moreId', 'zoneId', 'userId']), line('forwards', ['userId', 'zoneId', 'moreId'])],
      [pack('1', 'backwards'), pack('2', 'forwards')],
    );
    const v = createRowValidator(mapHeader(['moreId', 'pid', 'zoneId', 'trxid', 'userId']), index);
    for (const [i, pid] of ['1', '2'].entries()) {
      const verdict = v.validate({ index: i, line: i + 2, cells: ['m9', pid, '77', `T${i}`, '5123456789'] });
      expect(Object.keys(orderOf(verdict).request)).toEqual(['pid', 'trxid', 'userId', 'zoneId', 'moreId']);
    }
  });

  it('a pack\'s own problems come after the row\'s trxid problem and before its field problems, on every row', () => {
    const index = buildCatalogIndex(
      [parseServiceLine({ productName: 'x', slug: 'shut', gameName: 'Shut', status: 'maintenance', required: [{ field: 'userId', label: 'Player ID' }] })],
      [parseProduct({ id: '9', slug: 'shut', gameName: 'Shut', serviceName: 'Big', category: 'topup', price: 1, status: 'inactive' })],
    );
    const v = createRowValidator(mapHeader(['trxid', 'pid', 'userId']), index);
    for (let i = 0; i < 3; i++) {
      const verdict = v.validate({ index: i, line: i + 2, cells: ['=bad', '9', ''] });
      expect(problemsOf(verdict).map((p) => p.column)).toEqual(['trxid', 'pid', 'pid', 'userId']);
    }
  });
});
