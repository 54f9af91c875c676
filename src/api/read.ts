/**
 * Reading single values the way real deployments of the API send them. The spec promises
 * types ("price": number, "refunded": boolean, "codes": array of strings); real suppliers send
 * numeric strings, `null` for absent, "true"/1, status words in any case, codes in several shapes.
 * Every reader returns `undefined` for absent (missing, null, or a blank string) and never throws:
 * whether an absent value matters is the caller's decision.
 *
 * These are the only functions that look at raw answer values; nothing past src/api sees one.
 */

export type OrderStatus = 'processing' | 'completed' | 'cancelled';

/** `null`, `undefined` and blank strings are all "absent". */
export function absent(v: unknown): boolean {
  return v === undefined || v === null || (typeof v === 'string' && v.trim() === '');
}

/**
 * A number: a finite JSON number, or a string holding one ("12.50", " 3 ", "-1"). A decimal comma
 * ("4,55") is read only in the one form that cannot be a thousands separator (1–2 digits after
 * it); "1,234" could be either, so it is unreadable rather than guessed. Thousands separators
 * are read only where a decimal point follows them ("1,234.56", PHP's number_format): that form
 * cannot mean anything else.
 */
export function readNumber(v: unknown): number | undefined {
  if (typeof v === 'number') return Number.isFinite(v) ? v : undefined;
  if (typeof v !== 'string') return undefined;
  const s = v.trim().replace(/^\$/, '');
  if (/^[+-]?\d+(\.\d+)?$/.test(s) || /^[+-]?\.\d+$/.test(s)) return Number(s);
  if (/^[+-]?\d+,\d{1,2}$/.test(s)) return Number(s.replace(',', '.'));
  if (/^[+-]?\d{1,3}(,\d{3})+\.\d+$/.test(s)) return Number(s.replaceAll(',', ''));
  return undefined;
}

/** A whole number (counts, quantities): like readNumber, but only integers. */
export function readInteger(v: unknown): number | undefined {
  const n = readNumber(v);
  return n !== undefined && Number.isSafeInteger(n) ? n : undefined;
}

const TRUE_WORDS = new Set(['true', '1', 'yes', 'y']);
const FALSE_WORDS = new Set(['false', '0', 'no', 'n']);

/** true/false, "true"/"false" in any case, 1/0, "1"/"0", "yes"/"no". */
export function readBoolean(v: unknown): boolean | undefined {
  if (typeof v === 'boolean') return v;
  if (typeof v === 'number') return v === 1 ? true : v === 0 ? false : undefined;
  if (typeof v !== 'string') return undefined;
  const s = v.trim().toLowerCase();
  return TRUE_WORDS.has(s) ? true : FALSE_WORDS.has(s) ? false : undefined;
}

/**
 * The request's own success flag: `success`, or a boolean `status` (`{status: false, message}`
 * and `{status: true, data}` envelopes). A status that is a word is the order's, never this.
 */
export function readSuccess(o: Record<string, unknown>): boolean | undefined {
  return readBoolean(o.success) ?? (typeof o.status === 'boolean' ? o.status : undefined);
}

/**
 * A text value. Numbers become their decimal digits (a user id echoed as 5123456789); big
 * integers arrive here already as exact strings (see json.ts). Objects and arrays are not text.
 */
export function readText(v: unknown): string | undefined {
  if (typeof v === 'string') return v.trim() === '' ? undefined : v;
  if (typeof v === 'number' && Number.isFinite(v)) return Number.isInteger(v) ? v.toFixed(0) : String(v);
  return undefined;
}

/**
 * Status words as suppliers write them, folded to the API's three states. The aliases are the
 * ones public clients of this API handle; a word outside them is NEVER terminal: it reads as
 * `processing` with `known: false`, so the order keeps being looked at (on the row's doubt
 * clock, see the poller) instead of being taken as finished or failed on a guess.
 */
const STATUS_WORDS: Readonly<Record<string, OrderStatus>> = {
  completed: 'completed', complete: 'completed', success: 'completed', successful: 'completed',
  succeeded: 'completed', done: 'completed', delivered: 'completed',
  processing: 'processing', pending: 'processing', waiting: 'processing', 'in progress': 'processing',
  queued: 'processing', created: 'processing',
  cancelled: 'cancelled', canceled: 'cancelled', failed: 'cancelled', failure: 'cancelled',
  refunded: 'cancelled',
};

