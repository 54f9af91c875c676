/**
 * Several supplier accounts: `accounts.toml` in the home (TOPUP_ACCOUNTS_FILE names another path;
 * JSON accepted too), read and validated once at start with errors naming the account and the key.
 * Without the file, today's TOPUP_API_URL / TOPUP_API_KEY settings are one account named `default`
 * and everything works as before (docs/accounts.md).
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parse as parseToml, TomlError } from 'smol-toml';
import { ConfigError } from '../kernel/errors.js';
import { parseAuthHeader, parseDuration, parseHttpUrl, parseIpFamily, parseRateLimits, type RateWindow } from './parse.js';

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
  /**
   * Where the given limits were set, as doctor and the daemon's start name it: `TOPUP_RATE_LIMITS`
   * or the account's `rate_limits` in accounts.toml; null when they are learned.
   */
  readonly rateLimitsFrom: string | null;
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

/** The spec's limits: where a gate starts when an account gives none, to learn the real ones from 429s. */
export const SPEC_RATE_LIMITS: readonly RateWindow[] = Object.freeze([
  Object.freeze({ limit: 40, windowMs: 1000 }),
  Object.freeze({ limit: 200, windowMs: 60_000 }),
]);
export const DEFAULT_MAX_QUEUE_DELAY_MS = 30_000;
export const ACCOUNT_NAME = /^[a-z0-9][a-z0-9_-]{0,31}$/;
/** The accounts file in the home when TOPUP_ACCOUNTS_FILE names none. */
export const ACCOUNTS_FILE = 'accounts.toml';

const TOP_KEYS = ['routing', 'max_queue_delay', 'account', 'pack'] as const;
const ACCOUNT_KEYS = ['name', 'url', 'key', 'key_file', 'rate_limits', 'auth_header', 'ip_family'] as const;
const PACK_KEYS = ['slug', 'pack', 'pid'] as const;
/** The settings that describe the one account of a home without the file: beside the file they would be a second truth. */
const SINGLE_ACCOUNT_SETTINGS = ['TOPUP_API_URL', 'TOPUP_API_KEY', 'TOPUP_API_KEY_FILE'] as const;

export interface AccountsInput {
  home: string;
  /** The settings after defaults, topup.conf, the environment and flags (config.ts). */
  env: Readonly<Record<string, string>>;
  /** Whether a setting was given (environment, topup.conf or a flag), not just its default. */
  given: (name: 'TOPUP_API_URL' | 'TOPUP_API_KEY' | 'TOPUP_API_KEY_FILE' | 'TOPUP_RATE_LIMITS' | 'TOPUP_ACCOUNTS_FILE') => boolean;
  /** systemd's $CREDENTIALS_DIRECTORY: an account's key may come from the credential of its name. */
  credDir: string | undefined;
  /** False for commands that never call the API (status): they work without keys. */
  requireKey: boolean;
}

type Table = Record<string, unknown>;

/**
 * Reads and validates the accounts file: TOPUP_ACCOUNTS_FILE, else `<home>/accounts.toml` when
 * present. Null without one (the `default` account then comes from TOPUP_API_URL / TOPUP_API_KEY,
 * see withAccounts). Every error is a ConfigError whose setting names the file, the account and the
 * key (`accounts.toml: account "second": key_file`); no message carries a key's value.
 */
