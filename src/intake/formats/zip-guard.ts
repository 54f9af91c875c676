/**
 * An .xlsx is a ZIP archive, and exceljs inflates whatever the archive holds without a limit.
 * This checks the archive before exceljs touches it, so a damaged, encrypted or booby-trapped
 * workbook is refused with what to do, and a few kilobytes can never become gigabytes:
 *
 *  1. Not a ZIP at all: an OLE compound file is either a password-protected workbook (Office
 *     encrypts OOXML into one) or an old .xls with a new name; anything else is not a workbook.
 *  2. The central directory (end of the file) is read BEFORE anything is inflated: entry count,
 *     declared sizes against the limits, no ZIP64, no encrypted entries, only stored/deflate.
 *  3. Declared sizes are claims, so the entries are then inflated here the way exceljs's
 *     unzipper will walk them (local headers in order from the start of the file), counting
 *     bytes and stopping as soon as they pass what the directory declared: what exceljs inflates
 *     afterwards is exactly what was counted. (Deflate packs at most ~1000:1, so inflating up to
 *     the limit costs well under a second; a bomb of a few KB is refused by step 2 alone.)
 *  4. While the sheets inflate, number cells whose stored text is not plain digits (`1.23457E+11`,
 *     `123456.0`) are noted: exceljs hands over only the parsed number, and such a cell in an id
 *     column is refused even when the number it parses to is whole.
 */
import { createReadStream } from 'node:fs';
import { posix } from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { open, type FileHandle } from 'node:fs/promises';
import { PassThrough } from 'node:stream';
import { createInflateRaw } from 'node:zlib';
import { InputFileError } from '../../kernel/errors.js';

/** The largest workbook file read. A 100,000-row order sheet is a few MB. */
export const MAX_XLSX_BYTES = 64 * 1024 * 1024;
/** The most all entries together may inflate to (the sheet XML of 250,000 rows fits many times). */
export const MAX_XLSX_UNCOMPRESSED_BYTES = 512 * 1024 * 1024;
/** A workbook has a few dozen parts; thousands means something else. */
export const MAX_XLSX_ENTRIES = 10_000;

const LOCAL = 0x04034b50;
const CENTRAL = 0x02014b50;
const END = 0x06054b50;
const DESCRIPTOR = Buffer.from([0x50, 0x4b, 0x07, 0x08]);
const CFB = Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]);

const RESAVE = 'open it in Excel (or LibreOffice), save it again as .xlsx, and drop the new file in; or save it as "CSV UTF-8"';

function fail(why: string): never {
  throw new InputFileError(why);
}

function damaged(detail: string): never {
  return fail(`the workbook cannot be read: it is damaged or not a real .xlsx file (${detail}); ${RESAVE}`);
}

function bomb(limit: number): never {
  return fail(
    `the workbook would unpack to more than ${Math.round(limit / 1024 / 1024)} MB, far more than any order sheet; ` +
      'it was not unpacked (a file built to exhaust memory looks like this). If it is a genuine order file, save the order sheet alone as .xlsx or "CSV UTF-8", or split it',
  );
}

function lying(): never {
  return fail(
    'the workbook unpacks to more than its own ZIP directory declares, so it was not read (damaged, or built to exhaust memory); ' + RESAVE,
  );
}

export interface ZipLimits {
  bytes: number;
  uncompressed: number;
}

const LIMITS: ZipLimits = { bytes: MAX_XLSX_BYTES, uncompressed: MAX_XLSX_UNCOMPRESSED_BYTES };

/** A sheet as the workbook lists it, with the part that holds its cells. */
export interface SheetFact {
  name: string;
  /** `visible` when the workbook says nothing. */
  state: string;
  /** `xl/worksheets/sheet2.xml`; undefined when its relationship is missing. */
  part: string | undefined;
}

/** What the guard learned on the way. */
export interface WorkbookFacts {
  /** Sheet part → references of number cells not stored as plain digits. */
  writtenNumbers: Map<string, Set<string>>;
  /**
   * The sheets in tab order, read here from xl/workbook.xml and its relationships rather than
   * from exceljs: its streaming reader names a sheet only when xl/workbook.xml came before that
   * sheet in the archive, and some writers put it after. Empty when the workbook has no list.
   */
  sheets: SheetFact[];
}

