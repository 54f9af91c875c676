import { mkdtempSync, writeFileSync } from 'node:fs';
import { Writable } from 'node:stream';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig, parseRateLimits, SANDBOX_DEFAULT_KEY, secretsOf } from '../../src/config/config.js';
import { createLogger } from '../../src/kernel/log.js';
import { ConfigError } from '../../src/kernel/errors.js';

const home = () => mkdtempSync(join(tmpdir(), 'cfg-'));

function fails(env: Record<string, string>, setting: string): ConfigError {
  try {
    loadConfig({ TOPUP_HOME: home(), ...env });
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).setting).toBe(setting);
    expect((err as ConfigError).message).toContain(setting);
    return err as ConfigError;
  }
  throw new Error(`expected ${setting} to be refused`);
}

describe('config', () => {
  it('defaults: sandbox mode, 40/1s + 200/1m, 5 s polling, home folders under TOPUP_HOME', () => {
    const h = home();
    const c = loadConfig({ TOPUP_HOME: h });
    expect(c.sandbox).toBe(true);
    expect(c.apiKey).toBe(SANDBOX_DEFAULT_KEY);
    expect(c.rateLimits).toEqual([
      { limit: 40, windowMs: 1000 },
      { limit: 200, windowMs: 60_000 },
    ]);
    expect(c.pollIntervalMs).toBe(5000);
    expect(c.inboxDir).toBe(join(h, 'inbox'));
    expect(c.outboxDir).toBe(join(h, 'outbox'));
    expect(c.dbPath).toBe(join(h, 'jobs', 'topup.db'));
    expect(Object.isFrozen(c)).toBe(true);
  });

  it('parses every duration form in TOPUP_RATE_LIMITS', () => {
    expect(parseRateLimits('5/500ms, 100/10s,1000/1m,9000/1h')).toEqual([
      { limit: 5, windowMs: 500 },
      { limit: 100, windowMs: 10_000 },
      { limit: 1000, windowMs: 60_000 },
      { limit: 9000, windowMs: 3_600_000 },
    ]);
  });

  it.each([
    [{ TOPUP_RATE_LIMITS: '40 per second' }, 'TOPUP_RATE_LIMITS'],
    [{ TOPUP_RATE_LIMITS: '0/1s' }, 'TOPUP_RATE_LIMITS'],
    [{ TOPUP_RATE_LIMITS: '40/1 fortnight' }, 'TOPUP_RATE_LIMITS'],
    [{ TOPUP_POLL_INTERVAL_MS: 'fast' }, 'TOPUP_POLL_INTERVAL_MS'],
    [{ TOPUP_POLL_INTERVAL_MS: '5' }, 'TOPUP_POLL_INTERVAL_MS'],
    [{ TOPUP_LOG_LEVEL: 'loud' }, 'TOPUP_LOG_LEVEL'],
    [{ TOPUP_API_URL: 'ftp://x' }, 'TOPUP_API_URL'],
    [{ TOPUP_API_URL: 'not a url' }, 'TOPUP_API_URL'],
    [{ TOPUP_API_URL: 'https://api.example.test' }, 'TOPUP_API_KEY'],
    [{ TOPUP_API_KEY_FILE: '/nonexistent/key' }, 'TOPUP_API_KEY_FILE'],
    [{ TOPUP_AUTH_HEADER: 'cookie' }, 'TOPUP_AUTH_HEADER'],
    [{ TOPUP_BALANCE_REPORT_CRON: 'every hour' }, 'TOPUP_BALANCE_REPORT_CRON'],
    [{ TOPUP_TELEGRAM_BOT_TOKEN: '123:abc' }, 'TOPUP_TELEGRAM_CHAT_ID'],
    [{ TOPUP_LOW_BALANCE_USD: '-3' }, 'TOPUP_LOW_BALANCE_USD'],
  ])('refuses %o naming %s', (env, setting) => {
    fails(env as Record<string, string>, setting);
  });

  it('reads topup.conf in the home folder; the environment wins', () => {
    const h = home();
    writeFileSync(join(h, 'topup.conf'), 'TOPUP_POLL_INTERVAL_MS=7000\nTOPUP_RATE_LIMITS=10/1s\n# comment\n');
    const c = loadConfig({ TOPUP_HOME: h, TOPUP_POLL_INTERVAL_MS: '3000' });
    expect(c.pollIntervalMs).toBe(3000);
    expect(c.rateLimits).toEqual([{ limit: 10, windowMs: 1000 }]);
  });

  it('rateLimitsGiven: TOPUP_RATE_LIMITS given in the environment or topup.conf is kept; absent, the gate learns (the default is not "given")', () => {
    expect(loadConfig({ TOPUP_HOME: home() }).rateLimitsGiven).toBe(false);
    expect(loadConfig({ TOPUP_HOME: home(), TOPUP_RATE_LIMITS: '40/1s,200/1m' }).rateLimitsGiven).toBe(true);
    const h = home();
    writeFileSync(join(h, 'topup.conf'), 'TOPUP_RATE_LIMITS=10/1s\n');
    expect(loadConfig({ TOPUP_HOME: h }).rateLimitsGiven).toBe(true);
  });

  it('names an unknown TOPUP_ setting in the config file (a typo must not pass silently)', () => {
    const h = home();
    writeFileSync(join(h, 'topup.conf'), 'TOPUP_POLL_INTERVALL_MS=7000\n');
    expect(() => loadConfig({ TOPUP_HOME: h })).toThrow(/TOPUP_POLL_INTERVALL_MS/);
  });

  it('reads the key from TOPUP_API_KEY_FILE relative to the home folder, and from systemd credentials', () => {
    const h = home();
    writeFileSync(join(h, 'key.txt'), 'file-key-123456\n');
    expect(loadConfig({ TOPUP_HOME: h, TOPUP_API_URL: 'http://127.0.0.1:9', TOPUP_API_KEY_FILE: 'key.txt' }).apiKey).toBe('file-key-123456');
    const cred = home();
    writeFileSync(join(cred, 'topup-api-key'), 'cred-key-123456');
    expect(loadConfig({ TOPUP_HOME: h, TOPUP_API_URL: 'http://127.0.0.1:9', CREDENTIALS_DIRECTORY: cred }).apiKey).toBe('cred-key-123456');
  });
});

