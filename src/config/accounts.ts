/**
 * Several supplier accounts: `accounts.toml` in the home (TOPUP_ACCOUNTS_FILE names another path;
 * JSON accepted too), read and validated once at start with errors naming the account and the key.
 * Without the file, today's TOPUP_API_URL / TOPUP_API_KEY settings are one account named `default`
 * and everything works as before (docs/accounts.md).
 */
import type { RateWindow } from './config.js';

/** How a row that more than one account can place picks its account (docs/accounts.md). */
export type Routing = 'cheapest' | 'priority' | 'spread';
export const ROUTINGS: readonly Routing[] = Object.freeze(['cheapest', 'priority', 'spread']);

export interface AccountSetting {
  /** Shown in results, status, console, metrics and logs: [a-z0-9_-], 1..32 characters. */
  readonly name: string;
  /** The API's base URL; null only for the `default` account of a home without TOPUP_API_URL (the in-process sandbox). */
  readonly url: string | null;
  /** Never logged, shown or stored (secretsOf() lists it). */
  readonly key: string;
  readonly authHeader: 'x-api-key' | 'bearer';
  /** The limits the gate starts from: the given ones, or the spec's (40/1s,200/1m) to learn from. */
  readonly rateLimits: readonly RateWindow[];
  /** True: given (rate_limits / TOPUP_RATE_LIMITS) and kept; false: learned from 429s (account/learned-limits.ts). */
  readonly rateLimitsGiven: boolean;
  readonly ipFamily: 4 | 6 | 'auto';
}

/** A pack known under different names at different accounts: the same purchase. */
export interface PackAlias {
  /** Per account name: the pack as that account's catalog names it (slug + pack name, or pid). */
  readonly at: Readonly<Record<string, { slug?: string; pack?: string; pid?: string }>>;
}

export interface AccountsSettings {
  /** The file read, or null when the accounts come from TOPUP_API_URL / TOPUP_API_KEY (`default`). */
  readonly file: string | null;
  readonly routing: Routing;
  /** In file order (priority routing follows it); at least one; names unique. */
  readonly accounts: readonly AccountSetting[];
  readonly packAliases: readonly PackAlias[];
  /** cheapest routing: a cheaper account is preferred unless its queue would delay the row by more than this. */
  readonly maxQueueDelayMs: number;
}
