/**
 * deploy/topup-cli.sh, the operator's `topup` for the systemd service, run as a child process (bash)
 * on a temporary home as this user (TOPUP_SERVICE_USER = whoever runs the test, so no sudo):
 * - with accounts.toml in the home every command works (it used to set TOPUP_API_KEY_FILE, which
 *   beside the accounts file is a second truth: exit 3);
 * - the environment file is read with systemd's rules, not by `sh`: a cron line such as
 *   `0 *\/6 * * *` used to fail ("not found") and the setting was lost.
 */
import { describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { ROOT, TEST_KEY, inProcessSandbox, tempHome } from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';

releaseAfterEach();

const WRAPPER = join(ROOT, 'deploy', 'topup-cli.sh');
const SIX_HOURS = '0 */6 * * *';

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** The wrapper as the operator runs it: bash, with a shell's environment that must not leak in. */
function wrapper(args: string[], env: NodeJS.ProcessEnv): Promise<Run> {
  return new Promise((resolve) => {
    execFile('bash', [WRAPPER, ...args], { env: { PATH: process.env.PATH, HOME: process.env.HOME, TOPUP_SERVICE_USER: userInfo().username, TOPUP_SERVICE_NODE: process.execPath, ...env }, timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr });
    });
  });
}

function etcDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'etc-topup-'));
  return dir;
}

