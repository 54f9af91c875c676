import { createWriteStream, readdirSync, readlinkSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { InputFileError } from '../../src/kernel/errors.js';
import { detectDelimiter } from '../../src/intake/formats/csv.js';
import { contentHash, openOrderFile, type RawRow } from '../../src/intake/formats/index.js';
import { readAll, tempDir, writeTemp } from './helpers.js';

const cellsOf = (rows: { cells: string[] }[]) => rows.map((r) => r.cells);

async function refused(content: string | Buffer): Promise<string> {
  const path = writeTemp(content);
  const err = await openOrderFile(path).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(InputFileError);
  return (err as Error).message;
}

describe('openOrderFile: encodings', () => {
  it('reads UTF-8 with a BOM and strips it from the first header cell', async () => {
    const { header, rows } = await readAll(writeTemp('\uFEFFpid,userId\n101,5551234\n'));
    expect(header.bom).toBe(true);
    expect(header.encoding).toBe('utf8');
    expect(header.header.columns).toEqual(['pid', 'userId']);
    expect(header.header.fields.pid).toBe(0);
    expect(cellsOf(rows)).toEqual([['101', '5551234']]);
  });

  it('reads UTF-8 without a BOM, including multi-byte text', async () => {
    const { header, rows } = await readAll(writeTemp('pid,userId,note\n101,5551234,café ☕ 你好\n'));
    expect(header.bom).toBe(false);
    expect(rows[0]?.cells[2]).toBe('café ☕ 你好');
  });

  it('decodes UTF-16 LE with a BOM', async () => {
    const text = '\uFEFFpid\tuserId\r\n101\t5551234\r\n';
    const { header, rows } = await readAll(writeTemp(Buffer.from(text, 'utf16le')));
    expect(header.encoding).toBe('utf16le');
    expect(header.delimiter).toBe('\t');
    expect(cellsOf(rows)).toEqual([['101', '5551234']]);
    expect(rows[0]?.line).toBe(2);
  });

  it('decodes UTF-16 BE with a BOM', async () => {
    const le = Buffer.from('\uFEFFpid,userId\n101,5551234\n', 'utf16le');
    const be = Buffer.from(le).swap16();
    const { header, rows } = await readAll(writeTemp(be));
    expect(header.encoding).toBe('utf16be');
    expect(cellsOf(rows)).toEqual([['101', '5551234']]);
  });

  it('refuses UTF-16 without a BOM (NUL bytes)', async () => {
    const msg = await refused(Buffer.from('pid,userId\n101,555\n', 'utf16le'));
    expect(msg).toMatch(/NUL/);
    expect(msg).toMatch(/CSV UTF-8/);
  });

  it('refuses Latin-1 and names the line', async () => {
    const latin1 = Buffer.concat([Buffer.from('pid,userId,note\n101,555111,ok\n102,555222,'), Buffer.from([0xe9]), Buffer.from('t\xe9\n', 'latin1')]);
    const msg = await refused(latin1);
    expect(msg).toMatch(/line 3 is not valid UTF-8/);
    expect(msg).toMatch(/CSV UTF-8/);
  });

  it('finds an invalid byte far into a large file, with its line', async () => {
    const body = 'pid,userId\n' + '101,5551234\n'.repeat(20_000);
    const msg = await refused(Buffer.concat([Buffer.from(body), Buffer.from([0x31, 0xff, 0x0a])]));
    expect(msg).toMatch(/line 20002 /);
  });

  it('refuses binary noise, NUL bytes, an empty file, a BOM-only file and an xlsx', async () => {
    const noise = Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7919 + 13) % 256));
    expect(await refused(noise)).toMatch(/not a text CSV|not valid UTF-8/);
    expect(await refused(Buffer.from('pid,userId\n101,55\u0000\n'))).toMatch(/line 2 contains NUL/);
    expect(await refused('')).toMatch(/empty/);
    expect(await refused('\uFEFF')).toMatch(/no header/);
    expect(await refused(Buffer.from([0x50, 0x4b, 0x03, 0x04, 1, 2, 3]))).toMatch(/xlsx/);
  });

  it('refuses a first row that is not a header', async () => {
    expect(await refused('12345,67890\n101,555\n')).toMatch(/header with a "pid" column/);
    expect(await refused('\n101,555\n')).toMatch(/header/);
  });
});

