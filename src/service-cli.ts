#!/usr/bin/env node
/**
 * `topup` as the systemd service sees it, for deploy/topup-cli.sh (run as the service user): the
 * settings of the service's EnvironmentFile= read with systemd's own rules (kernel/systemd-env.ts,
 * never a shell), the service's credentials in a $CREDENTIALS_DIRECTORY as LoadCredential= gives
 * them, then the ordinary CLI in this same process.
 *
 * The wrapper passes what deploy/topup.service says:
 *   TOPUP_SERVICE_ENV_FILE     EnvironmentFile= (a leading `-`: the file may be absent, as in systemd)
 *   TOPUP_SERVICE_CREDENTIALS  LoadCredential= entries, `name:/path` separated by spaces
 * No key is copied or put in the environment: the credentials folder holds links to the key files
 * (private to this user, removed at exit), so accounts.toml's `LoadCredential=<account>:…` keys,
 * the single account's `topup-api-key` and the console's token all resolve as in the service, and a
 * home with accounts.toml works (TOPUP_API_KEY_FILE beside it would be a second truth, exit 3).
 */
import { mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseEnvironmentFile } from './kernel/systemd-env.js';
import { ExitCode } from './kernel/exit-codes.js';

function fail(message: string): never {
  process.stderr.write(`topup: ${message}\n`);
  process.exit(ExitCode.Config);
}

const envSetting = process.env.TOPUP_SERVICE_ENV_FILE ?? '';
const credSetting = process.env.TOPUP_SERVICE_CREDENTIALS ?? '';
delete process.env.TOPUP_SERVICE_ENV_FILE;
delete process.env.TOPUP_SERVICE_CREDENTIALS;

for (const entry of envSetting.split(/\s+/).filter((e) => e !== '')) {
  const optional = entry.startsWith('-');
  const path = optional ? entry.slice(1) : entry;
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'error';
    if (optional && code === 'ENOENT') continue;
    fail(`the service's environment file ${path} cannot be read (${code})`);
  }
  const { vars, ignored } = parseEnvironmentFile(text);
  for (const what of ignored) process.stderr.write(`topup: ${path}: ${what}: not a variable name, ignored (as systemd does)\n`);
  // systemd: EnvironmentFile= wins over Environment= (TOPUP_HOME, NODE_ENV the wrapper set).
  Object.assign(process.env, vars);
}

const credentials = credSetting.split(/\s+/).filter((e) => e !== '');
if (credentials.length > 0) {
  const dir = mkdtempSync(join(tmpdir(), 'topup-credentials-'));
  process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
  for (const entry of credentials) {
    const at = entry.indexOf(':');
    const name = entry.slice(0, at);
    if (at <= 0 || !/^[A-Za-z0-9_.-]+$/.test(name) || !entry.slice(at + 1).startsWith('/')) {
      fail(`TOPUP_SERVICE_CREDENTIALS: "${entry}" is not name:/absolute/path (as LoadCredential= takes it)`);
    }
    symlinkSync(entry.slice(at + 1), join(dir, name));
  }
  process.env.CREDENTIALS_DIRECTORY = dir;
}

// The CLI reads process.argv as [node, its script, ...arguments]: keep that shape.
process.argv = [process.argv[0]!, fileURLToPath(new URL('./cli.js', import.meta.url)), ...process.argv.slice(2)];
await import('./cli.js');