describe('deploy/topup-cli.sh', () => {
  it('runs commands in a home with accounts.toml (keys from LoadCredential=, as the service gets them) and keeps a cron line of the environment file', async () => {
    const sb = await inProcessSandbox({ balanceUsd: 432.1 });
    const home = tempHome('wrapper-');
    const etc = etcDir();
    try {
      // The key of account "main" as the README's unit would hand it over: LoadCredential=main:/etc/topup/main.key.
      writeFileSync(join(etc, 'main.key'), `${TEST_KEY}\n`, { mode: 0o640 });
      writeFileSync(join(etc, 'api-key'), 'left-over-single-account-key', { mode: 0o640 });
      writeFileSync(join(home.dir, 'accounts.toml'), `[[account]]\nname = "main"\nurl = "${sb.url}"\n`, { mode: 0o600 });
      writeFileSync(
        join(etc, 'topup.env'),
        [
          '# written for systemd: EnvironmentFile=/etc/topup/topup.env',
          `TOPUP_BALANCE_REPORT_CRON=${SIX_HOURS}`,
          'TOPUP_LOW_BALANCE_USD=100',
          'TOPUP_HISTORY_EXPORT_CRON=off',
          'TOPUP_RECONCILE_CRON=off',
          'TOPUP_CONSOLE=off',
          '',
        ].join('\n'),
        { mode: 0o640 },
      );
      const env = {
        TOPUP_SERVICE_HOME: home.dir,
        TOPUP_SERVICE_ENV_FILE: join(etc, 'topup.env'),
        TOPUP_SERVICE_CREDENTIALS: `topup-api-key:${join(etc, 'api-key')} main:${join(etc, 'main.key')}`,
        TOPUP_SERVICE_PROGRAM: join(ROOT, 'dist', 'service-cli.js'),
        // The operator's own shell settings: the service does not see them, neither may the command.
        TOPUP_API_KEY_FILE: join(etc, 'api-key'),
        TOPUP_HOME: '/nonexistent',
      };
      const balance = await wrapper(['balance'], env);
      expect(balance.stderr).not.toMatch(/not found|cannot be set with/);
      expect(balance.code, balance.stderr).toBe(0);
      expect(balance.stdout).toContain('432.10');
      expect(`${balance.stdout}${balance.stderr}`).not.toContain(TEST_KEY);
      // Every command, not just one: doctor reads the same settings and keys.
      const status = await wrapper(['status'], env);
      expect(status.code, status.stderr).toBe(0);
      const doctor = await wrapper(['doctor'], env);
      expect(doctor.stderr).not.toMatch(/TOPUP_API_KEY_FILE|TOPUP_BALANCE_REPORT_CRON/);
      expect(doctor.stdout).toMatch(/main/);
      // A bad cron line is still refused by the CLI (exit 3): the value reached it as written.
      writeFileSync(join(etc, 'topup.env'), 'TOPUP_BALANCE_REPORT_CRON=0 */6 * * * nonsense\n');
      const bad = await wrapper(['balance'], env);
      expect(bad.code).toBe(3);
      expect(bad.stderr).toContain('TOPUP_BALANCE_REPORT_CRON: "0 */6 * * * nonsense" is not a cron expression');
    } finally {
      rmSync(etc, { recursive: true, force: true });
    }
  });

  it("hands the command exactly the environment file's values, the unit's TOPUP_HOME and credentials, and nothing of the caller's TOPUP_ settings", async () => {
    // The real dist/service-cli.js beside a cli.js that prints what it was given.
    const prog = mkdtempSync(join(tmpdir(), 'wrapper-prog-'));
    const etc = etcDir();
    try {
      copyFileSync(join(ROOT, 'dist', 'service-cli.js'), join(prog, 'service-cli.js'));
      symlinkSync(join(ROOT, 'dist', 'kernel'), join(prog, 'kernel'));
      writeFileSync(join(prog, 'package.json'), '{"type":"module"}');
      writeFileSync(
        join(prog, 'cli.js'),
        `import { readdirSync, readlinkSync } from 'node:fs';
const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => k.startsWith('TOPUP_') || k === 'NODE_ENV'));
const dir = process.env.CREDENTIALS_DIRECTORY;
const credentials = dir ? Object.fromEntries(readdirSync(dir).map((n) => [n, readlinkSync(dir + '/' + n)])) : null;
process.stdout.write(JSON.stringify({ env, credentials, argv: process.argv.slice(2) }));\n`,
      );
      writeFileSync(
        join(etc, 'topup.env'),
        [
          `TOPUP_BALANCE_REPORT_CRON=${SIX_HOURS}`,
          'TOPUP_LOW_BALANCE_CRON="*/10 * * * *"',
          "TOPUP_TELEGRAM_CHAT_ID='-100 $HOME'",
          'TOPUP_WEBHOOK_URL=https://hooks.example/a?x=1&y=$(id)',
          '; a comment',
          'NODE_ENV=staging',
          'TOPUP_NOTE=first \\',
          '  second',
        ].join('\n'),
      );
      const r = await wrapper(['status', '--json', 'a b', '*'], {
        TOPUP_SERVICE_HOME: '/srv/topup home',
        TOPUP_SERVICE_ENV_FILE: join(etc, 'topup.env'),
        TOPUP_SERVICE_CREDENTIALS: `topup-api-key:${join(etc, 'api-key')}`,
        TOPUP_SERVICE_PROGRAM: join(prog, 'service-cli.js'),
        TOPUP_API_KEY_FILE: '/caller/key',
        TOPUP_RATE_LIMITS: '1/1s',
        CREDENTIALS_DIRECTORY: '/caller/creds',
      });
      expect(r.code, r.stderr).toBe(0);
      const got = JSON.parse(r.stdout) as { env: Record<string, string>; credentials: Record<string, string>; argv: string[] };
      expect(got.argv).toEqual(['status', '--json', 'a b', '*']);
      expect(got.env).toEqual({
        TOPUP_HOME: '/srv/topup home',
        NODE_ENV: 'staging', // EnvironmentFile= wins over the unit's Environment=, as in systemd
        TOPUP_BALANCE_REPORT_CRON: SIX_HOURS,
        TOPUP_LOW_BALANCE_CRON: '*/10 * * * *',
        TOPUP_TELEGRAM_CHAT_ID: '-100 $HOME',
        TOPUP_WEBHOOK_URL: 'https://hooks.example/a?x=1&y=$(id)',
        TOPUP_NOTE: 'first   second',
      });
      expect(got.credentials).toEqual({ 'topup-api-key': join(etc, 'api-key') });
    } finally {
      rmSync(prog, { recursive: true, force: true });
      rmSync(etc, { recursive: true, force: true });
    }
  });

  it('stops with exit 3 naming the file when the environment file cannot be read; a leading "-" makes it optional, as in systemd', async () => {
    const home = tempHome('wrapper-');
    const missing = join(home.dir, 'no-such.env');
    const base = { TOPUP_SERVICE_HOME: home.dir, TOPUP_SERVICE_CREDENTIALS: '', TOPUP_SERVICE_PROGRAM: join(ROOT, 'dist', 'service-cli.js') };
    const r = await wrapper(['status'], { ...base, TOPUP_SERVICE_ENV_FILE: missing });
    expect(r.code).toBe(3);
    expect(r.stderr).toContain(`the service's environment file ${missing} cannot be read (ENOENT)`);
    const optional = await wrapper(['status'], { ...base, TOPUP_SERVICE_ENV_FILE: `-${missing}` });
    expect(optional.code, optional.stderr).toBe(0);
  });
});
