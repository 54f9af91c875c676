/**
 * The copy of an answer kept with a row for operators (`topup order`, `topup review`, review rows
 * in the summary): what the supplier last said about it, exactly as it came, so a person can
 * judge a case the program would not guess at. The client has already removed the API key.
 * Capped, because an HTML error page or a huge list must not bloat the database.
 */
import type { ApiAnswer } from '../errors.js';

export const AUDIT_CAP = 4_000;

/** JSON text of the answer, at most AUDIT_CAP characters (a longer body is cut and marked). */
export function auditCopy(answer: ApiAnswer | undefined): string | null {
  if (!answer) return null;
  const at = new Date(answer.at).toISOString();
  const full = JSON.stringify({ route: answer.route, status: answer.status ?? null, at, body: answer.body ?? null });
  if (full.length <= AUDIT_CAP) return full;
  const bodyText = typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body);
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