export function readAccountsFile(input: AccountsInput): AccountsSettings | null {
  const named = input.env.TOPUP_ACCOUNTS_FILE?.trim() ?? '';
  const label = named === '' ? ACCOUNTS_FILE : named;
  const path = resolve(input.home, label);
  if (!existsSync(path)) {
    if (named !== '') throw new ConfigError('TOPUP_ACCOUNTS_FILE', `${path} does not exist`);
    return null;
  }
  // One source of truth: with the file, a TOPUP_API_URL or key left over from the single-account
  // setup would leave the reader guessing which one places orders.
  for (const name of SINGLE_ACCOUNT_SETTINGS) {
    if (input.given(name)) {
      throw new ConfigError(name, `cannot be set with ${label} (${path}): the accounts come from the file alone; move it into an [[account]] or unset it`);
    }
  }
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new ConfigError(label, `cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  const doc = parseDocument(text, label, path);
  const settings = validate(doc, label, input);
  // Like ssh with a private key: a file holding a key inline is for its owner's eyes only.
  if (hasInlineKey(doc) && process.platform !== 'win32') {
    const mode = statSync(path).mode & 0o777;
    if ((mode & 0o077) !== 0) {
      throw new ConfigError(label, `holds an API key (key = …) and can be read by others (mode ${mode.toString(8).padStart(4, '0')}): run chmod 600 ${path}, or move the keys into key_file files`);
    }
  }
  return { ...settings, file: path };
}

/**
 * The Config with its accounts: the file's (and then apiUrl, apiKey, sandbox, authHeader,
 * rateLimits and ipFamily are the first account's, so code that reads them keeps working), or the
 * one account named `default` that the single-account settings describe.
 */
export function withAccounts<C extends SingleAccountFields>(
  config: C,
  file: AccountsSettings | null,
  rateLimitsGiven: boolean,
): C & { accounts: AccountsSettings } {
  if (file === null) {
    const only: AccountSetting = Object.freeze({
      name: 'default',
      url: config.apiUrl,
      key: config.apiKey,
      authHeader: config.authHeader,
      rateLimits: Object.freeze(config.rateLimits.map((w) => Object.freeze({ ...w }))),
      rateLimitsGiven,
      rateLimitsFrom: rateLimitsGiven ? 'TOPUP_RATE_LIMITS' : null,
      ipFamily: config.ipFamily,
    });
    const accounts: AccountsSettings = Object.freeze({
      file: null,
      routing: 'cheapest',
      accounts: Object.freeze([only]),
      packAliases: Object.freeze([]),
      maxQueueDelayMs: DEFAULT_MAX_QUEUE_DELAY_MS,
    });
    return { ...config, accounts };
  }
  const first = file.accounts[0]!;
  return {
    ...config,
    apiUrl: first.url,
    sandbox: first.url === null,
    apiKey: first.key,
    authHeader: first.authHeader,
    rateLimits: first.rateLimits.map((w) => ({ ...w })),
    ipFamily: first.ipFamily,
    accounts: deepFreeze(file),
  };
}

interface SingleAccountFields {
  apiUrl: string | null;
  sandbox: boolean;
  apiKey: string;
  authHeader: 'x-api-key' | 'bearer';
  rateLimits: RateWindow[];
  ipFamily: 4 | 6 | 'auto';
}

function parseDocument(text: string, label: string, path: string): Table {
  const body = text.replace(/^\uFEFF/, '');
  if (path.toLowerCase().endsWith('.json') || body.trimStart().startsWith('{')) {
    let doc: unknown;
    try {
      doc = JSON.parse(body);
    } catch (err) {
      throw new ConfigError(label, `is not valid JSON (${jsonProblem(body, (err as Error).message)})`);
    }
    if (!isTable(doc)) throw new ConfigError(label, 'must be a JSON object ({ "routing": …, "account": [ … ] })');
    return doc;
  }
  try {
    return parseToml(body) as Table;
  } catch (err) {
    if (err instanceof TomlError) {
      // Only the first line of smol-toml's message: the rest quotes the lines around the error,
      // which may hold a key.
      const reason = err.message.split('\n')[0]!.replace(/^Invalid TOML document:\s*/, '');
      throw new ConfigError(label, `is not valid TOML: line ${err.line}, column ${err.column}: ${reason}`);
    }
    throw err;
  }
}

/** JSON.parse's reason with line and column, without the text around it that V8 quotes (it may hold a key). */
function jsonProblem(text: string, message: string): string {
  const at = / in JSON at position (\d+)/.exec(message);
  if (at) {
    const before = text.slice(0, Number(at[1])).split(/\r?\n/);
    return `line ${before.length}, column ${before.at(-1)!.length + 1}: ${message.slice(0, at.index)}`;
  }
  if (/^Unexpected end of JSON input/.test(message)) return 'it ends too soon';
  return message.replace(/,?\s*".*$/s, '').replace(/'.*'/, 'a character');
}

function validate(doc: Table, label: string, input: AccountsInput): Omit<AccountsSettings, 'file'> {
  unknownKeys(doc, TOP_KEYS, (k) => `${label}: ${k}`);

  let routing: Routing = 'cheapest';
  if (doc.routing !== undefined) {
    const r = str(doc.routing, `${label}: routing`);
    if (!(ROUTINGS as readonly string[]).includes(r)) throw new ConfigError(`${label}: routing`, `must be one of ${ROUTINGS.join(', ')}, not "${r}"`);
    routing = r as Routing;
  }

  let maxQueueDelayMs = DEFAULT_MAX_QUEUE_DELAY_MS;
  if (doc.max_queue_delay !== undefined) {
    const v = doc.max_queue_delay;
    const setting = `${label}: max_queue_delay`;
    if (typeof v === 'number' || typeof v === 'bigint') maxQueueDelayMs = parseDuration(String(v), setting);
    else maxQueueDelayMs = parseDuration(str(v, setting), setting);
  }

  if (doc.account === undefined) throw new ConfigError(`${label}: account`, 'needs at least one [[account]] (name, url, key_file or key)');
  const list = tables(doc.account, `${label}: account`, '[[account]]');
  if (list.length === 0) throw new ConfigError(`${label}: account`, 'needs at least one [[account]] (name, url, key_file or key)');
  const accounts: AccountSetting[] = [];
  list.forEach((t, i) => {
    const a = account(t, i, label, input);
    const twin = accounts.find((b) => b.name === a.name);
    if (twin) throw new ConfigError(`${label}: account "${a.name}": name`, `is used by account ${accounts.indexOf(twin) + 1} too (names must be unique)`);
    // The same key at the same URL is one account listed twice: its rate budget would be counted twice.
    const same = accounts.find((b) => b.key !== '' && b.key === a.key && b.url === a.url);
    if (same) throw new ConfigError(`${label}: account "${a.name}": key`, `is account "${same.name}"'s key at the same url: one account listed twice`);
    accounts.push(a);
  });

  const names = accounts.map((a) => a.name);
  const packAliases: PackAlias[] = [];
  if (doc.pack !== undefined) {
    tables(doc.pack, `${label}: pack`, '[[pack]]').forEach((t, i) => packAliases.push(packAlias(t, i, label, names)));
  }
  return { routing, accounts, packAliases, maxQueueDelayMs };
}

