/**
 * Settings: defaults, then the optional config file `$TOPUP_HOME/topup.conf`, then the
 * environment (the environment wins). Parsed and validated once at start-up into a frozen
 * Config; a bad setting is a ConfigError naming the setting and what is wrong with it.
 *
 * The config file uses the same KEY=VALUE lines as a systemd EnvironmentFile, so one file
 * serves both. TOPUP_HOME itself is read from the environment only.
 */
import { PLAYER_CHECK_DEFAULTS, playerCheckSettings, type PlayerCheckSettings } from './player-check-settings.js';
import { existsSync, readFileSync } from 'node:fs';
import { resolve, join } from 'node:path';
import { parseEnv } from 'node:util';
import { validate as validateCron } from 'node-cron';
import { ConfigError } from '../kernel/errors.js';
import { parseTimeZone } from '../kernel/time-zone.js';
import type { HeapPolicy } from '../kernel/heap-policy.js';
import { CONSOLE_DEFAULTS, consoleSettings, type ConsoleSettings } from './console-settings.js';
import { ORDER_API_DEFAULTS, orderApiSettings, type OrderApiSettings } from './order-api-settings.js';
import { BACKUP_DEFAULTS, backupSettings, type BackupSettings } from './backup-settings.js';
import { STANDBY_DEFAULTS, standbySettings, type StandbySettings } from './standby-settings.js';
import { readAccountsFile, withAccounts, type AccountsSettings } from './accounts.js';
import { parseAuthHeader, parseDuration, parseHttpUrl, parseIpFamily, parseRateLimits, type RateWindow } from './parse.js';

export { parseDuration, parseRateLimits, type RateWindow };

export interface ScheduleSetting {
  /** A node-cron expression, or null when switched off. */
  cron: string | null;
}

export interface Config {
  home: string;
  inboxDir: string;
  jobsDir: string;
  outboxDir: string;
  reportsDir: string;
  dbPath: string;
  configFile: string | null;
  /** null: the built-in sandbox runs in-process. */
  apiUrl: string | null;
  sandbox: boolean;
  apiKey: string;
  authHeader: 'x-api-key' | 'bearer';
  rateLimits: RateWindow[];
  /** TOPUP_RATE_LIMITS was given (environment or topup.conf): kept as given; absent, the gate learns from 429s (account/learned-limits.ts). */
  rateLimitsGiven: boolean;
  rateMarginMs: number;
  /** `sliding` (always, in production) or `fixed` (benchmark comparison only). */
  rateWindowMode: 'sliding' | 'fixed';
  pollIntervalMs: number;
  requestTimeoutMs: number;
  /**
   * How long a row may go without a definite answer, counted from the first send whose answer
   * was lost (or the first poll that missed its order): past it, resending stops and order
   * history decides (`processing` or `review`). See dispatch/sender.ts and poll/poller.ts.
   */
  reviewAfterMs: number;
  /** How long review rows are rechecked against the API for their order (see poll/review-recheck.ts). */
  reviewRecheckMs: number;
  /** A row repeating a purchase placed this recently is not bought again (claim/repeats.ts). */
  repeatWindowMs: number;
  /** Longest Retry-After honoured at once; past it calls look again (api/client.ts). */
  retryAfterMaxMs: number;
  /** Address family of API connections: 4 (default: allowlists are IPv4-only), 6, or auto. */
  ipFamily: 4 | 6 | 'auto';
  /**
   * How long a file written in the inbox itself must go without a write before it is taken: a
   * copy pausing for less is never cut short (intake/watch.ts). Files renamed in whole wait
   * min(this, 1 s). Default 12 s: pauses of up to 10 s, with room for a busy machine.
   */
  settleMs: number;
  /** How often a running batch's partial result is rewritten at most (outbox/partial.ts). */
  partialResultMs: number;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  maxInFlight: number;
  /** How much memory V8 may keep in the commands that run batches (kernel/heap-policy.ts). */
  heap: HeapPolicy;
  catalogMaxAgeMs: number;
  sandboxBalanceUsd: number;
  /**
   * TOPUP_SANDBOX_BALANCE_USD was given (environment or topup.conf), not the default: only a
   * given value changes an existing sandbox account's balance (sandbox/home.ts).
   */
  sandboxBalanceSet: boolean;
  /** How the in-process sandbox answers: the spec's exact types, or as real deployments do. */
  sandboxAnswers: 'spec' | 'real-world';
  lowBalanceUsd: number | null;
  schedules: { balanceReport: ScheduleSetting; historyExport: ScheduleSetting; reconcile: ScheduleSetting; lowBalance: ScheduleSetting };
  /**
   * TOPUP_TIME_ZONE, a canonical IANA name ('UTC' by default): the zone cron schedules are read in
   * and the days of reports, their file names, the daily roll-up and the console's pictures are in
   * (kernel/time-zone.ts, docs/reports.md "Time zones").
   */
  timeZone: string;
  webhookUrl: string | null;
  telegram: { botToken: string; chatId: string; apiBase: string } | null;
  /** The web console and /metrics (config/console-settings.ts); null with TOPUP_CONSOLE=off. */
  console: ConsoleSettings | null;
  /** The order API and its webhooks (config/order-api-settings.ts, docs/order-api.md). */
  orderApi: OrderApiSettings;
  /** Scheduled backups of the store (config/backup-settings.ts, docs/backup.md). */
  backup: BackupSettings;
  /** Continuous replication of the store and the fence of a warm standby (config/standby-settings.ts, docs/standby.md). */
  standby: StandbySettings;
  /**
   * The supplier accounts (config/accounts.ts, docs/accounts.md): accounts.toml's, or the one named
   * `default` that TOPUP_API_URL / TOPUP_API_KEY describe. With the file, apiUrl, apiKey, sandbox,
   * authHeader, rateLimits and ipFamily above are the first account's.
   */
  accounts: AccountsSettings;
  /** The player-name checks (config/player-check-settings.ts, docs/player-checks.md): off by default. */
  playerChecks: PlayerCheckSettings;
}

