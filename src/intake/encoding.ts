/**
 * Is this file text we can read, and in which encoding?
 *
 * Choices:
 *  - UTF-8 with or without BOM is the format. UTF-16 LE/BE *with* a BOM (Excel's "Unicode
 *    Text") is decoded too; without a BOM it cannot be told from binary, so it is refused.
 *  - Bytes that are not UTF-8 (Latin-1 / Windows-1252 exports) are refused with the line, never
 *    guessed at: a wrong guess would change player ids.
 *  - The whole file is checked before any row is handed out, so a bad byte on line 90,000
 *    refuses the file instead of storing 89,999 rows first. The check streams; memory stays flat.
 */
import { createReadStream } from 'node:fs';
import { isUtf8 } from 'node:buffer';
import { Transform } from 'node:stream';
import { InputFileError } from '../kernel/errors.js';
import { LineBreaks } from './line-breaks.js';

export type TextEncoding = 'utf8' | 'utf16le' | 'utf16be';

export interface Sniffed {
  encoding: TextEncoding;
  bom: boolean;
  /** Bytes of BOM to skip. */
  bomLength: number;
}

const SAVE_AS = 'save it from your spreadsheet as "CSV UTF-8 (comma delimited)" and drop it in again';

/** Decides the encoding from the first bytes of the file; refuses what is plainly not a CSV. */
export function sniffEncoding(head: Buffer): Sniffed {
  if (head.length === 0) throw new InputFileError('the file is empty; expected a header row and order rows');
  if (head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf) return { encoding: 'utf8', bom: true, bomLength: 3 };
  if (head[0] === 0xff && head[1] === 0xfe) return { encoding: 'utf16le', bom: true, bomLength: 2 };
  if (head[0] === 0xfe && head[1] === 0xff) return { encoding: 'utf16be', bom: true, bomLength: 2 };
  if (head.subarray(0, 4).equals(Buffer.from([0x50, 0x4b, 0x03, 0x04]))) {
    throw new InputFileError(
      'this is an Excel workbook (.xlsx) or a ZIP archive with a CSV name; if it is a workbook, rename it to end in .xlsx and drop it in again (topup reads .xlsx), or save it from your spreadsheet as "CSV UTF-8 (comma delimited)"',
    );
  }
  if (head.subarray(0, 4).equals(Buffer.from([0xd0, 0xcf, 0x11, 0xe0]))) {
    throw new InputFileError('this is an old Excel workbook (.xls) with a CSV name; open it in Excel and save it as .xlsx or as "CSV UTF-8 (comma delimited)", then drop that file in');
  }
  return { encoding: 'utf8', bom: false, bomLength: 0 };
}

/** What the whole-file check learned on the way, for the parser. */
export interface TextFacts {
  /** A carriage return occurs somewhere (CRLF or lone CR line breaks, inside cells or not). */
  hasCarriageReturn: boolean;
}

/** Reads the whole file once and throws InputFileError naming the first line that is not text. */
export async function checkEncoding(path: string, sniffed: Sniffed): Promise<TextFacts> {
  const stream = createReadStream(path, { start: sniffed.bomLength });
  if (sniffed.encoding === 'utf8') return checkUtf8(stream, path, sniffed.bomLength);
  return checkUtf16(stream, sniffed.encoding);
}

/**
 * The good path only asks the native UTF-8 check and indexOf(0) of each chunk; line numbers are
 * worked out only when a bad byte is found, by reading the file again up to it (the rare path).
 */
async function checkUtf8(stream: AsyncIterable<Buffer>, path: string, start: number): Promise<TextFacts> {
  let offset = start;
  let carry: Buffer = Buffer.alloc(0);
  let hasCarriageReturn = false;
  const check = async (buf: Buffer): Promise<void> => {
    if (!hasCarriageReturn) hasCarriageReturn = buf.indexOf(0x0d) >= 0;
    const nul = buf.indexOf(0);
    const bad = nul >= 0 ? nul : isUtf8(buf) ? -1 : firstBadSegment(buf);
    if (bad < 0) {
      offset += buf.length;
      return;
    }
    const line = await lineOfOffset(path, start, offset + bad);
    if (nul >= 0) {
      throw new InputFileError(
        `this is not a text CSV file: line ${line} contains NUL bytes (a binary file, or UTF-16 text without a byte-order mark); ${SAVE_AS}`,
      );
    }
    throw new InputFileError(
      `line ${line} is not valid UTF-8 text (probably saved as Latin-1/ANSI, or not a CSV file at all); ${SAVE_AS}`,
    );
  };
  for await (const chunk of stream) {
    const buf: Buffer = carry.length > 0 ? Buffer.concat([carry, chunk]) : chunk;
    const cut = lastCharBoundary(buf);
    await check(buf.subarray(0, cut));
    carry = Buffer.from(buf.subarray(cut));
  }
  if (carry.length > 0) await check(carry);
  return { hasCarriageReturn };
}