/** Throws InputFileError unless the file is a ZIP whose entries exceljs may inflate safely. */
export async function guardWorkbookZip(path: string, limits: ZipLimits = LIMITS): Promise<WorkbookFacts> {
  const fh = await open(path, 'r');
  try {
    const { size } = await fh.stat();
    if (size > limits.bytes) {
      fail(`the workbook is ${(size / 1024 / 1024).toFixed(1)} MB, more than the ${Math.round(limits.bytes / 1024 / 1024)} MB topup reads; split the orders into smaller files`);
    }
    const head = await readAt(fh, 0, 8);
    if (head.equals(CFB)) await refuseCompoundFile(path);
    if (head.length < 4 || head.readUInt32LE(0) !== LOCAL) {
      fail('this file has an .xlsx name but is not an Excel workbook (an .xlsx is a ZIP archive, and this is not one). If it is CSV text, name it .csv; otherwise ' + RESAVE);
    }
    const declared = await readCentralDirectory(fh, size, limits);
    return await inflateLikeUnzipper(fh, path, declared);
  } finally {
    await fh.close();
  }
}

async function readAt(fh: FileHandle, position: number, length: number): Promise<Buffer> {
  const buf = Buffer.alloc(length);
  const { bytesRead } = await fh.read(buf, 0, length, position);
  return buf.subarray(0, bytesRead);
}

/** Office writes an encrypted workbook as a compound file with an "EncryptedPackage" stream. */
async function refuseCompoundFile(path: string): Promise<never> {
  const marker = Buffer.from('EncryptedPackage', 'utf16le');
  let tail = Buffer.alloc(0);
  for await (const chunk of createReadStream(path)) {
    const buf = Buffer.concat([tail, chunk as Buffer]);
    if (buf.includes(marker)) {
      return fail(
        'the workbook is protected with a password (encrypted), so it cannot be read; open it in Excel, remove the password ' +
          '(File > Info > Protect Workbook > Encrypt with Password, clear the password), save it, and drop it in again',
      );
    }
    tail = buf.subarray(Math.max(0, buf.length - marker.length));
  }
  return fail('this is an old Excel 97–2003 workbook (.xls) with an .xlsx name; topup does not read that format; ' + RESAVE);
}

interface Directory {
  centralStart: number;
  /** What all entries together declare they inflate to. */
  declared: number;
}

/** Reads the end record and every central entry: counts and declared sizes, nothing inflated. */
async function readCentralDirectory(fh: FileHandle, size: number, limits: ZipLimits): Promise<Directory> {
  const tailLength = Math.min(size, 22 + 0xffff);
  const tail = await readAt(fh, size - tailLength, tailLength);
  let end = -1;
  for (let i = tail.length - 22; i >= 0; i--) {
    if (tail.readUInt32LE(i) === END) {
      end = i;
      break;
    }
  }
  if (end < 0) damaged('no end of the ZIP directory; the file may be cut short');
  const entries = tail.readUInt16LE(end + 10);
  const cdSize = tail.readUInt32LE(end + 12);
  const cdStart = tail.readUInt32LE(end + 16);
  if (entries === 0xffff || cdSize === 0xffffffff || cdStart === 0xffffffff) {
    fail(`the workbook uses ZIP64, which only files far larger than an order sheet need; ${RESAVE}`);
  }
  if (entries > MAX_XLSX_ENTRIES) fail(`the workbook holds ${entries} parts, far more than an order sheet; ${RESAVE}`);
  if (cdStart + cdSize > size - tailLength + end) damaged('the ZIP directory points outside the file');
  const cd = await readAt(fh, cdStart, cdSize);
  let total = 0;
  let at = 0;
  for (let n = 0; n < entries; n++) {
    if (at + 46 > cd.length || cd.readUInt32LE(at) !== CENTRAL) damaged('a ZIP directory entry is broken');
    const flags = cd.readUInt16LE(at + 8);
    const method = cd.readUInt16LE(at + 10);
    const uncompressed = cd.readUInt32LE(at + 24);
    if (flags & 0x1) fail('the workbook\'s parts are encrypted, so it cannot be read; remove the password in Excel, save it, and drop it in again');
    if (method !== 0 && method !== 8) damaged(`a part is compressed with method ${method}, which .xlsx files do not use`);
    if (uncompressed === 0xffffffff) fail(`the workbook uses ZIP64, which only files far larger than an order sheet need; ${RESAVE}`);
    total += uncompressed;
    if (total > limits.uncompressed) bomb(limits.uncompressed);
    at += 46 + cd.readUInt16LE(at + 28) + cd.readUInt16LE(at + 30) + cd.readUInt16LE(at + 32);
  }
  return { centralStart: cdStart, declared: total };
}

/**
 * Walks the local entries from the start of the file as unzipper's streaming parser does (a
 * size from the local header, or the data up to the next data-descriptor signature) and inflates
 * each one, counting; stops at the central directory.
 */
