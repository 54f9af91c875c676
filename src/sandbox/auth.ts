/** Authentication and account checks of spec §5, in the order the sandbox applies them. */
import type { IncomingMessage } from 'node:http';
import type { AccountRow, SandboxState } from './state.js';
import type { AccountState } from './types.js';

/** Key format (spec: "not shown"): 8–256 characters of [A-Za-z0-9._-]. */
export const API_KEY_FORMAT = /^[A-Za-z0-9._-]{8,256}$/;

export interface Failure { status: number; body: { success: false; code?: string; error: string } }

const fail = (status: number, code: string): Failure => ({ status, body: { success: false, code, error: code } });

const STATE_CODES: Record<Exclude<AccountState, 'active'>, string> = {
  api_disabled: 'API_DISABLED',
  disabled_by_admin: 'API_DISABLED_BY_ADMIN',
  not_eligible: 'API_NOT_ELIGIBLE',
  banned: 'ACCOUNT_BANNED',
  restricted: 'ACCOUNT_RESTRICTED',
};

/** `X-API-Key` wins over `Authorization`; an Authorization header that is not `Bearer <key>` is malformed. */
export function extractKey(req: IncomingMessage): string | undefined | null {
  const x = req.headers['x-api-key'];
  if (x !== undefined) return Array.isArray(x) ? (x[0] ?? '') : x;
  const auth = req.headers.authorization;
  if (auth === undefined) return undefined;
  const m = /^Bearer\s+(.*)$/i.exec(auth.trim());
  return m ? (m[1] as string).trim() : null;
}

/** The caller's IPv4 address; IPv4-mapped IPv6 and ::1 are written as IPv4 (spec §5.2 lists IPv4 only). */
export function clientIp(req: IncomingMessage): string {
  const raw = req.socket.remoteAddress ?? '';
  if (raw === '::1') return '127.0.0.1';
  return raw.startsWith('::ffff:') ? raw.slice(7) : raw;
}

/** Identifies the account: 401 on a missing, malformed or unknown key. */
export function identify(req: IncomingMessage, state: SandboxState): AccountRow | Failure {
  const key = extractKey(req);
  if (key === undefined) return fail(401, 'MISSING_API_KEY');
  if (key === null || !API_KEY_FORMAT.test(key)) return fail(401, 'INVALID_API_KEY_FORMAT');
  return state.accountByKey(key) ?? fail(401, 'INVALID_API_KEY');
}

/** 403 when the account may not use the API now, or not from this address. */
export function checkAccount(account: AccountRow, ip: string): Failure | null {
  if (account.state !== 'active') return fail(403, STATE_CODES[account.state] ?? 'ACCOUNT_RESTRICTED');
  if (account.ipAllowlist !== null) {
    if (account.ipAllowlist.length === 0) return fail(403, 'IP_ALLOWLIST_REQUIRED');
    if (!account.ipAllowlist.includes(ip)) return fail(403, 'IP_NOT_ALLOWED');
  }
  return null;
}

export const isFailure = (x: unknown): x is Failure =>
  typeof x === 'object' && x !== null && 'status' in x && 'body' in x;