describe('the docs name every setting', () => {
  it('each name in SETTINGS appears in docs/settings.md or docs/reports.md (the settings table, or the page of its feature)', async () => {
    const { SETTINGS } = await import('../../src/config/config.js');
    const { readFileSync } = await import('node:fs');
    const docs = ['../../docs/settings.md', '../../docs/reports.md'].map((f) => readFileSync(new URL(f, import.meta.url), 'utf8')).join('\n');
    expect(Object.keys(SETTINGS).filter((name) => !docs.includes(`\`${name}\``))).toEqual([]);
  });
});

describe('secrets', () => {
  it('one list of the values no log may show (daemon, commands and console all scrub it): key, bot token, console token', async () => {
    const home = mkdtempSync(join(tmpdir(), 'topup-secrets-'));
    const config = loadConfig({
      TOPUP_HOME: home,
      TOPUP_API_URL: 'https://api.example.test',
      TOPUP_API_KEY: 'key-canary-5f1e',
      TOPUP_TELEGRAM_BOT_TOKEN: '123:bot-canary-77aa',
      TOPUP_TELEGRAM_CHAT_ID: '42',
      TOPUP_CONSOLE_TOKEN: 'console-canary-0b9d-0123456789abcdef',
      TOPUP_ORDER_API_TOKEN: 'order-api-canary-3c4d-0123456789',
      TOPUP_ORDER_WEBHOOK_URL: 'https://shop.example.test/hooks',
      TOPUP_ORDER_WEBHOOK_SECRET: 'webhook-canary-9e8f-0123456789',
    });
    expect(secretsOf(config)).toEqual(['key-canary-5f1e', '123:bot-canary-77aa', 'console-canary-0b9d-0123456789abcdef', 'order-api-canary-3c4d-0123456789', 'webhook-canary-9e8f-0123456789']);
    let text = '';
    const destination = new Writable({ write(chunk, _enc, done) { text += String(chunk); done(); } });
    const log = createLogger({ level: 'info', secrets: secretsOf(config), destination });
    log.warn({ detail: 'sent key-canary-5f1e, bot 123:bot-canary-77aa, token console-canary-0b9d-0123456789abcdef' }, 'canaries');
    await new Promise((r) => setImmediate(r));
    expect(text).toContain('canaries');
    expect(text).not.toMatch(/canary-5f1e|bot-canary|console-canary/);
  });
});