async function inflateLikeUnzipper(fh: FileHandle, path: string, dir: Directory): Promise<WorkbookFacts> {
  const centralStart = dir.centralStart;
  const writtenNumbers = new Map<string, Set<string>>();
  const lists = new Map<string, PartText>();
  let offset = 0;
  let budget = dir.declared;
  for (let n = 0; ; n++) {
    if (n > MAX_XLSX_ENTRIES) fail(`the workbook holds too many parts; ${RESAVE}`);
    const sigBuf = await readAt(fh, offset, 4);
    if (sigBuf.length < 4) damaged('the file ends inside the ZIP entries');
    const sig = sigBuf.readUInt32LE(0);
    if (sig === CENTRAL || sig === END) break;
    if (sig !== LOCAL) damaged(`unexpected bytes at offset ${offset}`);
    const h = await readAt(fh, offset, 30);
    if (h.length < 30) damaged('a ZIP entry header is cut short');
    const flags = h.readUInt16LE(6);
    const method = h.readUInt16LE(8);
    const compressed = h.readUInt32LE(18);
    if (flags & 0x1) fail('the workbook\'s parts are encrypted, so it cannot be read; remove the password in Excel, save it, and drop it in again');
    if (method !== 0 && method !== 8) damaged(`a part is compressed with method ${method}, which .xlsx files do not use`);
    if (compressed === 0xffffffff) fail(`the workbook uses ZIP64, which only files far larger than an order sheet need; ${RESAVE}`);
    const name = (await readAt(fh, offset + 30, h.readUInt16LE(26))).toString('utf8');
    const start = offset + 30 + h.readUInt16LE(26) + h.readUInt16LE(28);
    let end: number;
    if (!(flags & 0x8) || compressed > 0) {
      end = start + compressed;
      offset = end;
    } else {
      end = await findDescriptor(fh, start, centralStart);
      offset = end + 16;
    }
    if (end > centralStart) damaged('a ZIP entry runs into the directory');
    const scan = SHEET_PART.test(name) ? new NumberScan() : LIST_PARTS.has(name) ? new PartText() : undefined;
    budget -= await inflatedSize(path, start, end, budget, method === 8, scan);
    if (budget < 0) lying();
    if (scan instanceof NumberScan && scan.refs.size > 0) writtenNumbers.set(name, scan.refs);
    if (scan instanceof PartText) lists.set(name, scan);
  }
  return { writtenNumbers, sheets: sheetList(lists.get(WORKBOOK)?.text(), lists.get(WORKBOOK_RELS)?.text()) };
}

const WORKBOOK = 'xl/workbook.xml';
const WORKBOOK_RELS = 'xl/_rels/workbook.xml.rels';
const LIST_PARTS = new Set([WORKBOOK, WORKBOOK_RELS]);
/** The sheet list and its relationships are a few KB; a larger part is not kept (no list). */
const MAX_LIST_PART = 4 * 1024 * 1024;

/** The text of a small part, kept while the guard inflates it anyway. */
class PartText {
  readonly #chunks: Buffer[] = [];
  #size = 0;
  feed(chunk: Buffer): void {
    this.#size += chunk.length;
    if (this.#size <= MAX_LIST_PART) this.#chunks.push(chunk);
  }
  text(): string | undefined {
    return this.#size <= MAX_LIST_PART ? Buffer.concat(this.#chunks).toString('utf8') : undefined;
  }
}

const ENTITY: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };
function unescapeXml(v: string): string {
  return v.replace(/&(#x[0-9a-fA-F]+|#\d+|amp|lt|gt|quot|apos);/g, (_, e: string) =>
    e.startsWith('#x') ? String.fromCodePoint(parseInt(e.slice(2), 16)) : e.startsWith('#') ? String.fromCodePoint(Number(e.slice(1))) : ENTITY[e]!,
  );
}

/** An element's attributes by local name (`r:id` → `id`; namespace prefixes vary by writer). */
function attributes(tag: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of tag.matchAll(/([\w.-]+:)?([\w.-]+)\s*=\s*(?:"([^"]*)"|'([^']*)')/g)) {
    const local = m[2]!;
    const value = unescapeXml(m[3] ?? m[4] ?? '');
    // `r:id` is the relationship; a plain `id` (none in the schema) never overrides it.
    if (!out.has(local) || m[1] !== undefined) out.set(local, value);
  }
  return out;
}

/**
 * The sheets of xl/workbook.xml in tab order, each with its part from the relationships: a Target
 * is resolved as OPC says (absolute from the package root, else relative to xl/), so openpyxl's
 * `/xl/worksheets/sheet1.xml` and Excel's `worksheets/sheet1.xml` name the same part.
 */