export interface StatusReading {
  status: OrderStatus;
  /** The supplier's own word, as sent (for logs, results and the audit copy). */
  word: string | undefined;
  /** False for a word outside STATUS_WORDS (and for no status at all). */
  known: boolean;
  /** The word itself says the money came back ("Refunded"). */
  saysRefunded: boolean;
}

export function readStatus(v: unknown): StatusReading {
  const word = readText(v);
  const key = word?.trim().toLowerCase().replace(/[\s_-]+/g, ' ');
  const status = key === undefined ? undefined : STATUS_WORDS[key];
  if (status === undefined) return { status: 'processing', word, known: false, saysRefunded: false };
  return { status, word, known: true, saysRefunded: key === 'refunded' };
}

/**
 * Delivered codes in every shape seen: an array of strings, one string holding one code or
 * several separated by commas, semicolons, spaces or line breaks, or objects `{code, pin}`
 * (also `serial`, `key`, `voucher`). An object with a PIN becomes "CODE/PIN:1234" (no space: a result cell lists codes separated by spaces): both are
 * needed to redeem it and the result has one cell per row. Blank entries are dropped.
 */
export function readCodes(v: unknown): string[] | undefined {
  if (absent(v)) return undefined;
  const out: string[] = [];
  // A lone string is a list written out; an array's string elements are one code each (a code
  // may contain spaces, "ABCD EFGH IJKL").
  const add = (x: unknown, inArray: boolean): void => {
    if (typeof x === 'string' || typeof x === 'number') {
      const text = readText(x)?.trim();
      if (text === undefined || text === '') return;
      const encoded = inArray ? undefined : encodedList(text);
      if (encoded) for (const e of encoded) add(e, true);
      else if (inArray) out.push(text);
      else for (const part of text.split(/[\s,;]+/)) if (part !== '') out.push(part);
    } else if (Array.isArray(x)) {
      for (const e of x) add(e, true);
    } else if (typeof x === 'object' && x !== null) {
      const o = x as Record<string, unknown>;
      const code = readText(o.code ?? o.serial ?? o.key ?? o.voucher ?? o.value);
      const pin = readText(o.pin ?? o.password ?? o.secret);
      if (code !== undefined) out.push(pin !== undefined ? `${code.trim()}/PIN:${pin.trim()}` : code.trim());
    }
  };
  add(v, false);
  return out.length > 0 ? out : undefined;
}

/** `'["A","B"]'`: an array encoded twice (json_encode of a value that was already JSON). */
function encodedList(text: string): unknown[] | undefined {
  if (!text.startsWith('[') || !text.endsWith(']')) return undefined;
  try {
    const v: unknown = JSON.parse(text);
    return Array.isArray(v) ? v : undefined;
  } catch {
    return undefined;
  }
}

/** Fields an envelope carries about the request itself (`{status: "success", code: 200, message, data}`). */
const ENVELOPE_FIELDS = new Set(['status', 'success', 'code', 'message']);

/**
 * Some deployments wrap every body: `{success: true, data: {...}}` or `{data: [...]}`. When the
 * expected field is not at the top level but `data` holds it, `data` is the body. `fields` are
 * the names whose presence marks the real body. A field an envelope also has (a top-level
 * `status: "success"`) does not mark the top level as the body when `data` holds the real one:
 * read as the order's status, "success" would be a completed order.
 */
export function unwrap(body: unknown, fields: readonly string[]): unknown {
  if (!isObject(body)) return body;
  if (fields.some((f) => f in body && !ENVELOPE_FIELDS.has(f))) return body;
  const data = body.data ?? body.result ?? body.response;
  if (isObject(data) && fields.some((f) => !absent(data[f]))) return { ...data, success: readSuccess(body) ?? data.success };
  // `{data: [...]}` is the list itself only for a reader of one list (orders, products, services):
  // beside a failure's message, `data: []` is just an empty payload.
  if (Array.isArray(data) && fields.length === 1) return { success: readSuccess(body), [fields[0]!]: data };
  return body;
}

export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The first present value among several names a field goes by. */
export function pick(o: Record<string, unknown>, ...names: string[]): unknown {
  for (const n of names) if (!absent(o[n])) return o[n];
  return undefined;
}