/** Every setting this program reads, with its default. docs/settings.md's table mirrors this (test/unit/config.test.ts). */
export const SETTINGS = {
  TOPUP_API_URL: '',
  TOPUP_API_KEY: '',
  TOPUP_API_KEY_FILE: '',
  TOPUP_ACCOUNTS_FILE: '',
  TOPUP_AUTH_HEADER: 'x-api-key',
  TOPUP_RATE_LIMITS: '40/1s,200/1m',
  TOPUP_RATE_MARGIN_MS: '100',
  TOPUP_RATE_WINDOW_MODE: 'sliding',
  TOPUP_POLL_INTERVAL_MS: '5000',
  TOPUP_REQUEST_TIMEOUT_MS: '15000',
  TOPUP_REVIEW_AFTER_MS: '86400000',
  TOPUP_REVIEW_RECHECK_DAYS: '7',
  TOPUP_RETRY_AFTER_MAX_MS: '300000',
  TOPUP_REPEAT_WINDOW: '24h',
  TOPUP_IP_FAMILY: '4',
  TOPUP_SETTLE_MS: '12000',
  TOPUP_PARTIAL_RESULT_MS: '30000',
  TOPUP_LOG_LEVEL: 'info',
  TOPUP_MAX_IN_FLIGHT: '32',
  TOPUP_HEAP: 'lean',
  TOPUP_CATALOG_MAX_AGE_MS: '60000',
  TOPUP_SANDBOX_BALANCE_USD: '1000',
  TOPUP_SANDBOX_ANSWERS: 'spec',
  TOPUP_LOW_BALANCE_USD: '',
  TOPUP_BALANCE_REPORT_CRON: '0 * * * *',
  TOPUP_HISTORY_EXPORT_CRON: '30 0 * * *',
  TOPUP_RECONCILE_CRON: '45 0 * * *',
  TOPUP_LOW_BALANCE_CRON: '*/10 * * * *',
  TOPUP_TIME_ZONE: 'UTC',
  TOPUP_WEBHOOK_URL: '',
  TOPUP_TELEGRAM_BOT_TOKEN: '',
  TOPUP_TELEGRAM_CHAT_ID: '',
  TOPUP_TELEGRAM_API_BASE: 'https://api.telegram.org',
  ...CONSOLE_DEFAULTS,
  ...ORDER_API_DEFAULTS,
  ...BACKUP_DEFAULTS,
  ...STANDBY_DEFAULTS,
  ...PLAYER_CHECK_DEFAULTS,
} as const satisfies Record<string, string>;
export type SettingName = keyof typeof SETTINGS;