export function sheetList(workbook: string | undefined, rels: string | undefined): SheetFact[] {
  if (workbook === undefined) return [];
  const targets = new Map<string, string>();
  for (const m of (rels ?? '').matchAll(/<(?:[\w.-]+:)?Relationship\b([^>]*?)\/?>/g)) {
    const a = attributes(m[1]!);
    const id = a.get('Id');
    const target = a.get('Target');
    if (id !== undefined && target !== undefined && a.get('TargetMode') !== 'External') targets.set(id, partOf(target));
  }
  const sheets: SheetFact[] = [];
  for (const m of workbook.matchAll(/<(?:[\w.-]+:)?sheet\b([^>]*?)\/?>/g)) {
    const a = attributes(m[1]!);
    const name = a.get('name');
    if (name === undefined) continue;
    const rId = a.get('id');
    sheets.push({ name, state: a.get('state') ?? 'visible', part: rId === undefined ? undefined : targets.get(rId) });
  }
  return sheets;
}

/** A relationship Target of xl/workbook.xml as a part name: `/xl/a.xml`, `a.xml`, `./a.xml` → `xl/a.xml`. */
export function partOf(target: string): string {
  const full = posix.normalize(target.startsWith('/') ? target.slice(1) : posix.join('xl', target));
  return full.replace(/^\.\//, '');
}

const SHEET_PART = /^xl\/worksheets\/[^/]+\.xml$/;
const CELL = /<c\b([^>]*?)(?:\/>|>([\s\S]*?)<\/c>)/g;

/** Finds number cells (no type, or `t="n"`, no formula) whose `<v>` text is not plain digits. */
class NumberScan {
  readonly refs = new Set<string>();
  readonly #decoder = new StringDecoder('utf8');
  #carry = '';

  feed(chunk: Buffer): void {
    const text = this.#carry + this.#decoder.write(chunk);
    const cut = text.lastIndexOf('</c>');
    const upto = cut < 0 ? 0 : cut + 4;
    CELL.lastIndex = 0;
    for (let m = CELL.exec(text); m !== null && m.index < upto; m = CELL.exec(text)) {
      const inner = m[2];
      if (inner === undefined || inner.includes('<f')) continue;
      const type = /\bt="([^"]*)"/.exec(m[1] as string)?.[1];
      if (type !== undefined && type !== 'n') continue;
      const v = /<v>([^<]*)<\/v>/.exec(inner)?.[1];
      const ref = /\br="([A-Za-z]+\d+)"/.exec(m[1] as string)?.[1];
      if (v !== undefined && ref !== undefined && !/^\s*-?\d+\s*$/.test(v)) this.refs.add(ref.toUpperCase());
    }
    // An unfinished cell waits for the next chunk; a run without any cell end is not kept forever.
    this.#carry = text.slice(upto).slice(-1024 * 1024);
  }
}

async function findDescriptor(fh: FileHandle, from: number, limit: number): Promise<number> {
  const step = 1024 * 1024;
  for (let pos = from; pos < limit; pos += step - 3) {
    const buf = await readAt(fh, pos, Math.min(step, limit - pos + 3));
    const i = buf.indexOf(DESCRIPTOR);
    if (i >= 0) return pos + i;
    if (buf.length < step) break;
  }
  return damaged('a ZIP entry has no end marker');
}

/** Bytes the range inflates to (stored: its length); stops (returning more than `budget`) once past it. */
function inflatedSize(path: string, start: number, end: number, budget: number, deflated: boolean, scan?: { feed(chunk: Buffer): void }): Promise<number> {
  if (end <= start) return Promise.resolve(0);
  if (!deflated && !scan) return Promise.resolve(end - start);
  return new Promise((resolve, reject) => {
    const input = createReadStream(path, { start, end: end - 1 });
    const inflate = deflated ? createInflateRaw() : new PassThrough();
    let count = 0;
    let done = false;
    const finish = (err: Error | null, n: number): void => {
      if (done) return;
      done = true;
      input.destroy();
      inflate.destroy();
      if (err) reject(new InputFileError(`the workbook cannot be read: a part of it is damaged (${err.message}); ${RESAVE}`, { cause: err }));
      else resolve(n);
    };
    inflate.on('data', (chunk: Buffer) => {
      count += chunk.length;
      if (count > budget) finish(null, count);
      else scan?.feed(chunk);
    });
    inflate.on('end', () => finish(null, count));
    inflate.on('error', (err) => finish(err, count));
    input.on('error', (err) => finish(err, count));
    input.pipe(inflate);
  });
}