function account(t: Table, i: number, label: string, input: AccountsInput): AccountSetting {
  if (t.name === undefined) throw new ConfigError(`${label}: account ${i + 1}: name`, 'is required ([a-z0-9_-], up to 32 characters)');
  const name = str(t.name, `${label}: account ${i + 1}: name`);
  if (!ACCOUNT_NAME.test(name)) {
    throw new ConfigError(`${label}: account ${i + 1}: name`, `"${name}" is not a name: lower-case letters, digits, _ and -, starting with a letter or digit, up to 32 characters`);
  }
  const at = (key: string) => `${label}: account "${name}": ${key}`;
  // In TOML every line after [[account]] belongs to that account, a common slip for `routing`.
  for (const k of ['routing', 'max_queue_delay']) {
    if (t[k] !== undefined) throw new ConfigError(at(k), 'belongs to the whole file: write it above the first [[account]]');
  }
  unknownKeys(t, ACCOUNT_KEYS, at);

  if (t.url === undefined) throw new ConfigError(at('url'), 'is required (the API\'s base URL, https://…)');
  const url = parseHttpUrl(str(t.url, at('url')).trim(), at('url'));

  let key = '';
  if (t.key !== undefined && t.key_file !== undefined) throw new ConfigError(at('key'), 'and key_file are both given: keep one');
  if (t.key !== undefined) {
    if (typeof t.key !== 'string') throw new ConfigError(at('key'), 'must be a string');
    key = t.key;
    if (key === '') throw new ConfigError(at('key'), 'is empty');
  } else if (t.key_file !== undefined) {
    const file = str(t.key_file, at('key_file'));
    key = readKey(resolve(input.home, file), file, at('key_file'));
  } else if (input.credDir && existsSync(join(input.credDir, name))) {
    // systemd's LoadCredential=<name>:/path puts this account's key in $CREDENTIALS_DIRECTORY/<name>.
    key = readKey(join(input.credDir, name), join(input.credDir, name), at('key'));
  } else if (input.requireKey) {
    throw new ConfigError(at('key'), `is required: key_file = "keys/${name}.key" (relative to the home), key = "…", or systemd's LoadCredential=${name}:…`);
  }
  // Never echo the key: only what is wrong with it.
  if (/\s/.test(key)) throw new ConfigError(at(t.key_file !== undefined ? 'key_file' : 'key'), 'the key contains whitespace');

  let rateLimits: readonly RateWindow[] = SPEC_RATE_LIMITS;
  let rateLimitsFrom: string | null = null;
  if (t.rate_limits !== undefined) {
    rateLimits = parseRateLimits(str(t.rate_limits, at('rate_limits')), at('rate_limits'));
    rateLimitsFrom = at('rate_limits');
  } else if (input.given('TOPUP_RATE_LIMITS')) {
    // TOPUP_RATE_LIMITS is every account's default, like TOPUP_AUTH_HEADER and TOPUP_IP_FAMILY.
    rateLimits = parseRateLimits(input.env.TOPUP_RATE_LIMITS!, 'TOPUP_RATE_LIMITS');
    rateLimitsFrom = 'TOPUP_RATE_LIMITS';
  }
  const rateLimitsGiven = rateLimitsFrom !== null;

  const authHeader = t.auth_header !== undefined
    ? parseAuthHeader(str(t.auth_header, at('auth_header')), at('auth_header'))
    : parseAuthHeader(input.env.TOPUP_AUTH_HEADER ?? 'x-api-key', 'TOPUP_AUTH_HEADER');
  const ipFamily = t.ip_family !== undefined
    ? parseIpFamily(typeof t.ip_family === 'number' || typeof t.ip_family === 'bigint' ? String(t.ip_family) : str(t.ip_family, at('ip_family')), at('ip_family'))
    : parseIpFamily(input.env.TOPUP_IP_FAMILY ?? '4', 'TOPUP_IP_FAMILY');

  return { name, url, key, authHeader, rateLimits, rateLimitsGiven, rateLimitsFrom, ipFamily };
}

