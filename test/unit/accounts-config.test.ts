/**
 * Issue 22, item 1: the accounts file (config/accounts.ts, docs/accounts.md). `accounts.toml` in the
 * home (or TOPUP_ACCOUNTS_FILE; JSON too), validated once at start, every error naming the file, the
 * account and the key, and never a key's value. Without the file, TOPUP_API_URL / TOPUP_API_KEY are
 * one account named `default`, as before.
 */
import { chmodSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig, SANDBOX_DEFAULT_KEY, secretsOf, type Config } from '../../src/config/config.js';
import { ConfigError } from '../../src/kernel/errors.js';
import { cliEnv, releaseAll, runCli, tempHome } from '../e2e/harness.js';

const KEY_A = 'canary-main-KEY-1a2b3c';
const KEY_B = 'canary-second-KEY-4d5e6f';

/** A home with the given files (path → text), each 0600 unless a mode is given. */
function home(files: Record<string, string> = {}, modes: Record<string, number> = {}): string {
  const dir = mkdtempSync(join(tmpdir(), 'accounts-'));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), text);
    chmodSync(join(dir, path), modes[path] ?? 0o600);
  }
  return dir;
}

const TWO = `
routing = "priority"
max_queue_delay = "45s"

[[account]]
name = "main"
url = "https://api.supplier-a.example/"
key_file = "keys/main.key"
rate_limits = "10/1s,80/1m"

[[account]]
name = "second"
url = "https://api.supplier-b.example"
key = "${KEY_B}"
auth_header = "bearer"
ip_family = "auto"

[[pack]]
main = { slug = "mobile-legends", pack = "86 Diamonds" }
second = { pid = "ML86" }
`;

function load(dir: string, env: Record<string, string> = {}, opts: { requireKey?: boolean } = {}): Config {
  return loadConfig({ TOPUP_HOME: dir, ...env }, {}, opts);
}