describe('openOrderFile: delimiters and line endings', () => {
  it.each([
    [',', 'pid,userId,note\n101,1234567,"a,b"\n'],
    [';', 'pid;userId;note\n101;1234567;"a;b"\n'],
    ['\t', 'pid\tuserId\tnote\n101\t1234567\t"a\tb"\n'],
  ])('detects %j from the header', async (delim, text) => {
    const { header, rows } = await readAll(writeTemp(text));
    expect(header.delimiter).toBe(delim);
    expect(rows[0]?.cells).toEqual(['101', '1234567', `a${delim}b`]);
  });

  it('counts delimiters in the header outside quotes only', () => {
    expect(detectDelimiter('"a;b;c;d",x,y\n1;2;3').delimiter).toBe(',');
    expect(detectDelimiter('pid;userId;"note, with, commas"\n').delimiter).toBe(';');
  });

  it("honours Excel's sep= line", async () => {
    const { header, rows } = await readAll(writeTemp('sep=;\r\npid;userId\r\n101;1234567\r\n'));
    expect(header.delimiter).toBe(';');
    expect(header.header.columns).toEqual(['pid', 'userId']);
    expect(rows[0]).toMatchObject({ line: 3, cells: ['101', '1234567'] });
  });

  it.each([
    ['LF', '\n'],
    ['CRLF', '\r\n'],
    ['CR', '\r'],
  ])('reads %s line endings with correct line numbers, also with a quoted multi-line cell', async (_name, eol) => {
    const text = ['pid,userId,note', '101,1111111,plain', `102,2222222,"two${eol}lines"`, '103,3333333,after', ''].join(eol);
    const { rows } = await readAll(writeTemp(text));
    expect(rows.map((r) => [r.index, r.line])).toEqual([
      [0, 2],
      [1, 3],
      [2, 5],
    ]);
    expect(rows[1]?.cells[2]).toBe(`two${eol}lines`);
    expect(rows.every((r) => r.parseError === undefined)).toBe(true);
  });

  it('reads mixed line endings in one file', async () => {
    const { rows } = await readAll(writeTemp('pid,userId\n101,1\r\n102,2\r103,3'));
    expect(rows.map((r) => [r.line, r.cells[0]])).toEqual([
      [2, '101'],
      [3, '102'],
      [4, '103'],
    ]);
  });

  it('breaks lines at a lone CR or a CRLF found far past the first chunks (the whole file decides the delimiters)', async () => {
    const lf = '101,1\n'.repeat(60_000); // 360 kB: past the 256 kB head as well
    for (const ending of ['\r', '\r\n']) {
      const { rows } = await readAll(writeTemp(`pid,userId\n${lf}102,2${ending}103,3\n`));
      expect(rows).toHaveLength(60_002);
      expect(rows.slice(-2).map((r) => [r.line, r.cells])).toEqual([
        [60_002, ['102', '2']],
        [60_003, ['103', '3']],
      ]);
    }
  });

  it('keeps quoted delimiters, doubled quotes and stray quotes in unquoted fields', async () => {
    const { rows } = await readAll(writeTemp('pid,userId,note\n101,1234567,"say ""hi"", then go"\n102,7654321,Ann "AJ" Lee\n'));
    expect(rows[0]?.cells[2]).toBe('say "hi", then go');
    expect(rows[1]?.cells[2]).toBe('Ann "AJ" Lee');
  });
});

describe('openOrderFile: bad records', () => {
  it('marks ragged rows with their line numbers, counting a multi-line cell above them', async () => {
    const text = 'pid,userId,note\n101,1111111,"multi\nline\ncell"\n102,2222222\n103,3333333,x,EXTRA\n104,4444444,y,,\n105,5555555,z\n';
    const { rows } = await readAll(writeTemp(text));
    expect(rows.map((r) => ({ line: r.line, err: r.parseError !== undefined }))).toEqual([
      { line: 2, err: false },
      { line: 5, err: true },
      { line: 6, err: true },
      { line: 7, err: false }, // trailing empty cells do not shift the columns
      { line: 8, err: false },
    ]);
    expect(rows[1]?.parseError).toMatch(/2 cells but the header has 3 columns/);
    expect(rows[1]?.cells).toEqual(['102', '2222222']);
  });

  it('lets rows stop short of blank header cells at the end (Excel trailing ;;)', async () => {
    const { rows } = await readAll(writeTemp('pid;userId;;\n101;1111111\n102\n'));
    expect(rows.map((r) => r.parseError)).toEqual([undefined, 'row has 1 cells but the header has 4 columns']);
  });

  it('turns an unclosed quote into one invalid row at the line where it opens', async () => {
    const { rows } = await readAll(writeTemp('pid,userId\n101,1111111\n102,"2222222\n103,3333333\n104,4444444\n'));
    expect(rows).toHaveLength(2);
    expect(rows[1]).toMatchObject({ index: 1, line: 3, cells: [] });
    expect(rows[1]?.parseError).toMatch(/never closed/);
  });

  it('refuses a header that cannot be read', async () => {
    expect(await refused('pid,"userId\n101,1\n')).toMatch(/header row \(line 1\) cannot be read/);
  });

  it('passes blank lines through as rows of empty cells (validation calls them empty rows)', async () => {
    const { rows } = await readAll(writeTemp('pid,userId\n101,1\n\n,\n102,2\n'));
    expect(rows.map((r) => [r.line, r.cells, r.parseError])).toEqual([
      [2, ['101', '1'], undefined],
      [3, [''], undefined],
      [4, ['', ''], undefined],
      [5, ['102', '2'], undefined],
    ]);
  });
});

