/**
 * The console's settings (TOPUP_CONSOLE, TOPUP_CONSOLE_TOKEN, TOPUP_CONSOLE_TOKEN_FILE,
 * TOPUP_CONSOLE_READ_ONLY, TOPUP_CONSOLE_UPLOAD_MB), read by config/config.ts with the others: a bad
 * value is a ConfigError naming the setting, like every other setting.
 *
 * The console shows balances and batches and can place orders (Submit, Retry): reachable from
 * beyond this machine, it must not be open to anyone who can reach the port. So an address other
 * than loopback without a token is refused at start, with the fix in the message.
 */
import { isIP } from 'node:net';
import { ConfigError } from '../kernel/errors.js';
import { secretSetting } from './parse.js';

export interface ConsoleSettings {
  /** As given: 127.0.0.1, ::1, 0.0.0.0, a LAN address or a host name. */
  host: string;
  /** 0: any free port (the log names the one taken). */
  port: number;
  /** Only this machine can connect (127.0.0.0/8, ::1, localhost). */
  loopback: boolean;
  /** Required to log in (and as a Bearer token for /metrics) when set; required beyond loopback. */
  token: string | null;
  /** TOPUP_CONSOLE_READ_ONLY=1: every request that is not GET/HEAD is refused. */
  readOnly: boolean;
  uploadMaxBytes: number;
}

export const CONSOLE_DEFAULTS = {
  TOPUP_CONSOLE: '127.0.0.1:8377',
  TOPUP_CONSOLE_TOKEN: '',
  TOPUP_CONSOLE_TOKEN_FILE: '',
  TOPUP_CONSOLE_READ_ONLY: '0',
  TOPUP_CONSOLE_UPLOAD_MB: '32',
} as const;

/** A token shorter than this can be guessed by anyone who can reach the port. */
const MIN_TOKEN = 16;

export function isLoopbackHost(host: string): boolean {
  const h = host.toLowerCase().replace(/^\[|\]$/g, '');
  if (h === 'localhost' || h === '::1' || h === '0:0:0:0:0:0:0:1') return true;
  return isIP(h) === 4 && h.startsWith('127.');
}

function address(raw: string): { host: string; port: number } {
  const text = raw.trim();
  const example = 'examples: 127.0.0.1:8377, 8377, [::1]:8377, 0.0.0.0:8377, or off';
  let host = '127.0.0.1';
  let portText = text;
  const v6 = /^\[([0-9a-fA-F:.]+)\]:(\d+)$/.exec(text);
  const v4 = /^([A-Za-z0-9.-]+):(\d+)$/.exec(text);
  if (v6) {
    host = v6[1]!;
    portText = v6[2]!;
    if (isIP(host) !== 6) throw new ConfigError('TOPUP_CONSOLE', `"${raw}": ${host} is not an IPv6 address (${example})`);
  } else if (v4) {
    host = v4[1]!;
    portText = v4[2]!;
  } else if (!/^\d+$/.test(text)) {
    throw new ConfigError('TOPUP_CONSOLE', `"${raw}" is not host:port (${example})`);
  }
  const port = Number(portText);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new ConfigError('TOPUP_CONSOLE', `"${raw}": port ${portText} is out of range (0..65535)`);
  return { host, port };
}

function flag(raw: string, name: string): boolean {
  const v = raw.trim().toLowerCase();
  if (['1', 'true', 'yes', 'on'].includes(v)) return true;
  if (['', '0', 'false', 'no', 'off'].includes(v)) return false;
  throw new ConfigError(name, `must be 1 or 0 (true/false, yes/no), not "${raw}"`);
}

function token(env: Record<string, string>, home: string, credDir: string | undefined): string | null {
  // systemd's LoadCredential=topup-console-token:… hands it over the way the API key is.
  return secretSetting(env, 'TOPUP_CONSOLE_TOKEN', home, credDir, 'topup-console-token', MIN_TOKEN, 'the token');
}

export function consoleSettings(env: Record<string, string>, home: string, credDir: string | undefined): ConsoleSettings | null {
  const raw = env.TOPUP_CONSOLE!.trim();
  if (/^(off|false|no|0|disabled)$/i.test(raw)) return null;
  const { host, port } = address(raw);
  const loopback = isLoopbackHost(host);
  const tok = token(env, home, credDir);
  if (!loopback && tok === null) {
    throw new ConfigError(
      'TOPUP_CONSOLE',
      `${raw} lets other machines reach the console, which can place orders: set TOPUP_CONSOLE_TOKEN or TOPUP_CONSOLE_TOKEN_FILE (at least ${MIN_TOKEN} characters), or bind 127.0.0.1 and reach it through an SSH tunnel`,
    );
  }
  const mb = Number(env.TOPUP_CONSOLE_UPLOAD_MB!.trim());
  if (!Number.isFinite(mb) || mb < 1 || mb > 1024) throw new ConfigError('TOPUP_CONSOLE_UPLOAD_MB', `"${env.TOPUP_CONSOLE_UPLOAD_MB}" must be a number of MB between 1 and 1024`);
  return { host, port, loopback, token: tok, readOnly: flag(env.TOPUP_CONSOLE_READ_ONLY!, 'TOPUP_CONSOLE_READ_ONLY'), uploadMaxBytes: Math.round(mb * 1024 * 1024) };
}
