/**
 * The copy of an answer kept with a row for operators (`topup order`, `topup review`, review rows
 * in the summary): what the supplier last said about it, exactly as it came, so a person can
 * judge a case the program would not guess at. The client has already removed the API key.
 * Capped, because an HTML error page or a huge list must not bloat the database.
 * Delivered codes are hidden in it (fields named codes, code, pin, voucher, key, serial …): the
 * copy is shown in terminals and listed in summaries, and an answer about someone else's order
 * (a replayed trxid) must not hand over that customer's codes.
 */
import type { ApiAnswer } from '../kernel/errors.js';

export const AUDIT_CAP = 4_000;

/** JSON text of the answer, at most AUDIT_CAP characters (a longer body is cut and marked). */
export function auditCopy(answer: ApiAnswer | undefined): string | null {
  if (!answer) return null;
  const at = new Date(answer.at).toISOString();
  const body = hideCodes(answer.body ?? null);
  const full = JSON.stringify({ route: answer.route, status: answer.status ?? null, at, body });
  if (full.length <= AUDIT_CAP) return full;
  const bodyText = typeof body === 'string' ? body : JSON.stringify(body);
  const room = Math.max(0, AUDIT_CAP - 200);
  return JSON.stringify({ route: answer.route, status: answer.status ?? null, at, body: `${bodyText.slice(0, room)}…`, truncated: true });
}

/** One line for tables: `GET /orders/:id 200 at … {"status":"Pending"…}`. */
export function describeAudit(copy: string | null, max = 300): string {
  if (!copy) return '';
  try {
    const a = JSON.parse(copy) as { route: string; status: number | null; at: string; body: unknown };
    const body = typeof a.body === 'string' ? a.body : JSON.stringify(a.body);
    const line = `${a.route} → ${a.status ?? 'no answer'} at ${a.at}: ${body.replace(/\s+/g, ' ')}`;
    return line.length > max ? `${line.slice(0, max - 1)}…` : line;
  } catch {
    return copy.slice(0, max);
  }
}

const SECRET_FIELD = /^(codes?|pins?|vouchers?|keys?|serials?|secrets?|passwords?|license(_?keys?)?|redeem(_?codes?)?)$/i;

/** The body with the values of code-like fields replaced by how many there were. */
export function hideCodes(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(hideCodes);
  if (typeof v !== 'object' || v === null) return v;
  return Object.fromEntries(
    Object.entries(v).map(([k, x]) => {
      if (!SECRET_FIELD.test(k) || x === null || x === undefined || x === '') return [k, hideCodes(x)];
      const n = Array.isArray(x) ? x.length : 1;
      return [k, `[${n} hidden]`];
    }),
  );
}