function packAlias(t: Table, i: number, label: string, names: readonly string[]): PackAlias {
  const where = `${label}: pack ${i + 1}`;
  const at: Record<string, { slug?: string; pack?: string; pid?: string }> = {};
  for (const [acc, v] of Object.entries(t)) {
    if (!names.includes(acc)) throw new ConfigError(`${where}: ${acc}`, `names no account (the accounts: ${names.join(', ')})`);
    if (!isTable(v)) throw new ConfigError(`${where}: ${acc}`, 'must be a table: { slug = "…", pack = "…" } or { pid = "…" }');
    unknownKeys(v, PACK_KEYS, (k) => `${where}: ${acc}: ${k}`);
    const e: { slug?: string; pack?: string; pid?: string } = {};
    for (const k of PACK_KEYS) {
      if (v[k] === undefined) continue;
      const s = str(v[k], `${where}: ${acc}: ${k}`).trim();
      if (s === '') throw new ConfigError(`${where}: ${acc}: ${k}`, 'is empty');
      e[k] = s;
    }
    const byPid = e.pid !== undefined;
    const byName = e.slug !== undefined || e.pack !== undefined;
    if (byPid === byName || (byName && (e.slug === undefined || e.pack === undefined))) {
      throw new ConfigError(`${where}: ${acc}`, 'names its pack by pid alone, or by slug and pack together');
    }
    at[acc] = e;
  }
  if (Object.keys(at).length < 2) throw new ConfigError(where, 'maps a pack across at least two accounts (account = { slug = "…", pack = "…" } or { pid = "…" } each)');
  return { at };
}

function readKey(path: string, shown: string, setting: string): string {
  let key: string;
  try {
    key = readFileSync(path, 'utf8').trim();
  } catch (err) {
    throw new ConfigError(setting, `cannot read ${shown} (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  if (key === '') throw new ConfigError(setting, `${shown} is empty`);
  return key;
}

/** A typo must not pass silently (`rate_limit` for `rate_limits`): any key the file may not hold is an error. */
function unknownKeys(t: Table, known: readonly string[], at: (key: string) => string): void {
  for (const k of Object.keys(t)) {
    if (known.includes(k)) continue;
    const near = known.find((n) => distance(n, k) <= 2 || (k.length >= 3 && n.startsWith(k)));
    throw new ConfigError(at(k), `is not a key here${near ? ` (did you mean ${near}?)` : ''}; the keys: ${known.join(', ')}`);
  }
}

function str(v: unknown, setting: string): string {
  if (typeof v !== 'string') throw new ConfigError(setting, 'must be a string (in quotes)');
  return v;
}

function isTable(v: unknown): v is Table {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Date);
}

function tables(v: unknown, setting: string, form: string): Table[] {
  if (!Array.isArray(v)) throw new ConfigError(setting, `must be a list of tables: write ${form} (an array of tables), not one table`);
  return v.map((t, i) => {
    if (!isTable(t)) throw new ConfigError(`${setting} ${i + 1}`, 'must be a table');
    return t;
  });
}

function hasInlineKey(doc: Table): boolean {
  return Array.isArray(doc.account) && doc.account.some((t) => isTable(t) && t.key !== undefined);
}

/** Edit distance, for "did you mean". */
function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const cur = row[j]!;
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = cur;
    }
  }
  return row[b.length]!;
}

function deepFreeze<T>(v: T): T {
  if (typeof v === 'object' && v !== null && !Object.isFrozen(v)) {
    Object.freeze(v);
    for (const x of Object.values(v)) deepFreeze(x);
  }
  return v;
}
