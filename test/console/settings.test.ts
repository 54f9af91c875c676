/** The console's settings (config/config.ts → config/console-settings.ts) and its file-name rule (uploads.ts). */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { ConfigError, UsageError } from '../../src/kernel/errors.js';
import { safeFileName } from '../../src/console/uploads.js';

const home = () => mkdtempSync(join(tmpdir(), 'cfg-console-'));
const TOKEN = 'a-console-token-of-24-chars';

function refused(env: Record<string, string>, setting: string, text: RegExp): void {
  try {
    loadConfig({ TOPUP_HOME: home(), ...env });
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).setting).toBe(setting);
    expect((err as ConfigError).message).toMatch(text);
    return;
  }
  throw new Error(`expected ${setting} to be refused`);
}

describe('console settings', () => {
  it('defaults to 127.0.0.1:8377, no token, writable, 32 MB uploads; off turns it off', () => {
    expect(loadConfig({ TOPUP_HOME: home() }).console).toEqual({
      host: '127.0.0.1', port: 8377, loopback: true, token: null, readOnly: false, uploadMaxBytes: 32 * 1024 * 1024,
    });
    expect(loadConfig({ TOPUP_HOME: home(), TOPUP_CONSOLE: 'off' }).console).toBeNull();
  });

  it.each([
    ['9000', { host: '127.0.0.1', port: 9000, loopback: true }],
    ['localhost:9000', { host: 'localhost', port: 9000, loopback: true }],
    ['[::1]:9000', { host: '::1', port: 9000, loopback: true }],
    ['127.0.0.2:0', { host: '127.0.0.2', port: 0, loopback: true }],
  ])('reads %s', (value, want) => {
    expect(loadConfig({ TOPUP_HOME: home(), TOPUP_CONSOLE: value }).console).toMatchObject(want);
  });

  it('refuses an address beyond loopback without a token, naming both settings', () => {
    refused({ TOPUP_CONSOLE: '0.0.0.0:8377' }, 'TOPUP_CONSOLE', /lets other machines reach the console.*TOPUP_CONSOLE_TOKEN or TOPUP_CONSOLE_TOKEN_FILE/);
    refused({ TOPUP_CONSOLE: '192.168.1.5:8377' }, 'TOPUP_CONSOLE', /TOPUP_CONSOLE_TOKEN/);
    refused({ TOPUP_CONSOLE: '[::]:8377' }, 'TOPUP_CONSOLE', /TOPUP_CONSOLE_TOKEN/);
    expect(loadConfig({ TOPUP_HOME: home(), TOPUP_CONSOLE: '0.0.0.0:8377', TOPUP_CONSOLE_TOKEN: TOKEN }).console).toMatchObject({ loopback: false, token: TOKEN });
  });

  it('reads the token from TOPUP_CONSOLE_TOKEN_FILE (relative to the home) and refuses a short one', () => {
    const h = home();
    writeFileSync(join(h, 'console-token'), `${TOKEN}\n`);
    expect(loadConfig({ TOPUP_HOME: h, TOPUP_CONSOLE: '0.0.0.0:1', TOPUP_CONSOLE_TOKEN_FILE: 'console-token' }).console?.token).toBe(TOKEN);
    refused({ TOPUP_CONSOLE_TOKEN_FILE: '/nonexistent/token' }, 'TOPUP_CONSOLE_TOKEN_FILE', /cannot read/);
    refused({ TOPUP_CONSOLE_TOKEN: 'short' }, 'TOPUP_CONSOLE_TOKEN', /at least 16 characters/);
  });

  it.each([
    [{ TOPUP_CONSOLE: 'everywhere' }, 'TOPUP_CONSOLE'],
    [{ TOPUP_CONSOLE: '127.0.0.1:70000' }, 'TOPUP_CONSOLE'],
    [{ TOPUP_CONSOLE: '[zz]:1' }, 'TOPUP_CONSOLE'],
    [{ TOPUP_CONSOLE_READ_ONLY: 'maybe' }, 'TOPUP_CONSOLE_READ_ONLY'],
    [{ TOPUP_CONSOLE_UPLOAD_MB: '0' }, 'TOPUP_CONSOLE_UPLOAD_MB'],
    [{ TOPUP_CONSOLE_UPLOAD_MB: 'lots' }, 'TOPUP_CONSOLE_UPLOAD_MB'],
  ])('refuses %o naming %s', (env, setting) => refused(env as Record<string, string>, setting, new RegExp(setting)));

  it('reads TOPUP_CONSOLE_READ_ONLY and TOPUP_CONSOLE_UPLOAD_MB', () => {
    expect(loadConfig({ TOPUP_HOME: home(), TOPUP_CONSOLE_READ_ONLY: 'yes', TOPUP_CONSOLE_UPLOAD_MB: '2.5' }).console).toMatchObject({ readOnly: true, uploadMaxBytes: 2.5 * 1024 * 1024 });
  });
});

describe('uploaded file names', () => {
  it.each([
    ['orders.csv', 'orders.csv'],
    ['../../etc/passwd.csv', 'passwd.csv'],
    ['C:\\Users\\ana\\Desktop\\May orders.xlsx', 'May orders.xlsx'],
    ['.hidden.csv', 'hidden.csv'],
    ['~$lock.xlsx', 'lock.xlsx'],
    ['a\u0000b\u001fc.csv', 'abc.csv'],
    ['<b>x<i>.csv', 'b_x_i_.csv'],
    ['заказы май.CSV', 'заказы май.csv'],
    ['(1) +order, final.txt', '(1) +order, final.txt'],
    [`${'x'.repeat(300)}.tsv`, `${'x'.repeat(116)}.tsv`],
  ])('%s → %s', (given, safe) => expect(safeFileName(given)).toBe(safe));

  it.each(['orders.pdf', '.csv', 'orders.csv.part', 'orders.xls', 'orders', 'orders.csv.exe'])('refuses %s', (given) => {
    expect(() => safeFileName(given)).toThrow(UsageError);
  });
});