describe('openOrderFile: headers', () => {
  it('accepts a header-only file as zero rows', async () => {
    expect((await readAll(writeTemp('pid,userId\n'))).rows).toEqual([]);
    expect((await readAll(writeTemp('pid,userId'))).rows).toEqual([]);
  });

  it('refuses duplicate columns after alias mapping, naming them', async () => {
    expect(await refused('pid,userId,user_id\n101,1,2\n')).toMatch(/"userId" and "user_id"/);
    expect(await refused('pid,trxid,idTrx\n101,1,2\n')).toMatch(/"trxid" and "idTrx"/);
  });

  it('survives a 3 MB cell and 10,000 columns', async () => {
    const big = 'x'.repeat(3 * 1024 * 1024);
    const { rows } = await readAll(writeTemp(`pid,userId,note\n101,1234567,"${big}"\n102,7654321,small\n`));
    expect(rows[0]?.cells[2]).toHaveLength(big.length);
    expect(rows[1]?.line).toBe(3);

    const names = Array.from({ length: 10_000 }, (_, i) => `c${i}`);
    names[0] = 'pid';
    const wide = await readAll(writeTemp(`${names.join(',')}\n${names.map((_, i) => i).join(',')}\n`));
    expect(wide.header.header.columns).toHaveLength(10_000);
    expect(wide.rows[0]?.cells).toHaveLength(10_000);
  });

  it('streams 100,000 rows', async () => {
    const path = join(tempDir(), 'big.csv');
    const out = createWriteStream(path);
    out.write('pid,userId,trxid\n');
    for (let i = 0; i < 100_000; i++) {
      if (!out.write(`101,${5_000_000 + i},t${i}\n`)) await once(out, 'drain');
    }
    out.end();
    await once(out, 'finish');
    const { batches } = await openOrderFile(path);
    let count = 0;
    let last = 0;
    for await (const run of batches) {
      count += run.length;
      last = run.at(-1)?.line ?? last;
    }
    expect(count).toBe(100_000);
    expect(last).toBe(100_001);
  });
});

describe('openOrderFile: runs of rows', () => {
  it('hands out rows in runs across many chunks, with indices and lines in order', async () => {
    // Multi-line cells, ragged rows and blank lines scattered over ~30 chunks, then an unclosed quote at the end.
    let text = 'pid,userId,note\n';
    let line = 2;
    const expected: { line: number; bad: boolean }[] = [];
    for (let i = 0; i < 40_000; i++) {
      if (i % 97 === 0) {
        text += `101,${1_000_000 + i},"two\nmore\r\nlines"\n`;
        expected.push({ line, bad: false });
        line += 3;
      } else if (i % 89 === 0) {
        text += `102,${1_000_000 + i}\n`;
        expected.push({ line: line++, bad: true });
      } else if (i % 101 === 0) {
        text += '\n';
        expected.push({ line: line++, bad: false });
      } else {
        text += `103,${1_000_000 + i},n${i}\n`;
        expected.push({ line: line++, bad: false });
      }
    }
    text += '104,"never closed\n105,1,x\n';
    expected.push({ line, bad: true });
    const path = writeTemp(text);

    const file = await openOrderFile(path);
    const runs: RawRow[][] = [];
    for await (const run of file.batches) runs.push(run);
    expect(runs.length).toBeGreaterThan(10);
    const flat = runs.flat();
    expect(flat.map((r) => r.index)).toEqual(expected.map((_, i) => i));
    expect(flat.map((r) => ({ line: r.line, bad: r.parseError !== undefined }))).toEqual(expected);
    expect(flat.at(-1)?.parseError).toMatch(/never closed/);
  });
});

describe('openOrderFile: close', () => {
  const fdsOn = (path: string): number =>
    readdirSync('/proc/self/fd').filter((fd) => {
      try {
        return readlinkSync(`/proc/self/fd/${fd}`) === path;
      } catch {
        return false; // closed meanwhile
      }
    }).length;

  it.runIf(process.platform === 'linux')('releases the file when the caller gives up before reading the rows (e.g. the catalog is unreachable)', async () => {
    const path = writeTemp(`pid,userId\n${'101,5123456789\n'.repeat(50_000)}`);
    const file = await openOrderFile(path);
    expect(fdsOn(path)).toBe(1);
    file.close();
    await new Promise((r) => setTimeout(r, 50));
    expect(fdsOn(path)).toBe(0);
  });
});

describe('contentHash', () => {
  it('is the sha256 of the bytes', async () => {
    const path = join(tempDir(), 'h.csv');
    writeFileSync(path, 'pid\n101\n');
    expect(await contentHash(path)).toBe(createHash('sha256').update('pid\n101\n').digest('hex'));
  });
});