/** The key the in-process sandbox accepts when no TOPUP_API_KEY is set. Not a secret. */
export const SANDBOX_DEFAULT_KEY = 'sandbox-key-0000000000000000';

function int(env: Record<string, string>, name: SettingName, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const raw = env[name]!.trim();
  const n = Number(raw);
  if (!/^-?\d+$/.test(raw) || !Number.isSafeInteger(n)) throw new ConfigError(name, `"${raw}" is not a whole number`);
  if (n < min || n > max) throw new ConfigError(name, `${n} is out of range (${min}..${max === Number.MAX_SAFE_INTEGER ? '∞' : max})`);
  return n;
}

function money(env: Record<string, string>, name: SettingName): number | null {
  const raw = env[name]!.trim();
  if (raw === '') return null;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 0) throw new ConfigError(name, `"${raw}" is not an amount in USD`);
  return n;
}

function url(env: Record<string, string>, name: SettingName): string | null {
  const raw = env[name]!.trim();
  if (raw === '') return null;
  return parseHttpUrl(raw, name);
}

function schedule(env: Record<string, string>, name: SettingName): ScheduleSetting {
  const raw = env[name]!.trim();
  if (raw === '' || /^(off|false|no|0|disabled)$/i.test(raw)) return { cron: null };
  if (!validateCron(raw)) throw new ConfigError(name, `"${raw}" is not a cron expression (or "off")`);
  return { cron: raw };
}

/** A duration like 24h or 90m, or 0/off to turn the repeat check off. */
function repeatWindow(raw: string): number {
  if (/^\s*(0|off|no|false)\s*$/i.test(raw)) return 0;
  return parseDuration(raw, 'TOPUP_REPEAT_WINDOW');
}

function ipFamily(raw: string): 4 | 6 | 'auto' {
  return parseIpFamily(raw, 'TOPUP_IP_FAMILY');
}

function windowMode(raw: string): 'sliding' | 'fixed' {
  const v = raw.trim().toLowerCase();
  if (v !== 'sliding' && v !== 'fixed') throw new ConfigError('TOPUP_RATE_WINDOW_MODE', `must be "sliding" or "fixed", not "${raw}"`);
  return v;
}

function heap(raw: string): HeapPolicy {
  const v = raw.trim().toLowerCase();
  if (v !== 'lean' && v !== 'throughput') throw new ConfigError('TOPUP_HEAP', `must be "lean" or "throughput", not "${raw}"`);
  return v;
}

function sandboxAnswers(raw: string): 'spec' | 'real-world' {
  const v = raw.trim().toLowerCase();
  if (v !== 'spec' && v !== 'real-world') throw new ConfigError('TOPUP_SANDBOX_ANSWERS', `must be "spec" or "real-world", not "${raw}"`);
  return v;
}