/** The ConfigError loading this home throws: its setting and message, which must not hold a key. */
function refused(dir: string, env: Record<string, string> = {}): { setting: string; message: string } {
  try {
    load(dir, env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    const { setting, message } = err as ConfigError;
    expect(message).not.toContain(KEY_A);
    expect(message).not.toContain(KEY_B);
    expect(message).not.toContain('canary');
    return { setting, message };
  }
  throw new Error('expected the accounts file to be refused');
}

/** An accounts.toml with one account "main" (key_file keys/main.key): `extra` lines in it, `top` lines above it, `after` below. */
function oneAccount(extra = '', top = '', after = ''): Record<string, string> {
  return {
    'accounts.toml': `${top}\n[[account]]\nname = "main"\nurl = "https://api.supplier-a.example"\nkey_file = "keys/main.key"\n${extra}\n${after}`,
    'keys/main.key': `${KEY_A}\n`,
  };
}

describe('accounts.toml', () => {
  it('two accounts in file order: key_file relative to the home, inline key, limits given or the spec\'s, defaults from the settings, pack mapping', () => {
    const dir = home({ 'accounts.toml': TWO, 'keys/main.key': `${KEY_A}\n` });
    const c = load(dir);
    expect(c.accounts.file).toBe(join(dir, 'accounts.toml'));
    expect(c.accounts.routing).toBe('priority');
    expect(c.accounts.maxQueueDelayMs).toBe(45_000);
    expect(c.accounts.accounts).toEqual([
      {
        name: 'main', url: 'https://api.supplier-a.example', key: KEY_A, authHeader: 'x-api-key',
        rateLimits: [{ limit: 10, windowMs: 1000 }, { limit: 80, windowMs: 60_000 }], rateLimitsGiven: true, rateLimitsFrom: 'accounts.toml: account "main": rate_limits', ipFamily: 4,
      },
      {
        name: 'second', url: 'https://api.supplier-b.example', key: KEY_B, authHeader: 'bearer',
        rateLimits: [{ limit: 40, windowMs: 1000 }, { limit: 200, windowMs: 60_000 }], rateLimitsGiven: false, rateLimitsFrom: null, ipFamily: 'auto',
      },
    ]);
    expect(c.accounts.packAliases).toEqual([{ at: { main: { slug: 'mobile-legends', pack: '86 Diamonds' }, second: { pid: 'ML86' } } }]);
    // The code that still reads the single account sees the first one.
    expect([c.apiUrl, c.apiKey, c.sandbox, c.authHeader, c.ipFamily]).toEqual(['https://api.supplier-a.example', KEY_A, false, 'x-api-key', 4]);
    expect(c.rateLimits).toEqual([{ limit: 10, windowMs: 1000 }, { limit: 80, windowMs: 60_000 }]);
    expect(Object.isFrozen(c.accounts.accounts[1])).toBe(true);
    expect(Object.isFrozen(c.accounts.packAliases[0]!.at)).toBe(true);
  });

  it('JSON, the same shape: by the .json name (TOPUP_ACCOUNTS_FILE, relative to the home) or by a leading {', () => {
    const doc = {
      routing: 'spread',
      account: [
        { name: 'main', url: 'https://a.example', key_file: 'keys/main.key' },
        { name: 'second', url: 'https://b.example', key: KEY_B, rate_limits: '5/1s' },
      ],
      pack: [{ main: { pid: '1' }, second: { pid: '2' } }],
    };
    const dir = home({ 'conf/accounts.json': JSON.stringify(doc), 'keys/main.key': KEY_A });
    const c = load(dir, { TOPUP_ACCOUNTS_FILE: 'conf/accounts.json' });
    expect(c.accounts.file).toBe(join(dir, 'conf', 'accounts.json'));
    expect(c.accounts.routing).toBe('spread');
    expect(c.accounts.maxQueueDelayMs).toBe(30_000);
    expect(c.accounts.accounts.map((a) => [a.name, a.key, a.rateLimitsGiven])).toEqual([['main', KEY_A, false], ['second', KEY_B, true]]);

    const dir2 = home({ 'accounts.toml': `  ${JSON.stringify(doc)}`, 'keys/main.key': KEY_A });
    expect(load(dir2).accounts.accounts.map((a) => a.name)).toEqual(['main', 'second']);
  });

  it('TOPUP_AUTH_HEADER, TOPUP_IP_FAMILY and a given TOPUP_RATE_LIMITS are every account\'s default', () => {
    const c = load(home(oneAccount()), { TOPUP_AUTH_HEADER: 'bearer', TOPUP_IP_FAMILY: '6', TOPUP_RATE_LIMITS: '7/1s' });
    expect(c.accounts.accounts[0]).toMatchObject({ authHeader: 'bearer', ipFamily: 6, rateLimits: [{ limit: 7, windowMs: 1000 }], rateLimitsGiven: true });
  });

  it('a key from systemd\'s $CREDENTIALS_DIRECTORY/<account name> when the account gives none', () => {
    const creds = home({ main: `${KEY_A}\n` });
    const dir = home({ 'accounts.toml': '[[account]]\nname = "main"\nurl = "https://a.example"\n' });
    expect(load(dir, { CREDENTIALS_DIRECTORY: creds }).accounts.accounts[0]!.key).toBe(KEY_A);
  });

  it('secretsOf lists every account\'s key (the log scrubber and the console use it)', () => {
    const c = load(home({ 'accounts.toml': TWO, 'keys/main.key': KEY_A }));
    expect(secretsOf(c)).toContain(KEY_A);
    expect(secretsOf(c)).toContain(KEY_B);
  });

  it('a command that never calls the API (requireKey: false) loads an account without a key', () => {
    const dir = home({ 'accounts.toml': '[[account]]\nname = "main"\nurl = "https://a.example"\n' });
    expect(load(dir, {}, { requireKey: false }).accounts.accounts[0]!.key).toBe('');
    expect(refused(dir)).toMatchObject({ setting: 'accounts.toml: account "main": key' });
  });
});

describe('without the file: one account named default, as before', () => {
  it('from TOPUP_API_URL / TOPUP_API_KEY, TOPUP_RATE_LIMITS given or not', () => {
    const c = load(home(), { TOPUP_API_URL: 'https://api.example.test/', TOPUP_API_KEY: KEY_A, TOPUP_AUTH_HEADER: 'bearer', TOPUP_IP_FAMILY: 'auto' });
    expect(c.accounts).toEqual({
      file: null,
      routing: 'cheapest',
      accounts: [{
        name: 'default', url: 'https://api.example.test', key: KEY_A, authHeader: 'bearer',
        rateLimits: [{ limit: 40, windowMs: 1000 }, { limit: 200, windowMs: 60_000 }], rateLimitsGiven: false, rateLimitsFrom: null, ipFamily: 'auto',
      }],
      packAliases: [],
      maxQueueDelayMs: 30_000,
    });
    const dir = home({ 'topup.conf': 'TOPUP_RATE_LIMITS=10/1s,80/1m\n' });
    const given = load(dir).accounts.accounts[0]!;
    expect(given).toMatchObject({ rateLimits: [{ limit: 10, windowMs: 1000 }, { limit: 80, windowMs: 60_000 }], rateLimitsGiven: true });
  });

  it('the in-process sandbox: url null, the sandbox key', () => {
    const c = load(home());
    expect(c.accounts.accounts).toEqual([expect.objectContaining({ name: 'default', url: null, key: SANDBOX_DEFAULT_KEY })]);
    expect(c.sandbox).toBe(true);
  });
});

describe('every mistake is refused, naming the file, the account and the key, never the key itself', () => {
  it.each<[string, Record<string, string>, string, RegExp]>([
    ['a key_file that cannot be read', { 'accounts.toml': TWO.replace('keys/main.key', 'keys/nothere.key') }, 'accounts.toml: account "main": key_file', /cannot read keys\/nothere\.key \(ENOENT\)/],
    ['an empty key file', { ...oneAccount(), 'keys/main.key': '\n' }, 'accounts.toml: account "main": key_file', /is empty/],
    ['an unknown key in an account (a typo)', oneAccount('rate_limit = "10/1s"'), 'accounts.toml: account "main": rate_limit', /not a key here \(did you mean rate_limits\?\)/],
    ['an unknown key at the top', oneAccount('', 'rout = "priority"'), 'accounts.toml: rout', /did you mean routing\?/],
    ['an unknown key in a pack mapping', { ...oneAccount(), 'accounts.toml': `${TWO}\n[[pack]]\nmain = { slg = "x", pack = "y" }\nsecond = { pid = "1" }\n` }, 'accounts.toml: pack 2: main: slg', /did you mean slug\?/],
    ['a pack mapping naming an unknown account', { ...oneAccount(), 'accounts.toml': `${TWO}\n[[pack]]\nmain = { pid = "1" }\nthird = { pid = "2" }\n` }, 'accounts.toml: pack 2: third', /names no account \(the accounts: main, second\)/],
    ['a pack mapping by half a name', { ...oneAccount(), 'accounts.toml': `${TWO}\n[[pack]]\nmain = { slug = "x" }\nsecond = { pid = "2" }\n` }, 'accounts.toml: pack 2: main', /pid alone, or by slug and pack together/],
    ['a pack mapping of one account', { ...oneAccount(), 'accounts.toml': `${TWO}\n[[pack]]\nmain = { pid = "1" }\n` }, 'accounts.toml: pack 2', /at least two accounts/],
    ['the same name twice', { ...oneAccount(), 'accounts.toml': `${TWO}\n[[account]]\nname = "main"\nurl = "https://c.example"\nkey = "other-key"\n` }, 'accounts.toml: account "main": name', /is used by account 1 too/],
    ['a name that is not one', oneAccount('', '', '[[account]]\nname = "Second Account"\nurl = "https://b.example"\nkey_file = "keys/main.key"'), 'accounts.toml: account 2: name', /"Second Account" is not a name/],
    ['a name too long', oneAccount('', '', `[[account]]\nname = "${'a'.repeat(33)}"\nurl = "https://b.example"\nkey_file = "keys/main.key"`), 'accounts.toml: account 2: name', /is not a name/],
    ['an account without a name', oneAccount('', '', '[[account]]\nurl = "https://b.example"'), 'accounts.toml: account 2: name', /is required/],
    ['an account without a url', oneAccount('', '', '[[account]]\nname = "b"\nkey_file = "keys/main.key"'), 'accounts.toml: account "b": url', /is required/],
    ['a url that is not http(s)', oneAccount('', '', '[[account]]\nname = "b"\nurl = "ftp://b.example"\nkey_file = "keys/main.key"'), 'accounts.toml: account "b": url', /must be an http\(s\) URL, not ftp:/],
    ['a url that is not a url', oneAccount('', '', '[[account]]\nname = "b"\nurl = "b.example"\nkey_file = "keys/main.key"'), 'accounts.toml: account "b": url', /is not a URL/],
    ['the same account twice (same url, same key)', oneAccount('', '', '[[account]]\nname = "b"\nurl = "https://api.supplier-a.example"\nkey_file = "keys/main.key"'), 'accounts.toml: account "b": key', /is account "main"'s key at the same url/],
    ['key and key_file both', oneAccount(`key = "${KEY_A}"`), 'accounts.toml: account "main": key', /and key_file are both given/],
    ['a key with whitespace', { 'accounts.toml': `[[account]]\nname = "main"\nurl = "https://a.example"\nkey = "${KEY_A} ${KEY_B}"\n` }, 'accounts.toml: account "main": key', /contains whitespace/],
    ['a key file with whitespace inside', { ...oneAccount(), 'keys/main.key': `${KEY_A} x\n` }, 'accounts.toml: account "main": key_file', /contains whitespace/],
    ['a key that is not a string', { 'accounts.toml': '[[account]]\nname = "main"\nurl = "https://a.example"\nkey = 12345678\n' }, 'accounts.toml: account "main": key', /must be a string/],
    ['a key of the whole file written below an [[account]] (TOML puts it in that account)', oneAccount('routing = "priority"'), 'accounts.toml: account "main": routing', /belongs to the whole file: write it above the first \[\[account\]\]/],
    ['bad rate_limits', oneAccount('rate_limits = "10 per second"'), 'accounts.toml: account "main": rate_limits', /is not calls\/duration/],
    ['a bad auth_header', oneAccount('auth_header = "cookie"'), 'accounts.toml: account "main": auth_header', /must be "x-api-key" or "bearer"/],
    ['a bad ip_family', oneAccount('ip_family = 5'), 'accounts.toml: account "main": ip_family', /must be 4, 6 or auto/],
    ['a routing that is none', oneAccount('', 'routing = "fastest"'), 'accounts.toml: routing', /must be one of cheapest, priority, spread, not "fastest"/],
    ['a bad max_queue_delay', oneAccount('', 'max_queue_delay = "soon"'), 'accounts.toml: max_queue_delay', /is not a duration/],
    ['no account', { 'accounts.toml': 'routing = "cheapest"\n' }, 'accounts.toml: account', /needs at least one \[\[account\]\]/],
    ['[account] for [[account]]', { 'accounts.toml': '[account]\nname = "main"\nurl = "https://a.example"\n' }, 'accounts.toml: account', /write \[\[account\]\]/],
    ['TOML that does not parse (its lines are not quoted: they may hold a key)', { 'accounts.toml': `[[account]]\nname = "main"\nkey = "${KEY_A}\nurl = "https://a.example"\n` }, 'accounts.toml', /is not valid TOML: line 3, column \d+/],
    ['JSON that does not parse', { 'accounts.json': `{"account": [{"name": "main", "key": "${KEY_A}"` }, 'accounts.json', /is not valid JSON/],
    ['JSON that does not parse, in the middle', { 'accounts.json': `{"account": [{"name": "main", "key": "${KEY_A}" "url": 1}]}` }, 'accounts.json', /is not valid JSON \(line 1, column \d+/],
    ['JSON of the wrong shape', { 'accounts.json': '[1]' }, 'accounts.json', /must be a JSON object/],
  ])('%s', (_what, files, setting, message) => {
    const dir = home({ 'keys/main.key': '', ...files });
    const env: Record<string, string> = 'accounts.json' in files ? { TOPUP_ACCOUNTS_FILE: 'accounts.json' } : {};
    const err = refused(dir, env);
    expect(err.setting).toBe(setting);
    expect(err.message).toMatch(message);
  });

  it('TOPUP_ACCOUNTS_FILE naming a file that does not exist', () => {
    const err = refused(home(), { TOPUP_ACCOUNTS_FILE: 'nothere.toml' });
    expect(err.setting).toBe('TOPUP_ACCOUNTS_FILE');
    expect(err.message).toMatch(/nothere\.toml does not exist/);
  });

  it.each(['TOPUP_API_URL', 'TOPUP_API_KEY', 'TOPUP_API_KEY_FILE'])('%s set beside the file: one source of truth', (name) => {
    const err = refused(home(oneAccount()), { [name]: name === 'TOPUP_API_URL' ? 'https://x.example' : 'something' });
    expect(err.setting).toBe(name);
    expect(err.message).toMatch(/cannot be set with accounts\.toml/);
    // Empty is unset (the test harness's cliEnv sets TOPUP_API_KEY; a test with a file passes '').
    expect(load(home(oneAccount()), { [name]: '' }).accounts.accounts).toHaveLength(1);
  });

  it('a file holding key = … readable by others is refused like ssh refuses a private key (chmod 600); key_file alone may be 0644', () => {
    const inline = { 'accounts.toml': TWO, 'keys/main.key': KEY_A };
    const err = refused(home(inline, { 'accounts.toml': 0o644 }));
    expect(err.setting).toBe('accounts.toml');
    expect(err.message).toMatch(/holds an API key \(key = …\) and can be read by others \(mode 0644\): run chmod 600 .*accounts\.toml/);
    expect(refused(home(inline, { 'accounts.toml': 0o640 })).message).toMatch(/mode 0640/);
    expect(load(home(inline, { 'accounts.toml': 0o600 })).accounts.accounts).toHaveLength(2);
    expect(load(home(oneAccount(), { 'accounts.toml': 0o644 })).accounts.accounts).toHaveLength(1);
  });
});

describe('the real CLI', () => {
  afterAll(releaseAll);

  it('topup doctor with a bad accounts.toml: exit 3, the message names the account and the key, no key in any output', async () => {
    const h = tempHome();
    writeFileSync(join(h.dir, 'accounts.toml'), TWO.replace('keys/main.key', 'keys/missing.key'), { mode: 0o600 });
    const r = await runCli(['doctor'], cliEnv(h, null, { TOPUP_API_KEY: '' }));
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('accounts.toml: account "main": key_file: cannot read keys/missing.key (ENOENT)');
    expect(r.stdout + r.stderr).not.toContain(KEY_B);

    // The same home with the test key still set: the second source of truth is named.
    const r2 = await runCli(['doctor'], cliEnv(h, null));
    expect(r2.code).toBe(3);
    expect(r2.stderr).toMatch(/TOPUP_API_KEY: cannot be set with accounts\.toml/);
    expect(r2.stdout + r2.stderr).not.toContain(KEY_B);
  });
});