async function lineOfOffset(path: string, start: number, offset: number): Promise<number> {
  const lines = new LineBreaks();
  if (offset > start) for await (const chunk of createReadStream(path, { start, end: offset - 1 })) lines.observe(chunk as Buffer);
  return lines.lineAt(offset - start);
}

/** Start of the first line segment (split at CR/LF, which never occur inside a UTF-8 sequence) that is not UTF-8. */
function firstBadSegment(buf: Buffer): number {
  let start = 0;
  for (let i = 0; i <= buf.length; i++) {
    if (i === buf.length || buf[i] === 0x0a || buf[i] === 0x0d) {
      if (!isUtf8(buf.subarray(start, i))) return start;
      start = i + 1;
    }
  }
  return 0;
}

/** Length of the prefix of `buf` that ends on a whole character (a multi-byte one may be split by the chunking). */
function lastCharBoundary(buf: Buffer): number {
  let i = buf.length - 1;
  while (i >= 0 && buf.length - i < 4 && ((buf[i] as number) & 0xc0) === 0x80) i--;
  if (i < 0) return buf.length;
  const lead = buf[i] as number;
  const need = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
  return i + need > buf.length ? i : buf.length;
}

async function checkUtf16(stream: AsyncIterable<Buffer>, encoding: 'utf16le' | 'utf16be'): Promise<TextFacts> {
  const decoder = new TextDecoder(encoding === 'utf16le' ? 'utf-16le' : 'utf-16be', { fatal: true, ignoreBOM: true });
  let line = 1;
  let hasCarriageReturn = false;
  try {
    for await (const chunk of stream) {
      const text = decoder.decode(chunk, { stream: true });
      if (!hasCarriageReturn) hasCarriageReturn = text.includes('\r');
      const nul = text.indexOf('\u0000');
      if (nul >= 0) line += countBreaks(text.slice(0, nul));
      if (nul >= 0) throw new InputFileError(`this is not a text CSV file: line ${line} contains NUL characters; ${SAVE_AS}`);
      line += countBreaks(text);
    }
    decoder.decode();
    return { hasCarriageReturn };
  } catch (err) {
    if (err instanceof InputFileError) throw err;
    throw new InputFileError(`line ${line} is not valid ${encoding === 'utf16le' ? 'UTF-16 LE' : 'UTF-16 BE'} text; ${SAVE_AS}`, {
      cause: err,
    });
  }
}

/** Approximate for a CRLF split across chunks; only used to name a line in an error message. */
function countBreaks(text: string): number {
  return text.match(/\r\n|\r|\n/g)?.length ?? 0;
}

/** Turns the file's bytes into UTF-8 bytes without BOM, the single form the CSV parser sees. */
export function toUtf8(sniffed: Sniffed): Transform {
  const decoder =
    sniffed.encoding === 'utf8'
      ? undefined
      : new TextDecoder(sniffed.encoding === 'utf16le' ? 'utf-16le' : 'utf-16be', { ignoreBOM: true });
  let skip = sniffed.bomLength;
  return new Transform({
    transform(chunk: Buffer, _enc, done) {
      let bytes = chunk;
      if (skip > 0) {
        const n = Math.min(skip, bytes.length);
        bytes = bytes.subarray(n);
        skip -= n;
      }
      const out = decoder ? Buffer.from(decoder.decode(bytes, { stream: true }), 'utf8') : bytes;
      if (out.length > 0) this.push(out);
      done();
    },
    flush(done) {
      const rest = decoder ? Buffer.from(decoder.decode(), 'utf8') : Buffer.alloc(0);
      if (rest.length > 0) this.push(rest);
      done();
    },
  });
}