function readKeyFile(path: string): string {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch (err) {
    throw new ConfigError('TOPUP_API_KEY_FILE', `cannot read ${path} (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
}

/**
 * Every value of the config that no log line, error, page, result or metric may show: the API keys (every account's),
 * the Telegram bot token and the console token. kernel/log.ts and the console scrub them; one list, so
 * a secret added here is scrubbed everywhere.
 */
export function secretsOf(config: Config): string[] {
  const keys = new Set([config.apiKey, ...config.accounts.accounts.map((a) => a.key)]);
  return [...keys, config.telegram?.botToken ?? '', config.console?.token ?? '', config.orderApi.token ?? '', config.orderApi.webhook.secret ?? ''].filter((s) => s !== '');
}

/**
 * Builds the Config from an environment (process.env by default). Throws ConfigError.
 * `overrides` are applied last (CLI flags such as --home).
 */
export function loadConfig(
  environment: NodeJS.ProcessEnv = process.env,
  overrides: Partial<Record<SettingName | 'TOPUP_HOME', string>> = {},
  /** False for commands that never call the API (status): they must work without the key. */
  opts: { requireKey?: boolean } = {},
): Config {
  const home = resolve(overrides.TOPUP_HOME ?? environment.TOPUP_HOME ?? process.cwd());
  const configFile = join(home, 'topup.conf');
  let fromFile: Record<string, string> = {};
  const hasFile = existsSync(configFile);
  if (hasFile) {
    try {
      fromFile = parseEnv(readFileSync(configFile, 'utf8')) as Record<string, string>;
    } catch (err) {
      throw new ConfigError(configFile, `cannot be read: ${(err as Error).message}`);
    }
    for (const key of Object.keys(fromFile)) {
      if (key.startsWith('TOPUP_') && !(key in SETTINGS) && key !== 'TOPUP_HOME') {
        throw new ConfigError(key, `unknown setting in ${configFile}`);
      }
    }
  }
  const env: Record<string, string> = { ...SETTINGS };
  for (const name of Object.keys(SETTINGS) as SettingName[]) {
    const v = overrides[name] ?? environment[name] ?? fromFile[name];
    if (v !== undefined) env[name] = v;
  }

  // Given (environment, topup.conf or a flag), not the default.
  const given = (name: SettingName): boolean => (overrides[name] ?? environment[name] ?? fromFile[name] ?? '').trim() !== '';
  // Before the single account's settings, so TOPUP_API_URL set beside the file is named as such.
  const accountsFile = readAccountsFile({ home, env, given, credDir: environment.CREDENTIALS_DIRECTORY, requireKey: opts.requireKey !== false });

  const apiUrl = url(env, 'TOPUP_API_URL');
  let apiKey = env.TOPUP_API_KEY!.trim();
  const keyFile = env.TOPUP_API_KEY_FILE!.trim();
  if (apiKey === '' && keyFile !== '') apiKey = readKeyFile(resolve(home, keyFile));
  // systemd's LoadCredential= puts the key in $CREDENTIALS_DIRECTORY/topup-api-key.
  const credDir = environment.CREDENTIALS_DIRECTORY;
  if (apiKey === '' && credDir && existsSync(join(credDir, 'topup-api-key'))) apiKey = readKeyFile(join(credDir, 'topup-api-key'));
  if (apiKey === '' && apiUrl !== null && opts.requireKey !== false) {
    throw new ConfigError('TOPUP_API_KEY', 'is required when TOPUP_API_URL is set (or set TOPUP_API_KEY_FILE)');
  }
  if (/\s/.test(apiKey)) throw new ConfigError('TOPUP_API_KEY', 'contains whitespace');

  const auth = parseAuthHeader(env.TOPUP_AUTH_HEADER!, 'TOPUP_AUTH_HEADER');

  const level = env.TOPUP_LOG_LEVEL!.trim().toLowerCase();
  const levels = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];
  if (!levels.includes(level)) throw new ConfigError('TOPUP_LOG_LEVEL', `must be one of ${levels.join(', ')}`);

  const webhookUrl = url(env, 'TOPUP_WEBHOOK_URL');
  const botToken = env.TOPUP_TELEGRAM_BOT_TOKEN!.trim();
  const chatId = env.TOPUP_TELEGRAM_CHAT_ID!.trim();
  if ((botToken === '') !== (chatId === '')) {
    throw new ConfigError(botToken === '' ? 'TOPUP_TELEGRAM_BOT_TOKEN' : 'TOPUP_TELEGRAM_CHAT_ID', 'Telegram needs both the bot token and the chat id');
  }

  const jobsDir = join(home, 'jobs');
  const outboxDir = join(home, 'outbox');
  const config: Omit<Config, 'accounts'> = {
    home,
    inboxDir: join(home, 'inbox'),
    jobsDir,
    outboxDir,
    reportsDir: join(outboxDir, 'reports'),
    dbPath: join(jobsDir, 'topup.db'),
    configFile: hasFile ? configFile : null,
    apiUrl,
    sandbox: apiUrl === null,
    apiKey: apiKey === '' ? SANDBOX_DEFAULT_KEY : apiKey,
    authHeader: auth,
    rateLimits: parseRateLimits(env.TOPUP_RATE_LIMITS!),
    rateLimitsGiven: (overrides.TOPUP_RATE_LIMITS ?? environment.TOPUP_RATE_LIMITS ?? fromFile.TOPUP_RATE_LIMITS ?? '').trim() !== '',
    rateMarginMs: int(env, 'TOPUP_RATE_MARGIN_MS', 0, 10_000),
    rateWindowMode: windowMode(env.TOPUP_RATE_WINDOW_MODE!),
    pollIntervalMs: int(env, 'TOPUP_POLL_INTERVAL_MS', 100, 3_600_000),
    requestTimeoutMs: int(env, 'TOPUP_REQUEST_TIMEOUT_MS', 100, 600_000),
    reviewAfterMs: int(env, 'TOPUP_REVIEW_AFTER_MS', 1_000, 30 * 86_400_000),
    reviewRecheckMs: int(env, 'TOPUP_REVIEW_RECHECK_DAYS', 0, 365) * 86_400_000,
    retryAfterMaxMs: int(env, 'TOPUP_RETRY_AFTER_MAX_MS', 1_000, 86_400_000),
    repeatWindowMs: repeatWindow(env.TOPUP_REPEAT_WINDOW!),
    ipFamily: ipFamily(env.TOPUP_IP_FAMILY!),
    settleMs: int(env, 'TOPUP_SETTLE_MS', 0, 600_000),
    partialResultMs: int(env, 'TOPUP_PARTIAL_RESULT_MS', 100, 86_400_000),
    logLevel: level as Config['logLevel'],
    maxInFlight: int(env, 'TOPUP_MAX_IN_FLIGHT', 1, 1000),
    heap: heap(env.TOPUP_HEAP!),
    catalogMaxAgeMs: int(env, 'TOPUP_CATALOG_MAX_AGE_MS', 1000, 86_400_000),
    sandboxBalanceUsd: money(env, 'TOPUP_SANDBOX_BALANCE_USD') ?? 1000,
    sandboxBalanceSet: (overrides.TOPUP_SANDBOX_BALANCE_USD ?? environment.TOPUP_SANDBOX_BALANCE_USD ?? fromFile.TOPUP_SANDBOX_BALANCE_USD ?? '').trim() !== '',
    sandboxAnswers: sandboxAnswers(env.TOPUP_SANDBOX_ANSWERS!),
    lowBalanceUsd: money(env, 'TOPUP_LOW_BALANCE_USD'),
    schedules: {
      balanceReport: schedule(env, 'TOPUP_BALANCE_REPORT_CRON'),
      historyExport: schedule(env, 'TOPUP_HISTORY_EXPORT_CRON'),
      reconcile: schedule(env, 'TOPUP_RECONCILE_CRON'),
      lowBalance: schedule(env, 'TOPUP_LOW_BALANCE_CRON'),
    },
    timeZone: parseTimeZone(env.TOPUP_TIME_ZONE!),
    webhookUrl,
    telegram: botToken ? { botToken, chatId, apiBase: url(env, 'TOPUP_TELEGRAM_API_BASE')! } : null,
    console: consoleSettings(env, home, credDir),
    orderApi: orderApiSettings(env, home, credDir),
    backup: backupSettings(env, home),
    standby: standbySettings(env, home),
    playerChecks: playerCheckSettings(env),
  };
  return Object.freeze(withAccounts(config, accountsFile, given('TOPUP_RATE_LIMITS')));
}
